"""Whether the state header stays true as a tau-bench airline conversation moves on.

    python tests/bench/header_truth.py [CORPUS ...] [--json]

CORPUS: tau-bench trajectory files (a JSON list of records with ``traj``); by default the
dev airline file under the shared corpora. Each record is compiled in compact mode with
the ``travel`` schema, through ``compile_messages`` only, so the same script measures any
version of the compiler put first on ``PYTHONPATH``. It prints, with N:

- cancelled finals: records whose final ``active_reservation`` is a reservation the agent
  cancels (``cancel_reservation``) at or after the turn the header credits for it, so that
  nothing after the cancel re-activated it;
- retired user turns, and of those the requests still pending: a retired user turn with a
  slot (named in its retirement reason) that no later user turn says a value for and no
  later tool call of the agent sets or ends (the schema's non-reading actions). That is
  the retirement rule read from the transcript itself, so it counts what the compiler
  dropped though nothing of the same kind answered it.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DEV = Path("/work/shared/corpora/airline/gpt-4o-trajectories-dev.json")


def _compiler():
    """The compiler first on ``sys.path``: the tree under test, not necessarily this one."""
    import compiler
    from compiler.state.extract import extract_turn
    from compiler.state.schema import load_schema

    return compiler, extract_turn, load_schema("travel")


def _calls(message: dict) -> list[tuple[str, dict]]:
    found = []
    for call in message.get("tool_calls") or ():
        function = call.get("function") or {}
        try:
            arguments = json.loads(function.get("arguments") or "{}")
        except ValueError:
            arguments = {}
        found.append((function.get("name"), arguments if isinstance(arguments, dict) else {}))
    return found


def cancelled_final(messages: list[dict], telemetry: dict) -> str | None:
    """The final active reservation, when the agent cancels it at or after the turn the
    header credits for it; else None."""
    fact = telemetry["state"].get("active_reservation")
    if fact is None:
        return None
    for turn, message in enumerate(messages):
        for name, arguments in _calls(message):
            cancels = name == "cancel_reservation" and turn >= fact["turn"]
            if cancels and arguments.get("reservation_id") == fact["value"]:
                return fact["value"]
    return None


def pending_requests(messages, telemetry, extract_turn, schema) -> tuple[int, list[int]]:
    """Retired user turns, and those whose slots nothing of the same kind answered later."""
    acting: dict[str, set[str]] = {}  # tool → the slots its call sets or ends
    for slot in schema.slots:
        for action in slot.actions:
            if action.commits:
                acting.setdefault(action.tool, set()).add(slot.name)
    retired = [r for r in telemetry["retired_turns"] if r["role"] == "user"]
    pending = []
    for row in retired:
        turn = row["turn"]
        for slot in row["superseded_by"]:
            answered = False
            for later in range(turn + 1, len(messages)):
                message = messages[later]
                if message.get("role") == "user":
                    said = extract_turn(message.get("content") or "", later, schema)
                    answered = any(o.slot == slot for o in said)
                else:
                    answered = any(slot in acting.get(name, ()) for name, _ in _calls(message))
                if answered:
                    break
            if not answered:
                pending.append(turn)
                break
    return len(retired), pending


def measure(paths: list[Path]) -> dict:
    compiler, extract_turn, schema = _compiler()
    records, cancelled, retired, pending = 0, [], 0, []
    for path in paths:
        for index, record in enumerate(json.loads(path.read_text(encoding="utf-8"))):
            messages = record["traj"]
            telemetry = compiler.compile_messages(messages, schema="travel", cache=False)[1]
            ident = f"{path.name}#{index} task {record.get('task_id')} trial {record.get('trial')}"
            records += 1
            final = cancelled_final(messages, telemetry)
            if final is not None:
                cancelled.append(f"{ident}: {final}")
            count, still = pending_requests(messages, telemetry, extract_turn, schema)
            retired += count
            pending += [f"{ident} turn {turn}" for turn in still]
    return {
        "compiler": str(Path(compiler.__file__).parent),
        "records": records,
        "cancelled_finals": len(cancelled),
        "cancelled_final_records": cancelled,
        "retired_user_turns": retired,
        "pending_requests_retired": len(pending),
        "pending_request_turns": pending,
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", nargs="*", type=Path, default=[DEV])
    parser.add_argument("--json", action="store_true", help="print every figure as JSON")
    args = parser.parse_args(argv)
    figures = measure(args.corpus)
    if args.json:
        print(json.dumps(figures, indent=2))
        return 0
    n = figures["records"]
    print(f"compiler: {figures['compiler']}")
    print(f"final active_reservation cancelled later: {figures['cancelled_finals']} of {n}")
    for line in figures["cancelled_final_records"]:
        print(f"  {line}")
    retired, pending = figures["retired_user_turns"], figures["pending_requests_retired"]
    print(f"retired user turns: {retired} (in {n} records); requests still pending: {pending}")
    for line in figures["pending_request_turns"]:
        print(f"  {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The agent loop's bill: every transcript of a corpus replayed call by call, per strategy.

    python3 tests/bench/billed.py CORPUS [--schema S] [--limit N | --longest N] [--json]
                                        [--counter exact|chars] [--cached-rate R ...]
                                        [--no-peer] [--no-headroom]

For each transcript, the prompt before each assistant turn (``compiler.layout.replay``) is
compiled by each strategy, as an agent loop would send it, and priced against the prompt
the same strategy sent before it (``compiler.layout.billing``: OpenAI-style automatic
prefix caching at cached rates 0.1, 0.25 and 0.5; Anthropic-style breakpoints, read 0.1
and write 1.25, on the messages a strategy marks ``cache_control`` or, where it marks none,
on the last message, as automatic caching places it; and no caching). Printed per
strategy, summed over every call of every transcript and divided by the same sum for the
raw history:

- characters and tokens sent (the canonical rendering of ``render_message``);
- the bill under each price model;
- identifiers the agent goes on to use, still in the prompt compiled before the use
  (``labelling.bench.fidelity``, the measure ``tests/bench/measure.py`` prints), as kept /
  looked for, taken from the very prompts billed;
- whether the system prompt and the first user turn stay verbatim in every call
  (``labelling.bench.corpus.first_turn_kept``): transcripts where they do / transcripts.

Strategies: ``raw`` (the history as it is); this project's ``compact`` and
``cache_friendly`` modes (``compile_messages`` with the corpus's schema, incremental as a
loop calls it). ``compact`` is called as a loop calls it, told its provider's cached rate
(``compiler.loop``): each price model's column bills the calls compiled with that
model's rate (``cached_rate`` 0.1, 0.25 and 0.5 for ``openai@`` 0.1, 0.25 and 0.5; 0.1,
the read rate, for ``anthropic``), so that row is four replays; its characters and
tokens are those of the replay at 0.1, its identifiers and verbatim columns the worst
of the replays (``labelling.bench.loop_bill.loop_compact``). ``--one-off`` adds
``compact`` with no cached rate, a one-off compile per call, as it was measured before;
``--cached-rate R`` adds both modes compiled with that option at every column. The
peer ``contextgc`` 0.4.6 (compact mode, as ``labelling.bench.compare``
calls it); ``headroom-ai`` 0.42.0 (``from headroom import compress``, model ``gpt-4o``, its
defaults); and observation masking as SWE-agent's ``LastNObservations`` does it, keeping
the last 3 or 10 tool outputs and replacing every earlier one with ``Old environment
output: (n lines omitted)``. A tool output is a ``tool`` turn or a ``user`` turn a tool
wrote (``looks_like_machine_output``, the test fidelity uses); the first user turn, the
task, is never masked (SWE-agent never masks its instance template either).

headroom-ai does not install beside this project's pins, so it runs in its own virtualenv,
in a subprocess (``tests/bench/headroom_worker.py``), with ``HEADROOM_OFFLINE=1``:

    python3 -m venv /work/venvs/headroom
    /work/venvs/headroom/bin/pip install headroom-ai==0.42.0

(``HEADROOM_PYTHON`` names another interpreter.) Without it the row says why it is missing.

A transcript any strategy fails on is set aside for all of them, and reported. Memory
holds one transcript's prompts at a time, one strategy at a time.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(ROOT))

import compiler  # noqa: E402
from compiler import Meter  # noqa: E402
from labelling.bench.corpus import read_corpus  # noqa: E402
from labelling.bench.loop_bill import (  # noqa: E402
    Strategy,
    Totals,
    figures,
    ratio,
    run_one,
)
from labelling.bench.loop_bill import strategies as loop_strategies  # noqa: E402

SCHEMAS = {"airline": "travel", "retail": "logistics", "coding": "coding"}
HEADROOM_PYTHON = os.environ.get("HEADROOM_PYTHON", "/work/venvs/headroom/bin/python")


class Headroom:
    """headroom-ai's ``compress`` in its own interpreter, one JSON line per prompt."""

    def __init__(self, python: str):
        env = {**os.environ, "HEADROOM_OFFLINE": "1"}
        worker = Path(__file__).with_name("headroom_worker.py")
        # what it says on stderr, read and closed by ``close``
        self.log = tempfile.TemporaryFile(mode="w+")  # noqa: SIM115
        self.process = subprocess.Popen(
            [python, str(worker)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
            text=True,
            env=env,
        )
        ready = self.process.stdout.readline()
        if not ready:
            raise RuntimeError(f"the worker exited ({self.process.wait()}) before it was ready")
        self.version = json.loads(ready)["ready"]

    def __call__(self, messages: list[dict]) -> list[dict]:
        self.process.stdin.write(json.dumps(messages) + "\n")
        self.process.stdin.flush()
        answer = json.loads(self.process.stdout.readline())
        if "error" in answer:
            raise RuntimeError(answer["error"])
        return answer["messages"]

    def close(self) -> list[str]:
        """Stop the worker; the distinct lines of its log that warn of a failure or fallback."""
        self.process.stdin.close()
        self.process.wait(timeout=60)
        self.log.seek(0)
        found = dict.fromkeys(
            line.strip()[:240]
            for line in self.log
            if any(word in line.lower() for word in ("fail", "fall", "error", "offline"))
        )
        self.log.close()
        return [f"headroom-ai said: {line}" for line in list(found)[:5]]


def headroom() -> tuple[Strategy | None, Headroom | None, str]:
    if not Path(HEADROOM_PYTHON).exists():
        return None, None, f"headroom-ai: no interpreter at {HEADROOM_PYTHON} (see the docstring)"
    try:
        worker = Headroom(HEADROOM_PYTHON)
    except Exception as exc:
        return None, None, f"headroom-ai: could not start: {type(exc).__name__}: {exc}"
    note = f"headroom-ai {worker.version}: run offline (HEADROOM_OFFLINE=1) in {HEADROOM_PYTHON}"
    return Strategy("headroom", f"headroom-ai {worker.version}", worker), worker, note


# -- a corpus ----------------------------------------------------------------


def measure(path: Path, schema: str, args) -> dict:
    corpus = read_corpus(path, args.limit)
    if args.longest:
        corpus = sorted(corpus, key=lambda t: -t.chars)[: args.longest]
    strategies, notes = loop_strategies(
        schema,
        use_peer=not args.no_peer,
        cached_rates=tuple(args.cached_rate),
        one_off=args.one_off,
    )
    worker = None
    if not args.no_headroom:
        found, worker, note = headroom()
        notes.append(note)
        if found is not None:
            strategies.insert(-2, found)  # before the two masking strategies
    counter = Meter(args.counter).counter.name
    totals = {s.key: Totals() for s in strategies}
    errors, started = [], time.perf_counter()
    try:
        for transcript in corpus:
            done = {}
            for strategy in strategies:
                try:
                    done[strategy.key] = run_one(transcript.messages, strategy, args.counter)
                except Exception as exc:  # a crash is a finding, not a reason to stop
                    error = f"{type(exc).__name__}: {exc}"[:300]
                    errors.append(
                        {"transcript": transcript.ident, "strategy": strategy.key, "error": error}
                    )
            if len(done) == len(strategies):
                for key, found in done.items():
                    totals[key].add(found)
    finally:
        if worker is not None:
            notes += worker.close()
    kept = len(corpus) - len({e["transcript"] for e in errors})
    return {
        "corpus": str(path),
        "schema": schema,
        "counter": counter,
        "selection": f"{args.longest} longest"
        if args.longest
        else f"limit {args.limit}"
        if args.limit
        else "all",
        "transcripts": kept,
        "transcripts_read": len(corpus),
        "calls": totals["raw"].calls,
        "notes": notes,
        "errors": errors,
        "seconds": round(time.perf_counter() - started, 1),
        "raw_bill_vs_uncached": {
            name: ratio(cost, totals["raw"].tokens) for name, cost in totals["raw"].costs.items()
        },
        "strategies": {s.key: figures(s.label, totals[s.key], totals["raw"]) for s in strategies},
    }


# -- printing ----------------------------------------------------------------

COLUMNS = [
    "chars",
    "tokens",
    "openai@0.1",
    "openai@0.25",
    "openai@0.5",
    "anthropic",
    "ids kept",
    "system",
    "task",
]


def render(report: dict) -> str:
    lines = [
        f"{report['corpus']} ({report['selection']}): N = {report['transcripts']} transcripts,"
        f" {report['calls']} calls; schema {report['schema']}; tokens by {report['counter']}",
        "",
        "| strategy | " + " | ".join(COLUMNS) + " |",
        "|---" * (len(COLUMNS) + 1) + "|",
    ]
    for row in report["strategies"].values():
        ids = row["identifiers"]
        cells = [f"{row['chars_vs_raw']:.2f}", f"{row['tokens_vs_raw']:.2f}"]
        cells += [f"{row['billed_vs_raw'][m]:.2f}" for m in COLUMNS[2:6]]
        cells.append(f"{ids['rate']:.3f} ({ids['kept']}/{ids['wanted']})" if ids["wanted"] else "–")
        cells += [_verbatim(row["system_verbatim"]), _verbatim(row["first_user_verbatim"])]
        lines.append(f"| {row['label']} | " + " | ".join(cells) + " |")
    shares = ", ".join(f"{m} {r:.2f}" for m, r in report["raw_bill_vs_uncached"].items() if r)
    lines += ["", f"raw history's bill / its tokens sent uncached: {shares}", *report["notes"]]
    lines += [
        f"set aside: {e['transcript']} ({e['strategy']}): {e['error']}" for e in report["errors"]
    ]
    return "\n".join(lines)


def _verbatim(counts: list[int]) -> str:
    kept, seen = counts
    if not seen:
        return "–"
    return "yes" if kept == seen else f"no ({kept}/{seen})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--schema", help="shipped schema (default: from the corpus's folder)")
    parser.add_argument("--limit", type=int, help="the first N transcripts")
    parser.add_argument("--longest", type=int, help="the N longest transcripts (by characters)")
    parser.add_argument("--counter", default=_default_counter(), help="exact or chars")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument(
        "--cached-rate",
        type=float,
        action="append",
        default=[],
        help="also compile cache_friendly with this cached_rate option (repeatable)",
    )
    parser.add_argument(
        "--one-off",
        action="store_true",
        help="also compile compact with no cached_rate, as a one-off compile per call",
    )
    parser.add_argument("--no-peer", action="store_true")
    parser.add_argument("--no-headroom", action="store_true")
    args = parser.parse_args(argv)
    schema = args.schema or next(
        (s for folder, s in SCHEMAS.items() if folder in args.corpus.resolve().parts), None
    )
    if schema is None:
        parser.error("no --schema given and none known for this corpus's folder")
    report = measure(args.corpus, schema, args)
    print(json.dumps(report, indent=2) if args.json else render(report))
    return 0


def _default_counter() -> str:
    """Exact tokens where the ``exact`` extra is installed, chars/4 otherwise."""
    try:
        Meter("exact")
    except compiler.CompilerError:
        return "chars"
    return "exact"


if __name__ == "__main__":
    sys.exit(main())

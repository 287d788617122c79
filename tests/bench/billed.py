"""The agent loop's bill: every transcript of a corpus replayed call by call, per strategy.

    python3 tests/bench/billed.py CORPUS [--schema S] [--limit N | --longest N] [--json]
                                        [--counter exact|chars] [--no-peer] [--no-headroom]

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
  (``labelling.bench.compare.first_turn_kept``): transcripts where they do / transcripts.

Strategies: ``raw`` (the history as it is); this project's ``compact`` and
``cache_friendly`` modes (``compile_messages`` with the corpus's schema, incremental as a
loop calls it); the peer ``contextgc`` 0.4.6 (compact mode, as ``labelling.bench.compare``
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
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(ROOT))

import compiler  # noqa: E402
from compiler import content_text, looks_like_machine_output  # noqa: E402
from compiler.layout import Account, Meter, PriceModel, replay  # noqa: E402
from labelling.bench.compare import first_turn_kept, read_corpus  # noqa: E402
from labelling.bench.fidelity import identifier_recall, probes  # noqa: E402

MODELS = {
    "openai@0.1": PriceModel.openai(0.1),
    "openai@0.25": PriceModel.openai(0.25),
    "openai@0.5": PriceModel.openai(0.5),
    "anthropic": PriceModel.anthropic(breakpoints="auto"),
    "none": PriceModel.none(),
}
SCHEMAS = {"airline": "travel", "retail": "logistics", "coding": "coding"}
HEADROOM_PYTHON = os.environ.get("HEADROOM_PYTHON", "/work/venvs/headroom/bin/python")
PLACEHOLDER = "Old environment output: ({} lines omitted)"


@dataclass(frozen=True)
class Strategy:
    key: str
    label: str
    compile: Callable[[list[dict]], list[dict]] | None  # None: the history as it is


@dataclass
class Totals:
    """One strategy's sums over the transcripts kept."""

    chars: int = 0
    tokens: int = 0
    calls: int = 0
    costs: dict[str, float] = field(default_factory=lambda: dict.fromkeys(MODELS, 0.0))
    wanted: int = 0
    kept: int = 0
    system: list[int] = field(default_factory=lambda: [0, 0])  # kept in every call, seen
    first_user: list[int] = field(default_factory=lambda: [0, 0])

    def add(self, other: Totals) -> None:
        self.chars += other.chars
        self.tokens += other.tokens
        self.calls += other.calls
        for name in MODELS:
            self.costs[name] += other.costs[name]
        self.wanted += other.wanted
        self.kept += other.kept
        for mine, theirs in ((self.system, other.system), (self.first_user, other.first_user)):
            mine[0] += theirs[0]
            mine[1] += theirs[1]


# -- strategies --------------------------------------------------------------


def ours(mode: str, schema_name: str) -> Strategy:
    """A mode of this project; ``cache_friendly`` marks the end of its stable prefix, which
    the ``anthropic`` price model (breakpoints ``auto``) then caches up to."""
    schema = compiler.load_schema(schema_name)
    marks = mode == "cache_friendly"

    def run(messages):
        return compiler.compile_messages(messages, mode=mode, schema=schema, cache_marks=marks)[0]

    return Strategy(mode, f"this project, {mode}", run)


def peer(schema_name: str) -> Strategy | str:
    try:
        import contextgc
    except ImportError:
        return "contextgc: not installed (pip install contextgc==0.4.6)"
    schema = contextgc.load_schema(schema_name)

    def run(messages):
        return contextgc.compile_messages(messages, mode="compact", schema=schema)[0]

    from importlib.metadata import version

    return Strategy("contextgc", f"peer contextgc {version('contextgc')}", run)


def masking(keep: int) -> Strategy:
    """SWE-agent's LastNObservations with n = ``keep`` (polling 1).

    Example:
        >>> history = [{"role": "user", "content": "fix it"}]
        >>> history += [{"role": "tool", "content": f"out {i}"} for i in range(3)]
        >>> [m["content"] for m in masking(1).compile(history)]  # doctest: +NORMALIZE_WHITESPACE
        ['fix it', 'Old environment output: (1 lines omitted)',
         'Old environment output: (1 lines omitted)', 'out 2']
    """

    def run(messages):
        first_user = next((i for i, m in enumerate(messages) if m.get("role") == "user"), None)
        outputs = [i for i, m in enumerate(messages) if i != first_user and _tool_output(m)]
        for index in outputs[: max(0, len(outputs) - keep)]:
            lines = len(content_text(messages[index].get("content")).splitlines())
            messages[index] = {**messages[index], "content": PLACEHOLDER.format(lines)}
        return messages

    return Strategy(f"mask{keep}", f"observation masking, all but the last {keep}", run)


def _tool_output(message: dict) -> bool:
    role = message.get("role")
    text = content_text(message.get("content"))
    return role == "tool" or (role == "user" and looks_like_machine_output(text))


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


# -- one transcript ----------------------------------------------------------


def run_one(messages: list[dict], strategy: Strategy, counter: str) -> Totals:
    """One strategy over one transcript: every call measured, billed, probed."""
    meter = Meter(counter)
    accounts = {name: Account(model) for name, model in MODELS.items()}
    totals = Totals()
    turns = [i for i, m in enumerate(messages) if i and m.get("role") == "assistant"]
    wanted = {probe.turn for probe in probes(messages)}
    probed: dict[int, list[dict]] = {}  # only the prompts the identifier probes look into
    system_ok = first_user_ok = True
    for turn, prompt in zip(turns, replay(messages, strategy.compile), strict=True):
        measure = meter.measure(prompt)
        totals.chars += measure.chars
        totals.tokens += measure.tokens
        totals.calls += 1
        for name, account in accounts.items():
            totals.costs[name] += account.charge(measure).cost
        if turn in wanted:
            probed[turn] = prompt
        # the text each message shows, whether as a string or as parts (a cache mark)
        shown = [{"content": content_text(m.get("content"))} for m in prompt]
        system_ok = system_ok and first_turn_kept(messages, shown, "system") is not False
        first_user_ok = first_user_ok and first_turn_kept(messages, shown, "user") is not False
    recall = identifier_recall(lambda history: (probed[len(history)], {}), [messages])
    totals.wanted, totals.kept = recall.wanted, recall.kept
    if first_turn_kept(messages, messages, "system") is not None:
        totals.system = [int(system_ok), 1]
    if first_turn_kept(messages, messages, "user") is not None:
        totals.first_user = [int(first_user_ok), 1]
    return totals


# -- a corpus ----------------------------------------------------------------


def measure(path: Path, schema: str, args) -> dict:
    corpus = read_corpus(path, args.limit)
    if args.longest:
        corpus = sorted(corpus, key=lambda t: -t.chars)[: args.longest]
    strategies = [Strategy("raw", "raw history, no compile", None)]
    strategies += [ours("compact", schema), ours("cache_friendly", schema)]
    notes, worker = [], None
    if not args.no_peer:
        found = peer(schema)
        strategies.append(found) if isinstance(found, Strategy) else notes.append(found)
    if not args.no_headroom:
        found, worker, note = headroom()
        notes.append(note)
        if found is not None:
            strategies.append(found)
    strategies += [masking(3), masking(10)]
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
            name: _ratio(cost, totals["raw"].tokens) for name, cost in totals["raw"].costs.items()
        },
        "strategies": {s.key: _figures(s, totals[s.key], totals["raw"]) for s in strategies},
    }


def _figures(strategy: Strategy, mine: Totals, raw: Totals) -> dict:
    return {
        "label": strategy.label,
        "chars_vs_raw": _ratio(mine.chars, raw.chars),
        "tokens_vs_raw": _ratio(mine.tokens, raw.tokens),
        "billed_vs_raw": {name: _ratio(mine.costs[name], raw.costs[name]) for name in MODELS},
        "identifiers": {
            "wanted": mine.wanted,
            "kept": mine.kept,
            "rate": _ratio(mine.kept, mine.wanted),
        },
        "system_verbatim": mine.system,
        "first_user_verbatim": mine.first_user,
        "calls": mine.calls,
    }


def _ratio(part: float, whole: float) -> float | None:
    return round(part / whole, 4) if whole else None


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

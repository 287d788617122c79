"""The peak memory a compile allocates, as a multiple of its input, beside the peer's.

    python tests/bench/memory.py [--corpora DIR] [--corpus NAME ...] [--limit N] [--json]

For every transcript of every dev corpus (the list ``digest.py`` hashes), in both
modes, in one process:

- size: the JSON size of the message list, ``len(json.dumps(messages))``;
- peak: the most memory tracemalloc saw allocated during one ``compile_messages``
  call above what was allocated when the call began (the input is a fresh deep
  copy made before, so it is not counted; the output is, as it is alive when the
  call returns);
- ratio: peak / size;
- returned: the median of what is still allocated when the call returns, over size: the
  messages and telemetry it hands back (and, cached, the snapshot it keeps). A compile's
  peak cannot be below it.

Our compile is measured twice: ``cache=False`` (the whole compile, as the peer does
it: the headline figure) and ``cache=True`` (the default; the shared history cache is
emptied first, so the call is cold too, and the snapshot it stores counts). Each
transcript gets one unmeasured warm-up call per library first, so lazy imports and
compiled patterns are not counted as the transcript's own.

Per corpus, mode and library it prints N, the median, p95 and max ratio, and the
growth with length: the median ratio of the longest quarter of transcripts (by size)
over that of the shortest quarter (1.0 is flat). The figures above are steady state;
the first line also gives the process's cold first compile (the first transcript of the
first corpus, ours, ``cache=False``, before any warm-up), whose peak counts what a
compile builds once per process (lazily compiled patterns and tables).
"""

from __future__ import annotations

import argparse
import copy
import gc
import importlib
import json
import statistics
import sys
import tracemalloc
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
for folder in (ROOT, HERE):  # run as a script from anywhere
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

from digest import CORPORA, MODES  # noqa: E402

import compiler  # noqa: E402
from labelling.bench.corpus import read_corpus  # noqa: E402
from labelling.bench.stats import percentile  # noqa: E402

try:  # the peer, when installed (the bench extra)
    import contextgc
except ImportError:  # pragma: no cover - optional
    contextgc = None

# The ways a transcript is compiled: key → what the report calls it.
WAYS = {
    "ours": "ours, cache=False",
    "ours_cached": "ours, cache=True (cold)",
    "peer": "peer",
}


def clear_cache() -> None:
    """Empty the compiler's shared history cache, wherever the installed layout keeps it."""
    for name in ("compiler.incremental", "compiler.fold", "compiler.cache"):
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        histories = getattr(module, "HISTORIES", None)
        if histories is not None:
            histories.clear()
            return
    raise RuntimeError("no compiler history cache found to clear")


def json_size(messages: list) -> int:
    """The input's size, which peaks are divided by: characters of ``json.dumps(messages)``.

    Example:
        >>> json_size([{"role": "user", "content": "hi"}])
        35
    """
    return len(json.dumps(messages))


def peak_of(call: Callable[[list], object], messages: list) -> int:
    """Bytes allocated at the peak of ``call(copy of messages)``, above the start."""
    return peak_and_held(call, messages)[0]


def peak_and_held(call: Callable[[list], object], messages: list) -> tuple[int, int]:
    """Bytes allocated at the peak of ``call(copy of messages)``, and still allocated when
    it returns (what it hands back, and anything it keeps), each above the start."""
    given = copy.deepcopy(messages)
    gc.collect()
    started = not tracemalloc.is_tracing()
    if started:
        tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        result = call(given)
        held, peak = (figure - base for figure in tracemalloc.get_traced_memory())
        del result
    finally:
        if started:
            tracemalloc.stop()
    return peak, held


def compilers(schema_name: str, mode: str, peer: bool = True) -> dict[str, Callable]:
    """The calls to measure for one schema and mode, keyed as ``WAYS``."""
    ours_schema = compiler.load_schema(schema_name)

    def ours(messages):
        return compiler.compile_messages(messages, schema=ours_schema, mode=mode, cache=False)

    def ours_cached(messages):
        clear_cache()
        return compiler.compile_messages(messages, schema=ours_schema, mode=mode, cache=True)

    calls = {"ours": ours, "ours_cached": ours_cached}
    if peer and contextgc is not None:
        peer_schema = contextgc.load_schema(schema_name)

        def peer_call(messages):
            return contextgc.compile_messages(messages, mode=mode, schema=peer_schema)

        calls["peer"] = peer_call
    return calls


def measure_transcript(messages: list, calls: dict[str, Callable]) -> dict:
    """Size, and peak and ratio per way, for one transcript (warm-up call first)."""
    size = json_size(messages)
    row: dict = {"messages": len(messages), "size": size}
    for key, call in calls.items():
        call(copy.deepcopy(messages))  # warm-up: lazy imports, compiled patterns
        clear_cache()
        peak, held = peak_and_held(call, messages)
        clear_cache()
        row[key] = {
            "peak": peak,
            "ratio": round(peak / size, 3) if size else None,
            "held_ratio": round(held / size, 3) if size else None,
        }
    return row


def growth(rows: list[dict], key: str) -> float | None:
    """Median ratio of the longest quarter over the shortest quarter (by size).

    Example:
        >>> rows = [{"size": s, "w": {"ratio": r}} for s, r in [(1, 2), (2, 2), (3, 4), (4, 4)]]
        >>> growth(rows, "w")
        2.0
    """
    ordered = sorted(rows, key=lambda row: row["size"])
    quarter = max(1, len(ordered) // 4)
    short = statistics.median(row[key]["ratio"] for row in ordered[:quarter])
    long = statistics.median(row[key]["ratio"] for row in ordered[-quarter:])
    return round(long / short, 3) if short else None


def summary(rows: list[dict], key: str) -> dict:
    """N, median, p95 and max ratio and growth with length, for one way over a corpus."""
    ratios = [row[key]["ratio"] for row in rows if key in row]
    if not ratios:
        return {"n": 0}
    return {
        "n": len(ratios),
        "median": round(statistics.median(ratios), 2),
        "p95": round(percentile(ratios, 0.95), 2),
        "max": round(max(ratios), 2),
        "growth": growth([row for row in rows if key in row], key),
        "held_median": round(
            statistics.median(row[key]["held_ratio"] for row in rows if key in row), 2
        ),
        "max_peak_mb": round(max(row[key]["peak"] for row in rows if key in row) / 1e6, 2),
    }


def measure(corpora: Path, names: list[str], limit: int | None, peer: bool) -> dict:
    """Every figure, per corpus and mode: a summary per way, and the rows behind it."""
    tracemalloc.start()
    report: dict = {
        "compiler": compiler.__version__,
        "peer": getattr(contextgc, "__version__", "installed") if contextgc else None,
        "corpora": {},
    }
    try:
        report["first_compile"] = first_compile(corpora, names)
        for corpus in names:
            path = corpora / corpus
            if not path.exists():
                continue
            transcripts = read_corpus(path, limit)
            sizes = [json_size(t.messages) for t in transcripts]
            entry: dict = {"transcripts": len(transcripts), "json_mb": sum(sizes) / 1e6}
            for mode in MODES:
                calls = compilers(CORPORA[corpus], mode, peer)
                rows = [
                    {"transcript": t.ident, **measure_transcript(t.messages, calls)}
                    for t in transcripts
                ]
                entry[mode] = {
                    "summary": {key: summary(rows, key) for key in calls},
                    "rows": rows,
                }
            report["corpora"][corpus] = entry
    finally:
        tracemalloc.stop()
    return report


def first_compile(corpora: Path, names: list[str]) -> dict | None:
    """Size, peak and ratio of this process's first compile, before any warm-up: the
    first transcript of the first corpus there is, ours, ``cache=False``, compact."""
    for corpus in names:
        path = corpora / corpus
        if not path.exists():
            continue
        transcript = read_corpus(path, 1)[0]
        call = compilers(CORPORA[corpus], MODES[0], peer=False)["ours"]
        size = json_size(transcript.messages)
        peak = peak_of(call, transcript.messages)
        return {
            "corpus": corpus,
            "transcript": transcript.ident,
            "size": size,
            "peak": peak,
            "ratio": round(peak / size, 3) if size else None,
        }
    return None


def default_corpora() -> Path:
    """``shared/corpora`` beside the checkout, or beside the folder of worktrees."""
    for parent in ROOT.parents:
        if (parent / "shared" / "corpora").is_dir():
            return parent / "shared" / "corpora"
    return ROOT.parent / "shared" / "corpora"


def render(report: dict) -> str:
    lines = [
        "peak compile memory / JSON size of the input (tracemalloc); growth = median ratio "
        "of the longest quarter / the shortest quarter; returned = median of what is still "
        "allocated when the call returns / the input",
        f"{'corpus':40} {'mode':15} {'way':24} {'N':>4} {'median':>7} {'p95':>7} "
        f"{'max':>7} {'growth':>7} {'peak MB':>8} {'returned':>8}",
    ]
    first = report.get("first_compile")
    if first:
        lines.insert(
            1,
            f"cold first compile of the process (no warm-up): {first['corpus']}#"
            f"{first['transcript']}, ratio {first['ratio']:.2f}, peak "
            f"{first['peak'] / 1e6:.2f} MB (the rows below: each after one warm-up call)",
        )
    for corpus, entry in report["corpora"].items():
        for mode in MODES:
            for key, figures in entry[mode]["summary"].items():
                if not figures["n"]:
                    continue
                lines.append(
                    f"{corpus:40} {mode:15} {WAYS[key]:24} {figures['n']:>4} "
                    f"{figures['median']:>7.2f} {figures['p95']:>7.2f} {figures['max']:>7.2f} "
                    f"{figures['growth'] or 0:>7.2f} {figures['max_peak_mb']:>8.2f} "
                    f"{figures['held_median']:>8.2f}"
                )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpora", type=Path, default=default_corpora())
    parser.add_argument(
        "--corpus", action="append", choices=sorted(CORPORA), help="only these (repeatable)"
    )
    parser.add_argument("--limit", type=int, default=None, help="first N transcripts per corpus")
    parser.add_argument("--json", action="store_true", help="print every figure as JSON")
    parser.add_argument("--no-peer", action="store_true", help="measure ours only")
    args = parser.parse_args(argv)
    report = measure(args.corpora, args.corpus or list(CORPORA), args.limit, not args.no_peer)
    print(json.dumps(report, indent=1) if args.json else render(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())

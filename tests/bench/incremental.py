"""What an agent loop pays: every prefix of the longest real transcripts, called in order.

    python tests/bench/incremental.py ../shared/corpora/airline/gpt-4o-trajectories-dev.json \\
        --schema travel [--longest 5] [--repeats 3] [--mode compact|cache_friendly]
        [--cached-rate R]

A loop calls the compiler once per turn with the whole history so far. For the
``--longest`` transcripts of a corpus this replays exactly that, three ways in the
same process: incremental (a fresh ``HistoryCache`` per transcript, so one session
warms only itself), a full recompile of every prefix (``cache=False``), and the
peer ``contextgc`` when it is installed. It prints per way the total time of a
session (summed over its calls) and the p50 of the last 10% of calls (the late
calls, where the history is longest), plus the memory one cached conversation
holds (tracemalloc, after its last call). Timing is best of ``--repeats`` per call.
Before timing it checks that every incremental result equals the full compile.
"""

from __future__ import annotations

import argparse
import copy
import gc
import json
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import compiler  # noqa: E402
from compiler.engine import _finish  # noqa: E402
from compiler.incremental import HistoryCache  # noqa: E402
from compiler.read.formats import formats_many  # noqa: E402
from compiler.read.messages import message_to_dict  # noqa: E402
from compiler.types import Options  # noqa: E402

try:  # the peer, when installed (the bench extra)
    import contextgc
except ImportError:  # pragma: no cover - optional
    contextgc = None


def longest(path: Path, count: int) -> list[tuple[str, list[dict]]]:
    files = sorted(path.iterdir()) if path.is_dir() else [path]
    found = []
    for file in files:
        for name, parsed in formats_many(file.read_text(encoding="utf-8")):
            found.append((name, [message_to_dict(m) for m in parsed.messages]))
    found.sort(key=lambda pair: (-len(pair[1]), pair[0]))
    return found[:count]


def session_incremental(history, options) -> list[float]:
    cache = HistoryCache()
    times = []
    for end in range(1, len(history) + 1):
        prefix = history[:end]
        started = time.perf_counter()
        result, warnings = cache.compile(prefix, options, options.cache_key)
        _finish(result, warnings, started, None)
        times.append(time.perf_counter() - started)
    return times


def session_full(history, schema, mode, cached_rate=None) -> list[float]:
    times = []
    for end in range(1, len(history) + 1):
        started = time.perf_counter()
        compiler.compile_messages(
            history[:end], schema=schema, mode=mode, cache=False, cached_rate=cached_rate
        )
        times.append(time.perf_counter() - started)
    return times


def session_peer(history, schema) -> list[float]:
    times = []
    for end in range(1, len(history) + 1):
        prefix = copy.deepcopy(history[:end])
        started = time.perf_counter()
        contextgc.compile_messages(prefix, mode="compact", schema=schema)
        times.append(time.perf_counter() - started)
    return times


def best_of(run, repeats: int) -> list[float]:
    """Per call, the best of ``repeats`` sessions (GC off while timing)."""
    best = None
    for _ in range(repeats):
        gc.collect()
        gc.disable()
        try:
            times = run()
        finally:
            gc.enable()
        best = times if best is None else [min(a, b) for a, b in zip(best, times, strict=True)]
    return best


def late_p50(times: list[float]) -> float:
    tail = times[-max(1, len(times) // 10) :]
    return statistics.median(tail)


def check_equal(history, options, schema) -> None:
    cache = HistoryCache()
    for end in range(1, len(history) + 1):
        result, warnings = cache.compile(history[:end], options, options.cache_key)
        inc = _finish(result, warnings, 0.0, None)
        full = compiler.compile_messages(
            history[:end],
            schema=schema,
            mode=options.mode,
            cache=False,
            cached_rate=options.cached_rate,
        )
        for out in (inc, full):
            out[1].pop("compile_time_ms")
        if json.dumps(inc) != json.dumps(full):
            raise SystemExit(f"incremental differs from full at call {end}")


def memory_per_conversation(history, options) -> int:
    cache = HistoryCache()
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    for end in range(1, len(history) + 1):
        cache.compile(history[:end], options, options.cache_key)
    after = tracemalloc.take_snapshot()
    tracemalloc.stop()
    held = sum(stat.size_diff for stat in after.compare_to(before, "filename"))
    assert cache.stats()["histories"] == 1, "one conversation keeps one snapshot: its tip"
    return held


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--schema", required=True)
    parser.add_argument("--longest", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--mode", default="compact", help="this project's mode (the peer's: compact)"
    )
    parser.add_argument(
        "--cached-rate", type=float, help="the cached_rate option (compact: compiled for a loop)"
    )
    args = parser.parse_args(argv)
    schema = compiler.load_schema(args.schema)
    options = Options.build(schema=schema, mode=args.mode, cached_rate=args.cached_rate)
    peer_schema = contextgc.load_schema(args.schema) if contextgc else None
    sessions = longest(args.corpus, args.longest)
    rows = {"incremental": [], "full": [], "peer": []}
    print(
        f"corpus {args.corpus}  schema {args.schema}  mode {args.mode}"
        f"  cached_rate {args.cached_rate}  sessions {len(sessions)}"
    )
    for name, history in sessions:
        check_equal(history, options, schema)
        rows["incremental"].append(
            best_of(lambda h=history: session_incremental(h, options), args.repeats)
        )
        rows["full"].append(
            best_of(
                lambda h=history: session_full(h, schema, args.mode, args.cached_rate),
                args.repeats,
            )
        )
        if contextgc:
            rows["peer"].append(
                best_of(lambda h=history: session_peer(h, peer_schema), args.repeats)
            )
        memory = memory_per_conversation(history, options)
        print(f"  {name}: {len(history)} calls, cached conversation holds {memory / 1024:.0f} KiB")
    report(rows, sessions)
    return 0


def report(rows, sessions) -> None:
    calls = sum(len(h) for _, h in sessions)
    print(
        f"\n{'way':12} {'session total ms (mean)':>24} {'late-call p50 ms':>18}   N calls={calls}"
    )
    totals = {}
    for way, per_session in rows.items():
        if not per_session:
            continue
        total = statistics.mean(sum(times) for times in per_session) * 1000
        late = statistics.median([t for times in per_session for t in late_tail(times)]) * 1000
        totals[way] = total
        print(f"{way:12} {total:24.2f} {late:18.3f}")
    if "peer" in totals:
        ratio = totals["peer"] / totals["incremental"]
        print(f"\nsession cost: peer / incremental = {ratio:.1f}x (target >= 10x)")
    ratio_full = totals["full"] / totals["incremental"]
    print(f"session cost: full recompile / incremental = {ratio_full:.1f}x")


def late_tail(times: list[float]) -> list[float]:
    return times[-max(1, len(times) // 10) :]


if __name__ == "__main__":
    raise SystemExit(main())

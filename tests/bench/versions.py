"""Compare the cold compile speed of two source trees on the dev corpora, in one command.

    python tests/bench/versions.py --before /work/baseline/tree [--after .] \\
        [--corpus NAME ...] [--rounds K] [--repeats R] [--mode compact]

Each tree is measured in its own subprocess that imports ``compiler`` from that
tree only (it checks where the package came from). The subprocesses alternate:
per round and corpus, one for each tree, the order swapped every round, so that
noise from a shared machine falls on both alike. Every process compiles the very
same message lists (read once here and handed over as JSON), each transcript once
untimed, then ``R`` timed repeats with ``cache=False``, a fresh deep copy per call
made outside the timer, and GC off while timing. ``--clock cpu`` times the worker's
own CPU time (``time.process_time``) instead of wall time: on a machine other work
shares, wall time counts the waits for a core, CPU time far less so. A transcript's time is its best
over all rounds and repeats; MB/s is the corpus's characters of input (10^6, as
``measure.py`` counts them) over the summed best times. The change is after over
before, less one; the per-round range shows how noisy the machine was.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]


def worker(tree: Path, data: Path, repeats: int, mode: str, clock: str = "wall") -> dict:
    """Best-of-``repeats`` seconds per transcript of ``data``, compiled by ``tree``'s compiler.

    Runs in a subprocess whose ``sys.path`` starts with ``tree``.
    """
    import copy
    import gc
    import time

    import compiler

    now = time.process_time if clock == "cpu" else time.perf_counter
    where = Path(compiler.__file__).resolve()
    if not where.is_relative_to(tree.resolve()):
        raise RuntimeError(f"compiler imported from {where}, not from {tree}")
    corpus = json.loads(data.read_text())
    schema = compiler.load_schema(corpus["schema"])
    transcripts = corpus["transcripts"]
    for messages in transcripts:  # untimed: lazy imports, compiled patterns
        compiler.compile_messages(copy.deepcopy(messages), schema=schema, mode=mode, cache=False)
    best = [float("inf")] * len(transcripts)
    gc.collect()
    gc.disable()
    try:
        for _ in range(repeats):
            for index, messages in enumerate(transcripts):
                given = copy.deepcopy(messages)
                started = now()
                compiler.compile_messages(given, schema=schema, mode=mode, cache=False)
                best[index] = min(best[index], now() - started)
            gc.collect()
    finally:
        gc.enable()
    return {"compiler": str(where.parent), "seconds": best}


def run_worker(tree: Path, data: Path, repeats: int, mode: str, clock: str = "wall") -> list[float]:
    """One subprocess measuring ``tree`` on ``data``; its best seconds per transcript."""
    env = {**os.environ, "PYTHONPATH": str(tree.resolve())}
    args = [sys.executable, str(Path(__file__).resolve()), "--worker", str(tree.resolve())]
    args += ["--data", str(data), "--repeats", str(repeats), "--mode", mode, "--clock", clock]
    done = subprocess.run(args, env=env, capture_output=True, text=True, check=False)
    if done.returncode:
        raise RuntimeError(f"worker for {tree} failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout)["seconds"]


def compare(
    before: Path,
    after: Path,
    corpora: Path,
    names: list[str],
    rounds: int,
    repeats: int,
    mode: str,
    clock: str = "wall",
) -> dict:
    """MB/s before and after, and the change, per corpus."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from digest import CORPORA

    from labelling.bench.corpus import read_corpus

    report: dict = {
        "mode": mode,
        "clock": clock,
        "rounds": rounds,
        "repeats": repeats,
        "corpora": {},
    }
    with tempfile.TemporaryDirectory() as folder:
        files = {}
        for name in names:
            if not (corpora / name).exists():
                continue
            transcripts = read_corpus(corpora / name)
            files[name] = Path(folder) / f"{len(files)}.json"
            payload = {"schema": CORPORA[name], "transcripts": [t.messages for t in transcripts]}
            files[name].write_text(json.dumps(payload))
            report["corpora"][name] = {
                "n": len(transcripts),
                "chars": sum(t.chars for t in transcripts),
                "rounds": [],
            }
        trees = {"before": before, "after": after}
        for round_ in range(rounds):
            order = ("before", "after") if round_ % 2 == 0 else ("after", "before")
            for name, data in files.items():
                times = {
                    side: run_worker(trees[side], data, repeats, mode, clock) for side in order
                }
                report["corpora"][name]["rounds"].append(times)
    for entry in report["corpora"].values():
        entry.update(figures(entry))
    return report


def figures(entry: dict) -> dict:
    """MB/s per side from the best time per transcript over every round, the change in
    percent, and the range of the change over the rounds taken one at a time.

    Example:
        >>> entry = {"chars": 2_000_000, "rounds": [
        ...     {"before": [1.0, 1.0], "after": [0.5, 1.0]},
        ...     {"before": [0.8, 1.2], "after": [1.5, 1.0]}]}
        >>> found = figures(entry)
        >>> found["before_mb_s"], found["after_mb_s"], found["change_pct"]
        (1.111, 1.333, 20.0)
        >>> found["round_change_pct"]
        [-20.0, 33.3]
    """
    mb = entry["chars"] / 1e6

    def mb_s(rounds, side):
        best = [min(times) for times in zip(*(r[side] for r in rounds), strict=True)]
        return mb / sum(best)

    before, after = mb_s(entry["rounds"], "before"), mb_s(entry["rounds"], "after")
    per_round = [mb_s([r], "after") / mb_s([r], "before") - 1 for r in entry["rounds"]]
    return {
        "before_mb_s": round(before, 3),
        "after_mb_s": round(after, 3),
        "change_pct": round((after / before - 1) * 100, 1),
        "round_change_pct": [round(min(per_round) * 100, 1), round(max(per_round) * 100, 1)],
    }


def render(report: dict) -> str:
    lines = [
        f"cold compile MB/s ({report.get('clock', 'wall')} time), mode {report['mode']}, "
        f"best of {report['rounds']} rounds × {report['repeats']} repeats per transcript",
        f"{'corpus':40} {'N':>4} {'before':>8} {'after':>8} {'change':>8}  per round",
    ]
    for name, entry in report["corpora"].items():
        low, high = entry["round_change_pct"]
        lines.append(
            f"{name:40} {entry['n']:>4} {entry['before_mb_s']:>8.3f} {entry['after_mb_s']:>8.3f} "
            f"{entry['change_pct']:>+7.1f}%  {low:+.1f}% … {high:+.1f}%"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", type=Path, help="the source tree to compare against")
    parser.add_argument("--after", type=Path, default=ROOT, help="the changed tree (this one)")
    parser.add_argument("--corpora", type=Path, default=None)
    parser.add_argument("--corpus", action="append", help="only these (repeatable)")
    parser.add_argument("--rounds", type=int, default=4, help="alternations of the two trees")
    parser.add_argument("--repeats", type=int, default=3, help="timed repeats per process")
    parser.add_argument("--mode", default="compact", choices=("compact", "cache_friendly"))
    parser.add_argument("--clock", default="wall", choices=("wall", "cpu"), help="what to time")
    parser.add_argument("--json", action="store_true", help="print every figure as JSON")
    parser.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--data", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args.worker, args.data, args.repeats, args.mode, args.clock)))
        return 0
    if args.before is None:
        parser.error("--before is required")
    for tree in (args.before, args.after):
        if not (tree / "compiler" / "__init__.py").exists():
            parser.error(f"no compiler package in {tree}")
    sys.path.insert(0, str(HERE))
    from memory import CORPORA, default_corpora

    corpora = args.corpora or default_corpora()
    names = args.corpus or list(CORPORA)
    report = compare(
        args.before, args.after, corpora, names, args.rounds, args.repeats, args.mode, args.clock
    )
    print(json.dumps(report, indent=1) if args.json else render(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())

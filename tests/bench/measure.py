"""Measure our compiler, and the peer beside it, on a corpus.

    python tests/bench/measure.py CORPUS --schema S [--repeats R] [--limit N] [--json] [--no-peer]

CORPUS is one file in any format ``formats_many`` reads, or a directory whose
files are all read (sorted by name). Both libraries get the same list of
message dicts (``message_to_dict`` of what we parsed), in compact mode, with
the shipped schema of the same name, in the same process.

How the figures are made, so they can be compared:

- Tokens: one estimator for both libraries' input and output, our
  ``message_tokens`` with the chars/4 estimator: ``max(1, len // 4)`` per
  message, over its content plus any tool-call names and arguments. Each
  library's own telemetry counts differently (the peer ignores tool calls),
  so its self-reported totals are kept in the JSON only, as a cross-check.
- Token reduction: Σ(raw − compiled) / Σraw over the corpus. A context that
  grew counts against its library. Also printed: the same with saved ≥ 0 per
  transcript (as telemetry reports it), with system messages left out, and
  with system messages and the first user turn left out (the conversation
  alone, whatever either library made of the policy and the task).
- Fidelity: whether the first system turn (the agent's policy) and the first
  user turn (often the task) survive verbatim. A library can buy reduction by
  cutting them; these rows show when it does.
- Identifiers used later (``labelling/bench/fidelity.py``): at every assistant turn
  that uses an identifier (a word with a digit, 4+ characters: order, item and flight
  numbers, card endings) it can only have learned from an earlier tool payload, the
  history before that turn is compiled, as an agent loop would, and the identifier is
  looked for in the output. Reduction that costs the agent what it goes on to use shows
  here.
- Timing: one untimed warm-up call per library and transcript (it also
  produces every non-timing figure), then R repeats. In each repeat every
  transcript is compiled by both libraries back to back, the order swapped
  on odd repeats, so machine noise hits both alike. Each call gets a fresh
  deep copy (made outside the timer), GC is off during timing and collected
  between repeats. A transcript's time is its best of R; p50/p95 are
  nearest-rank over transcripts; MB/s is characters of input (10^6) over the
  summed best times.
- Gold (tau-bench airline records with ``info.task.actions``): per
  transcript and per slot the gold actions give a value for, the FINAL
  register value is a match (equal to any gold value after normalising case,
  separators and dates), a mismatch, or missing.

Everything printed is deterministic except the timing figures. This file is the
command line; the measurement itself is ``labelling/bench/`` (``compare``: the
libraries, timing and figures; ``gold``: the gold scorer; ``stats``; ``render``),
which the site's corpus report (``labelling.measurement.measure``) runs too.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(ROOT))

# The measurement lives in labelling.bench (plain Python, no Django); these names stay
# importable from here for scripts that ``import measure``.
from labelling.bench.compare import (  # noqa: E402
    PEER_EXPECTED,
    PEER_PACKAGE,
    TARGET_SPEEDUP,
    Library,
    Outcome,
    library_figures,
    measure,
    our_library,
    peer_library,
    time_all,
    warm_all,
    warm_up,
)
from labelling.bench.corpus import (  # noqa: E402
    ESTIMATOR,
    ESTIMATOR_NOTE,
    Transcript,
    first_turn_kept,
    read_corpus,
)
from labelling.bench.gold import (  # noqa: E402
    GOLD_ARGS,
    GOLD_FLIGHT_ARGS,
    GOLD_SLOTS,
    VERDICTS,
    gold_figures,
    gold_values,
    iso_date,
    normalise,
    verdict,
)
from labelling.bench.render import render  # noqa: E402
from labelling.bench.stats import percentile  # noqa: E402

__all__ = [
    "ESTIMATOR",
    "ESTIMATOR_NOTE",
    "GOLD_ARGS",
    "GOLD_FLIGHT_ARGS",
    "GOLD_SLOTS",
    "PEER_EXPECTED",
    "PEER_PACKAGE",
    "TARGET_SPEEDUP",
    "VERDICTS",
    "Library",
    "Outcome",
    "Path",
    "Transcript",
    "first_turn_kept",
    "gold_figures",
    "gold_values",
    "iso_date",
    "library_figures",
    "main",
    "measure",
    "normalise",
    "our_library",
    "peer_library",
    "percentile",
    "read_corpus",
    "render",
    "time_all",
    "verdict",
    "warm_all",
    "warm_up",
]


# -- command line ------------------------------------------------------------


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", type=Path, help="a corpus file, or a directory of them")
    parser.add_argument("--schema", required=True, help="schema name, for both libraries")
    parser.add_argument("--repeats", type=_positive, default=5, help="timed repeats (best of)")
    parser.add_argument("--limit", type=_positive, default=None, help="first N transcripts only")
    parser.add_argument("--json", action="store_true", help="print every figure as JSON")
    parser.add_argument("--no-peer", action="store_true", help="measure ours only")
    args = parser.parse_args(argv)
    if not args.corpus.exists():
        parser.error(f"no such corpus: {args.corpus}")
    report = measure(args.corpus, args.schema, args.repeats, args.limit, not args.no_peer)
    print(json.dumps(report, indent=2, ensure_ascii=False) if args.json else render(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())

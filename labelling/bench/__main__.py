"""The bench's command line: ``capture`` a model's declarations, ``shadow``-replay them.

    # the endpoint comes from the environment, never an argument
    export CONTEXTGC_CAPTURE_BASE_URL=http://localhost:11434/v1
    export CONTEXTGC_CAPTURE_MODEL=qwen2.5:14b
    python -m labelling.bench capture --transcript corpus.txt --schema coding --out cap.json
    python -m labelling.bench capture --verify --out cap.json
    python -m labelling.bench shadow --corpus corpus.txt --captures cap.json

Exit status: 0 done; 1 refused or stopped (the reason is on stderr); 2 a usage error.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from labelling.bench.capture import CaptureStopped, run_capture
from labelling.bench.capture_bill import CACHED_RATE
from labelling.bench.capture_files import CaptureError, load_capture, verify
from labelling.bench.capture_plan import plan, plan_bill
from labelling.bench.chat_client import Endpoint, EndpointError
from labelling.bench.shadow import Records, ShadowRefused, shadow
from labelling.bench.shadow_render import render


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        return args.run(args)
    except (CaptureError, CaptureStopped, EndpointError, ShadowRefused, OSError) as error:
        print(f"{args.command}: {error}", file=sys.stderr)
        return 1


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(
        prog="python -m labelling.bench", description=__doc__.split("\n")[0]
    )
    commands = top.add_subparsers(dest="command", required=True)

    capture = commands.add_parser(
        "capture",
        help="ask a model for the state block of every assistant turn of a corpus",
        description="Endpoint, model and key come from CONTEXTGC_CAPTURE_BASE_URL, "
        "CONTEXTGC_CAPTURE_MODEL and CONTEXTGC_CAPTURE_API_KEY.",
    )
    capture.add_argument("--out", type=Path, required=True, help="the capture file")
    capture.add_argument("--transcript", type=Path, help="the corpus file to replay")
    capture.add_argument("--schema", help="a shipped schema name or a schema file")
    capture.add_argument("--limit", type=_positive, help="only the first N transcripts")
    capture.add_argument(
        "--cached-rate",
        type=float,
        default=CACHED_RATE,
        help=f"price of a cached token in the bill, as a share of a sent one ({CACHED_RATE})",
    )
    capture.add_argument(
        "--verify", action="store_true", help="refuse a capture that is no measurement"
    )
    capture.add_argument(
        "--dry-run",
        action="store_true",
        help="print the turns it would ask and the loop's bill, and call nothing",
    )
    capture.set_defaults(run=_capture)

    replay = commands.add_parser(
        "shadow", help="replay captures against the corpus they were made over"
    )
    replay.add_argument("--corpus", type=Path, required=True, help="the corpus file captured")
    replay.add_argument("--captures", type=Path, nargs="+", required=True)
    replay.add_argument("--records", type=Path, help="corpora folder with <domain>/db/")
    replay.add_argument("--domain", help="airline or retail (with --records)")
    replay.add_argument("--json", action="store_true", help="print the figures as JSON")
    replay.set_defaults(run=_shadow)
    return top


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be 1 or more")
    return value


def _capture(args) -> int:
    if args.verify:
        capture = load_capture(args.out)
        problems = verify(capture)
        if problems:
            print(f"capture --verify: {args.out} is refused:", file=sys.stderr)
            for problem in problems:
                print(f"  - {problem}", file=sys.stderr)
            return 1
        print(f"{args.out}: verified ({capture.model} at {', '.join(capture.endpoints)})")
        return 0
    if args.transcript is None or args.schema is None:
        print("capture: --transcript and --schema are needed to capture", file=sys.stderr)
        return 2
    if args.dry_run:
        the_plan = plan(args.transcript.read_text(encoding="utf-8"), args.schema, args.limit)
        bill, _ = plan_bill(the_plan, args.cached_rate)
        print(
            f"{len(the_plan.asks)} turns of {len(the_plan.transcripts)} transcripts to ask, "
            f"schema {the_plan.schema}"
        )
        print(_bill_line(bill))
        return 0
    endpoint = Endpoint.from_env()
    path = run_capture(
        args.transcript,
        args.schema,
        args.out,
        endpoint,
        limit=args.limit,
        cached_rate=args.cached_rate,
        say=print,
    )
    data = json.loads(path.read_text(encoding="utf-8"))
    print(f"{path}: {len(data['turns'])} of {data['planned_turns']} turns")
    print(_bill_line(data["bill"]))
    return 0


def _bill_line(bill: dict) -> str:
    compiled, raw = bill["compiled"], bill["raw"]
    return (
        f"bill ({bill['estimate']}, cached tokens at {bill['cached_rate']}): "
        f"{compiled['sent_tokens']} tokens sent, {compiled['billed_tokens']} billed; "
        f"the raw history {raw['sent_tokens']} sent, {raw['billed_tokens']} billed; "
        f"{bill['sent_vs_raw']}x raw sent, {bill['billed_vs_raw']}x raw billed"
    )


def _shadow(args) -> int:
    if (args.records is None) != (args.domain is None):
        print("shadow: --records and --domain go together", file=sys.stderr)
        return 2
    records = Records(args.records, args.domain) if args.records else None
    text = args.corpus.read_text(encoding="utf-8")
    results = [shadow(load_capture(path), text, records) for path in args.captures]
    if args.json:
        print(json.dumps(results, indent=1, ensure_ascii=False))
    else:
        print("\n\n".join(render(figures) for figures in results))
    return 0


if __name__ == "__main__":
    sys.exit(main())

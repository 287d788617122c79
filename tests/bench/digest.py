"""Hash every compile of the dev corpora, to show a change left the output as it was.

    python tests/bench/digest.py [--corpora DIR] [--out FILE] [--check FILE]

Each transcript of each corpus is compiled in both modes with the schema of its
domain; the compiled messages and the telemetry (less ``compile_time_ms``, the one
figure that is not deterministic) are hashed. ``--out`` writes the hashes as JSON;
``--check`` compares against such a file and names every transcript that differs.
The exit status is 1 when a check finds a difference.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(ROOT))

import compiler  # noqa: E402
from labelling.bench.corpus import read_corpus  # noqa: E402

# corpus (relative to the corpora folder) → the schema of its domain
CORPORA = {
    "airline/gpt-4o-trajectories-dev.json": "travel",
    "airline/few_shot.jsonl": "travel",
    "retail/few_shot-dev.jsonl": "logistics",
    "coding/nebius-sample.txt": "coding",
    "coding/swe-agent": "coding",
}
MODES = ("compact", "cache_friendly")


def digest(messages: list, schema: str, mode: str) -> str:
    """The hash of one compile's messages and telemetry, less its timing."""
    out, tel = compiler.compile_messages(messages, schema=schema, mode=mode, cache=False)
    tel = {key: value for key, value in tel.items() if key != "compile_time_ms"}
    text = json.dumps([out, tel], sort_keys=True, ensure_ascii=False, default=repr)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def digests(corpora: Path) -> dict[str, str]:
    """``corpus#transcript/mode`` → hash, for every transcript the corpora folder holds."""
    found: dict[str, str] = {}
    for corpus, schema in CORPORA.items():
        path = corpora / corpus
        if not path.exists():
            continue
        for transcript in read_corpus(path):
            for mode in MODES:
                found[f"{corpus}#{transcript.ident}/{mode}"] = digest(
                    transcript.messages, schema, mode
                )
    return found


def default_corpora() -> Path:
    """``shared/corpora`` beside this checkout or any folder above it (a worktree may sit
    deeper than the main checkout)."""
    for folder in ROOT.parents:
        if (folder / "shared" / "corpora").is_dir():
            return folder / "shared" / "corpora"
    return ROOT.parent / "shared" / "corpora"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpora", type=Path, default=default_corpora())
    parser.add_argument("--out", type=Path, help="write the hashes here as JSON")
    parser.add_argument("--check", type=Path, help="compare with hashes written before")
    args = parser.parse_args(argv)
    if not args.corpora.is_dir():
        parser.error(f"no corpora folder at {args.corpora}: pass --corpora")
    found = digests(args.corpora)
    if args.out:
        args.out.write_text(json.dumps(found, indent=1, sort_keys=True) + "\n")
    print(f"{len(found)} compiles hashed ({len(found) // len(MODES)} transcripts × 2 modes)")
    if not args.check:
        return 0
    before = json.loads(args.check.read_text())
    differ = sorted(k for k in before.keys() | found.keys() if before.get(k) != found.get(k))
    for key in differ:
        print(f"  differs: {key}")
    print(f"{len(differ)} of {len(before.keys() | found.keys())} differ")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())

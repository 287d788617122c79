"""Re-derive every shipped schema's value contracts from its patterns.

    python tests/bench/derive_contracts.py                         # check only
    python tests/bench/derive_contracts.py --write                 # store them in the schemas
    python tests/bench/derive_contracts.py --values /work/shared/corpora
        # also record every value the read path produces on the corpora, as the
        # fixture tests/fixtures/read_path_values.json that proves contracts never
        # reject one of them

A contract is the union of the slot's capture groups (``compiler.state.contracts``).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from compiler.read.formats import formats_many  # noqa: E402
from compiler.state.classify import classify  # noqa: E402
from compiler.state.contracts import derive_contract  # noqa: E402
from compiler.state.extract import extract  # noqa: E402
from compiler.state.schema import SCHEMA_DIR, list_schemas, load_schema  # noqa: E402
from tests.bench.fit_schemas import corpus_files  # noqa: E402

VALUES = ROOT / "tests" / "fixtures" / "read_path_values.json"


def derive(name: str, *, write: bool) -> list[str]:
    """Slots whose stored contract differs from the derived one (written if asked)."""
    path = SCHEMA_DIR / f"{name}.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    schema = load_schema(name)  # the patterns as compiled, fragments expanded
    stale = []
    for slot, spec in data["slots"].items():
        derived = derive_contract([p.pattern for p in schema.slot(slot).patterns])
        if spec.get("contract") != derived:
            stale.append(slot)
            spec["contract"] = derived
    if write and stale:
        path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return stale


def read_path_values(corpus_dir: Path) -> dict:
    """Every distinct value each shipped slot's read path produced on the corpora."""
    out: dict[str, dict[str, list[str]]] = {}
    for name in list_schemas():
        schema = load_schema(name)
        seen: dict[str, set[str]] = {slot: set() for slot in schema.slot_names}
        for path in corpus_files(corpus_dir, name):
            for _, parsed in formats_many(path.read_text(encoding="utf-8")):
                kinds = classify(parsed.messages)
                for obs in extract(parsed.messages, kinds, schema):
                    seen[obs.slot].add(obs.value)
        out[name] = {slot: sorted(values) for slot, values in sorted(seen.items())}
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--values", type=Path, help="corpus directory to record read-path values")
    args = parser.parse_args(argv)
    stale = {name: derive(name, write=args.write) for name in list_schemas()}
    for name, slots in stale.items():
        state = "re-derived" if args.write else "stale"
        print(f"{name}: {', '.join(slots) + ' ' + state if slots else 'contracts current'}")
    if args.values:
        values = read_path_values(args.values)
        provenance = (
            "Distinct values the read path produced on the corpora in ../shared/corpora "
            "(MIT-licensed; see its README), recorded by tests/bench/derive_contracts.py."
        )
        body = {"_provenance": provenance, **values}
        VALUES.write_text(json.dumps(body, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"wrote {VALUES.relative_to(ROOT)}")
    return 1 if any(stale.values()) and not args.write else 0


if __name__ == "__main__":
    raise SystemExit(main())

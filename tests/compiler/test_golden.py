"""Golden compiles of real transcript slices: input fixture beside expected output.

Each case compiles every transcript of a fixture under a schema and compares the
compiled messages and telemetry (timing aside) with `tests/golden/<case>.json`.
Regenerate after a deliberate change with `CONTEXTGC_UPDATE_GOLDEN=1 pytest
tests/compiler/test_golden.py`, and read the diff before committing it.
"""

import json
import os
from pathlib import Path

import pytest

from compiler import load_schema, run
from compiler.engine import compile_messages
from compiler.read.formats import formats_many
from compiler.read.messages import message_to_dict
from tests.invariants import assert_invariants

FIXTURES = Path(__file__).parents[1] / "fixtures" / "formats"
GOLDEN = Path(__file__).parents[1] / "golden"
CASES = [
    ("nebius-two-blocks.txt", "coding", "compact"),
    ("nebius-two-blocks.txt", "coding", "cache_friendly"),
    ("swe-agent-function-calling.traj", "coding", "compact"),
    ("tau-airline-two-records.json", "travel", "compact"),
    ("tau-airline-two-records.json", "travel", "cache_friendly"),
    ("few-shot-airline.jsonl", "travel", "compact"),
]


def compile_fixture(name: str, schema: str, mode: str) -> dict:
    out = {}
    for transcript_id, parsed in formats_many((FIXTURES / name).read_text(encoding="utf-8")):
        result = run(parsed.messages, schema=load_schema(schema), mode=mode)
        assert_invariants(result)
        dicts = [message_to_dict(m) for m in parsed.messages]
        compiled, telemetry = compile_messages(dicts, schema=load_schema(schema), mode=mode)
        telemetry.pop("compile_time_ms")
        out[transcript_id] = {"messages": compiled, "telemetry": telemetry}
    return out


@pytest.mark.parametrize(("name", "schema", "mode"), CASES)
def test_it_compiles_real_slices_to_their_golden_output(name, schema, mode):
    actual = compile_fixture(name, schema, mode)
    path = GOLDEN / f"{name}.{schema}.{mode}.json"
    if os.environ.get("CONTEXTGC_UPDATE_GOLDEN"):
        path.write_text(json.dumps(actual, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    assert actual == json.loads(path.read_text(encoding="utf-8"))

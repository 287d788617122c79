"""Compiled output the chat API accepts: every tool message answers a call of the
assistant turn before it, and every call is answered, whatever shape the input came in."""

from pathlib import Path

import pytest

from compiler import compile_messages, compile_transcript, load_schema
from compiler.formats import formats_many
from compiler.messages import message_to_dict
from tests.invariants import unpaired_calls

FORMATS = Path(__file__).parent / "fixtures" / "formats"
SLICES = sorted(
    p.name for p in FORMATS.iterdir() if p.suffix in {".traj", ".jsonl", ".json", ".txt"}
)
SLICES = [name for name in SLICES if not name.endswith(".expected.json")]


def test_the_check_finds_what_the_api_refuses():
    call = {"role": "assistant", "content": None, "tool_calls": [{"id": "a"}, {"id": "b"}]}
    a, b = {"role": "tool", "tool_call_id": "a"}, {"role": "tool", "tool_call_id": "b"}
    assert unpaired_calls([call, a]) == ["the history ends before an answer to ['b']"]
    assert unpaired_calls([call, a, {"role": "user"}, b]) == [
        "[2] comes before an answer to ['b']",
        "[3] answers no open call ('b')",
    ]
    assert unpaired_calls([{"role": "user"}, {"role": "tool"}]) == [
        "[1] answers no open call (None)"
    ]
    assert unpaired_calls([call, a, b]) == []
    nameless = {"role": "assistant", "content": None, "tool_calls": [{"id": None}]}
    assert unpaired_calls([nameless, {"role": "tool"}]) == [
        "[1] answers no open call (None)",
        "the history ends before an answer to [None]",
    ]


@pytest.mark.parametrize("mode", ["compact", "cache_friendly"])
@pytest.mark.parametrize("name", SLICES)
def test_every_real_slice_compiles_to_calls_and_answers_that_pair(name, mode):
    schema = load_schema("coding" if "swe" in name or "nebius" in name else "travel")
    text = (FORMATS / name).read_text(encoding="utf-8")
    out, _, _ = compile_transcript(text, schema=schema, mode=mode)
    assert unpaired_calls(out) == []
    for _, parsed in formats_many(text):  # every transcript the file holds, as a list
        items = [message_to_dict(m) for m in parsed.messages]
        out, _ = compile_messages(items, schema=schema, mode=mode, cache=False)
        assert unpaired_calls(out) == []

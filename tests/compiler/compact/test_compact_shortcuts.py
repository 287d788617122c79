"""Shortcut tests for payload compaction: the footer split and the JSON a compacted payload
opens with, each against the plain version (a look at every line, a fresh decode)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler.compact.compact import _TRAILER_LINE, _split_trailer, compact
from compiler.compact.repeats import json_values
from tests.payload_strategies import payload_objects, payload_values

pytestmark = pytest.mark.shortcut


def _split_trailer_line_by_line(text: str) -> tuple[str, str]:
    """The trailing lines that are footer lines, the first line never among them."""
    lines = text.split("\n")
    kept = len(lines)
    while kept > 1 and _TRAILER_LINE.fullmatch(lines[kept - 1].rstrip("\r")):
        kept -= 1
    trailer = "\n" + "\n".join(lines[kept:]) if kept < len(lines) else ""
    return "\n".join(lines[:kept]), trailer


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(
    ['{"a": 1}', "\n", "\r", " ", "(Open file: /a.py)", "(Current directory: /r)", "bash-$",
     "x", ")", "$", "]"]), max_size=8).map("".join))  # fmt: skip
def test_the_footer_split_finds_what_a_look_at_every_line_finds(text):
    assert _split_trailer(text) == _split_trailer_line_by_line(text)


VALUES = payload_values(max_rows=30)


OBJECTS = payload_objects(max_rows=30)


WRITERS = st.sampled_from(
    [
        json.dumps,
        lambda value: json.dumps(value, ensure_ascii=False),
        lambda value: json.dumps(value, indent=1, ensure_ascii=False),
        lambda value: json.dumps(value) + "\n(Open file: n/a)\n(Current directory: /r)\nbash-$",
        lambda value: json.dumps(value)[:-1] + ', "id": 1, "id": 2}',  # a key given twice
    ]
)


@settings(max_examples=400, deadline=None)
@given(OBJECTS | VALUES, WRITERS)
def test_a_compacted_payload_shows_the_json_that_decoding_its_text_reads(value, write):
    text = write(value)
    memo: dict = {}
    compacted = compact(text, memo=memo).text
    assert json_values(compacted, memo) == json_values(compacted)
    assert json_values(text, memo) == json_values(text)

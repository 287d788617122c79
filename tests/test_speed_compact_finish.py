"""Shortcuts in the whole-history stages, each against the plain way they stand in for: the
JSON a compacted payload opens with read from the decode memo rather than decoded again,
the head rows of a clean collection taken without flagging each row, a record's string
and integer fields written without the encoder, and the deepest level of shown values not
expanded."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from compiler.compact.compact import compact
from compiler.compact.compact_json import _Collection, _largest_collection, _row_text, compact_json
from compiler.compact.repeats import _NESTED, REPEAT_DEPTH, inner_values, json_values
from compiler.compact.stale import record_rows
from compiler.read.jsonio import dumps
from tests.payload_strategies import KEYS, SCALARS, payload_objects, payload_values, records

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


def _plain_kept(collection: _Collection, head_rows: int, signal) -> tuple[list, int]:
    """The rows ``compact_json`` keeps, found the plain way: every row flagged."""
    rows = collection.rows
    flags = [signal(_row_text(collection.kind, row)) for row in rows]
    kept = [i for i, flag in enumerate(flags) if i < head_rows or flag]
    return [rows[i] for i in kept], sum(flags[i] for i in kept)


@settings(max_examples=400, deadline=None)
@given(OBJECTS | VALUES, st.integers(min_value=-1, max_value=4), st.sampled_from(["x", "a", "1"]))
def test_the_rows_kept_are_the_head_and_every_flagged_row(value, head_rows, letter):
    def signal(text: str) -> bool:
        return letter in text

    found = _largest_collection(value)
    summary = compact_json(json.dumps(value), tool_name=None, head_rows=head_rows, signal=signal)
    if found is None or summary is None or not summary.records:
        return
    kept, safety = _plain_kept(found, head_rows, signal)
    assert (summary.rows_total, summary.rows_kept) == (len(found.rows), len(kept))
    assert summary.safety_rows_kept == safety


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.text(max_size=5), SCALARS | records(30), max_size=6))
def test_a_record_is_written_as_rows_as_the_encoder_writes_them(value):
    expected = []
    for name, field in value.items():
        if isinstance(field, list):
            expected += [f"{name}: {dumps(item)}" for item in field]
        elif isinstance(field, dict) and field and all(isinstance(v, dict) for v in field.values()):
            expected += [f"{name}.{entry}: {dumps(item)}" for entry, item in field.items()]
        else:
            expected.append(f"{name}: {dumps(field)}")
    assert record_rows(value) == expected


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(KEYS, SCALARS, max_size=8))
def test_an_object_of_plain_values_holds_no_collection(value):
    assert _largest_collection(value) is None


def _plain_inner_values(value, without=frozenset()) -> list:
    """``inner_values`` the plain way: each level's children listed, the last one's too."""
    level = [f for key, f in value.items() if key not in without] if without else [value]
    found: list = []
    for _ in range(REPEAT_DEPTH + (not without)):
        level = [node for node in level if isinstance(node, _NESTED) and node]
        found.extend(level)
        level = [c for node in level for c in (node.values() if isinstance(node, dict) else node)]
    return found


@settings(max_examples=300, deadline=None)
@given(OBJECTS, st.frozensets(KEYS, max_size=3))
def test_the_values_a_payload_shows_are_those_a_walk_of_every_level_finds(value, without):
    found = [id(node) for node in inner_values(value, without)]
    assert found == [id(node) for node in _plain_inner_values(value, without)]

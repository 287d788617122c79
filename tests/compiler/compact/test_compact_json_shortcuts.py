"""Shortcut tests for JSON payload compaction: the rows kept, the largest collection
found and the test for an object without collections, each against the plain walk of
every row or node it stands in for."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from compiler.compact.compact_json import _plain_size, compact_json
from compiler.compact.json_collections import (
    EXEMPT_KEYS,
    Collection,
    collection_kind,
    largest_collection,
    without,
)
from compiler.compact.json_tables import as_table, row_text, shared_key_column
from compiler.read.jsonio import dumps, escape_surrogates
from tests.payload_strategies import KEYS, SCALARS, payload_objects, payload_values

pytestmark = pytest.mark.shortcut

VALUES = payload_values(max_rows=30)


OBJECTS = payload_objects(max_rows=30)


def _plain_kept(collection: Collection, head_rows: int, signal) -> tuple[list, int]:
    """The rows ``compact_json`` keeps, found the plain way: every row flagged."""
    rows = collection.rows
    flags = [signal(row_text(collection.kind, row)) for row in rows]
    kept = [i for i, flag in enumerate(flags) if i < head_rows or flag]
    return [rows[i] for i in kept], sum(flags[i] for i in kept)


@settings(max_examples=400, deadline=None)
@given(OBJECTS | VALUES, st.integers(min_value=-1, max_value=4), st.sampled_from(["x", "a", "1"]))
def test_the_rows_kept_are_the_head_and_every_flagged_row(value, head_rows, letter):
    def signal(text: str) -> bool:
        return letter in text

    found = largest_collection(value)
    summary = compact_json(json.dumps(value), tool_name=None, head_rows=head_rows, signal=signal)
    if found is None or summary is None or not summary.records:
        return
    kept, safety = _plain_kept(found, head_rows, signal)
    assert (summary.rows_total, summary.rows_kept) == (len(found.rows), len(kept))
    assert summary.safety_rows_kept == safety


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(KEYS, SCALARS, max_size=8))
def test_an_object_of_plain_values_holds_no_collection(value):
    assert largest_collection(value) is None


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=6),
    lambda inner: (
        st.lists(inner, max_size=5)
        | st.dictionaries(st.sampled_from(["a", "b", "id", "arguments", "x.y"]), inner)
    ),
    max_leaves=40,
)


def _every_collection(node, path, found):
    """The walk without skipping leaves: every dict and list is looked at."""
    kind = collection_kind(node)
    if kind is not None:
        found.append(Collection(path, kind, node, dumps(node)))
    elif isinstance(node, dict):
        for key, child in node.items():
            if isinstance(child, dict | list) and key not in EXEMPT_KEYS:
                _every_collection(child, (*path, key), found)
    else:
        for index, child in enumerate(node):
            if isinstance(child, dict | list):
                _every_collection(child, (*path, index), found)


@settings(max_examples=300, deadline=None)
@given(JSON_VALUES)
def test_the_largest_collection_is_the_one_a_walk_of_every_node_finds(value):
    found = []
    if isinstance(value, dict | list):
        _every_collection(value, (), found)
    expected = max(found, key=lambda collection: len(collection.text), default=None)
    assert largest_collection(value) == expected


ANY_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=8) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=60,
)


PLAIN = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


ODD_KEYS = st.text(alphabet='ab.:"é', max_size=3)


CELLS = ANY_JSON | st.sampled_from([{}, [], "\ud800", "a:b"])


@st.composite
def uniform_records(draw) -> list[dict]:
    """Records that share their fields: some fields are objects, with fields of their own."""
    leaf = st.none()
    shape = draw(
        st.dictionaries(ODD_KEYS, leaf | st.dictionaries(ODD_KEYS, leaf, max_size=3), max_size=4)
    )

    def fill(fields: dict) -> dict:
        return {k: fill(v) if isinstance(v, dict) else draw(CELLS) for k, v in fields.items()}

    return [fill(shape) for _ in range(draw(st.integers(min_value=1, max_value=5)))]


@PLAIN
@given(uniform_records(), st.sampled_from(["records", "groups", "map"]), st.booleans())
def test_it_knows_how_long_rows_would_be_as_objects_without_writing_them(records, kind, keyed):
    if kind == "groups":
        rows = [records[i : i + 2] for i in range(0, len(records), 2)]
    elif kind == "map":
        assume(records[0] or keyed)  # a map's records are never empty: _is_record_map
        rows = [
            (f"k{i}", {**record, "id": f"k{i}"} if keyed else record)
            for i, record in enumerate(records)
        ]
    else:
        rows = records
    key_column = shared_key_column(rows) if kind == "map" else None
    table = as_table(kind, rows, key_column)
    objects = "\n" + "\n".join(row_text(kind, row) for row in rows)
    assert table is None or table[1] == len(objects)


@PLAIN
@given(ANY_JSON, uniform_records(), st.text(max_size=3), st.booleans())
def test_it_knows_how_long_the_plain_json_is_without_writing_it(value, records, key, in_list):
    document = [value, records, value] if in_list else {"a": value, key: records, "z": value}
    found = largest_collection(document)
    if found is None:
        return
    rest = dumps(without(document, found.path)) if found.path else None
    plain = dumps(document)
    assert _plain_size(document, found, rest) == (len(escape_surrogates(plain)), plain.count(":"))

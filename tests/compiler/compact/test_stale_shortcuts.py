"""A stale read whose notice certainly wins is not compacted: the shortcut against the plain
choice (compact it, then keep the shorter of the two)."""

from __future__ import annotations

import json
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

import compiler
from compiler.compact.compact import LONG_CHARS, compact, compacts_longer_than
from compiler.compact.compact_json import summary_floor
from tests.payload_strategies import payload_objects

OBJECTS = payload_objects(max_rows=12)
WRITERS = st.sampled_from(
    [
        json.dumps,
        lambda value: json.dumps(value, ensure_ascii=False),
        lambda value: json.dumps(value, separators=(",", ":"), ensure_ascii=False),
        lambda value: json.dumps(value, indent=1, ensure_ascii=False),
    ]
)


@settings(max_examples=400, deadline=None)
@given(OBJECTS, WRITERS)
def test_every_compaction_of_an_object_is_at_least_its_summary_floor(value, write):
    text = write(value)
    assert compact(text).compacted_chars >= summary_floor(json.loads(text), LONG_CHARS)


@settings(max_examples=400, deadline=None)
@given(OBJECTS, WRITERS, st.integers(min_value=0, max_value=3000))
def test_a_compaction_said_longer_than_a_notice_is_longer(value, write, chars):
    text = write(value)
    if compacts_longer_than(text, chars):
        assert compact(text).compacted_chars > chars


@settings(max_examples=200, deadline=None)
@given(OBJECTS, st.integers(min_value=0, max_value=400))
def test_a_duplicate_key_is_never_taken_for_json(value, chars):
    text = json.dumps(value)[:-1] + ', "id": 1, "id": 2}'
    if compacts_longer_than(text, chars):
        assert compact(text).compacted_chars > chars


def _history(first: dict, second: dict) -> list[dict]:
    call = {"name": "get_order_details", "arguments": json.dumps({"order_id": "#W1"})}
    again = {"name": "cancel_pending_order", "arguments": json.dumps({"order_id": "#W1"})}
    return [
        {"role": "user", "content": "Cancel order #W1."},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "function": call}]},
        {"role": "tool", "tool_call_id": "c1", "content": json.dumps(first)},
        {"role": "assistant", "content": "Found it. Cancel it?"},
        {"role": "user", "content": "yes"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c2", "function": again}]},
        {"role": "tool", "tool_call_id": "c2", "content": json.dumps(second)},
        {"role": "assistant", "content": "Done."},
    ]


# fields enough for a notice to win over most compactions, so both ways are taken
ADDRESS = {"user_id": "ana_1", "address": {"address1": "1 Elm Street " * 8, "city": "Austin"}}


def _compiled(history: list[dict], cache: bool) -> tuple[list, dict]:
    out, telemetry = compiler.compile_messages(json.loads(json.dumps(history)), cache=cache)
    return out, {**telemetry, "compile_time_ms": 0}


@settings(max_examples=150, deadline=None)
@given(OBJECTS, OBJECTS, st.integers(min_value=0, max_value=2))
def test_a_stale_record_compiles_as_it_does_when_every_payload_is_compacted(first, extra, calls):
    first = {"order_id": "#W1", **ADDRESS, **first}
    second = {**first, **extra, "order_id": "#W1"}
    history = _history(first, second)
    for end in range(len(history) - calls, len(history)):  # an agent loop, resumed
        _compiled(history[:end], cache=True)
    out = _compiled(history, cache=calls > 0)
    with mock.patch("compiler.fold.compacts_longer_than", return_value=False):
        assert out == _compiled(history, cache=False)

"""Shortcut tests for stale reads: a read whose notice certainly wins is not compacted,
a record's rows and safety lines are found without checking each, and a call's key is
taken from a shared decode, each against the plain computation."""

from __future__ import annotations

import json
import re
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import compiler
from compiler.compact.compact import (
    LONG_CHARS,
    compact,
    compacts_longer_than,
)
from compiler.compact.compact_json import summary_floor
from compiler.compact.read_keys import _canonical
from compiler.compact.safety import (
    has_safety_signal,
    safety_spans,
)
from compiler.compact.stale import elide, elide_record, record_rows, safety_lines
from compiler.read.jsonio import dumps
from tests.payload_strategies import SCALARS, payload_objects, records

pytestmark = pytest.mark.shortcut

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
    with mock.patch("compiler.compact.plan.compacts_longer_than", return_value=False):
        assert out == _compiled(history, cache=False)


def _elide_record_by_every_row(text: str, later_text: str, replaced_by: int, key: str):
    """``elide_record`` as it was: every row of both records written and checked."""
    old, new = json.loads(text), json.loads(later_text)
    rows, repeated = record_rows(old), set(record_rows(new))
    safety = [row for row in rows if row not in repeated and has_safety_signal(row)]
    what = f"{len(rows)} rows, {len(text)} chars, truncated=true"
    head = f"[stale read: {key[:160]} was shown again at turn {replaced_by}; "
    head += f"this older output is omitted ({what})"
    head += "; safety rows it does not repeat kept:]" if safety else "]"
    return "\n".join([head, *safety])


RECORDS = st.dictionaries(
    st.sampled_from(["id", "pax", "note", "dob", "pay"]),
    st.sampled_from(["R1", "peanut allergy", "ok", 4, [{"dob": "1990"}], {"c1": {"n": 4}}]),
    min_size=1,
)


@settings(max_examples=300, deadline=None)
@given(RECORDS, RECORDS, st.text(max_size=300))
def test_a_stale_record_keeps_the_rows_it_kept_when_every_row_was_checked(old, new, pad):
    text = json.dumps({**old, "zz": pad})
    later = json.dumps(new)
    result = elide_record(text, later, replaced_by=3, key="record id")
    expected = _elide_record_by_every_row(text, later, 3, "record id")
    if len(expected) < len(text):
        assert result.text == expected
    else:
        assert not result.changed and result.text == text
    assert elide(text, replaced_by=3, key="k").original_chars == len(text)


def test_a_stale_record_without_safety_rows_leaves_the_later_record_undecoded():
    # (a compile holds a decoded payload until its own compaction: two at once was the peak)
    old, later = json.dumps({"id": "R1", "note": "x" * 300}), json.dumps({"id": "R1"})
    memo: dict = {}
    assert elide_record(old, later, replaced_by=3, key="record id", memo=memo).changed
    assert old in memo and later not in memo
    risky = json.dumps({"id": "R1", "allergy": "peanut allergy", "note": "x" * 300})
    kept = elide_record(risky, later, replaced_by=3, key="record id", memo=memo)
    assert later in memo and "peanut allergy" in kept.text


CALL_ARGUMENTS = ["", "{}", "oops", "\ufeff{}", '{"b": 1, "a": [1.5, "é"]}',
                  "[" * 5000 + "]" * 5000, '{"a": NaN}', "  [1, 2]  "]  # fmt: skip


@pytest.mark.parametrize("arguments", CALL_ARGUMENTS)
def test_a_canonical_call_key_from_a_shared_decode_is_the_one_json_loads_gives(arguments):
    try:
        expected = json.dumps(json.loads(arguments), ensure_ascii=True, sort_keys=True,
                              separators=(",", ":"))  # fmt: skip
    except (ValueError, RecursionError):
        expected = arguments
    memo: dict = {}
    assert _canonical(arguments, memo) == expected
    assert _canonical(arguments, memo) == expected  # the second time, from the memo
    assert _canonical(arguments) == expected


SAFETY_TEXTS = st.lists(
    st.sampled_from(
        # "Do" and "not" make a phrase a line break can split
        "ok|\n|PEANUT| |phone|a@b.co|4111 1111 1111 1111|é|\r|Do|not".split("|")
    ),
    max_size=12,
).map("".join)


def _safety_lines_by_splitting(text: str) -> list[str]:
    """``safety_lines`` the plain way: the text split into lines, and every line from
    the one a signal starts on to the one it ends on, found by counting line breaks."""
    lines, found = text.split("\n"), set()
    for start, end in safety_spans(text):
        first = text.count("\n", 0, start)
        found.update(range(first, first + text.count("\n", start, max(start, end - 1)) + 1))
    return [lines[i] for i in sorted(found)]


@settings(max_examples=500, deadline=None)
@given(SAFETY_TEXTS)
def test_safety_lines_are_the_lines_splitting_the_text_finds(text):
    assert safety_lines(text) == _safety_lines_by_splitting(text)
    for payload in (text, text + "x" * 400, text + "\nx" * 200):
        notice = elide(payload, replaced_by=3, key="k")
        lines, safety = payload.split("\n"), _safety_lines_by_splitting(payload)
        head = "[stale read: k was shown again at turn 3; this older output is omitted "
        head += f"({len(lines)} lines, {len(payload)} chars, truncated=true)"
        expected = "\n".join([head + ("; safety lines kept:]" if safety else "]"), *safety])
        if len(expected) < len(payload):
            assert (notice.text, notice.rows_total) == (expected, len(lines))
        else:
            assert not notice.changed and notice.text == payload


def test_a_file_window_walks_back_to_the_same_last_line_findall_gives():

    from compiler.compact.read_keys import _window

    numbered = re.compile(r"^(\d+):", re.MULTILINE)
    texts = [
        "",
        "no numbers here\n(3 more lines below)",
        "[File: a (9 lines total)]\n4:x",
        "[File: a (9 lines total)]\r\n(3 more lines above)\r\n4:x\r\n5:y\r\n"
        "(4 more lines below)\r\n",
        "7:only\nfooter\n12: not at the end\n(Open file: a)\nbash-$",
        "\n".join(f"{n}:line {n}" for n in range(1, 200)) + "\n\n(Current directory: /r)\n",
        "x\n10:a\n11:b\n12:c",
    ]
    for text in texts:
        found = numbered.findall(text)
        expected = (int(found[0]), int(found[-1])) if found else (0, 0)
        assert _window(text, 0, len(text)) == expected, text


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

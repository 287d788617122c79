"""Shortcut tests for reading items: a plain item takes a fast reader, a compile without
the cache reads without copying, and a written dict shares no list or dict with its
source; each must give what the general reader gives."""

from __future__ import annotations

import math
from collections import OrderedDict
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler.read.items import _call_notes, _plain_item, _read_item, read_message_list
from compiler.read.messages import message_to_dict

pytestmark = pytest.mark.shortcut

VALUES = st.sampled_from([None, "", "hi", 3, ["a", {"b": ["c"]}], {"a": {"b": 1}}, True])
CALLS = st.lists(
    st.fixed_dictionaries(
        {"id": st.sampled_from(["c1", None]), "type": st.just("function")},
        optional={
            "function": st.fixed_dictionaries(
                {}, optional={"name": st.sampled_from(["", "open", 3]), "arguments": VALUES}
            )
        },
    ),
    max_size=3,
)
# mostly items the plain reader takes: an API role, text content, no call linked otherwise
ITEMS = st.builds(
    lambda item, links: item | links,
    st.fixed_dictionaries(
        {"role": st.sampled_from(["user", "assistant", "tool", "developer", "human", 3])},
        optional={
            "content": st.one_of(
                st.sampled_from(["hi", None]), VALUES, st.just([{"type": "text", "text": "t"}])
            ),
            "name": VALUES,
            "tool_call_id": VALUES,
            "tool_calls": st.one_of(CALLS, VALUES),
            "agent": VALUES,
            "thought": VALUES,
        },
    ),
    st.sampled_from(
        [{}, {}, {}, {"tool_call_ids": ["x"]}, {"tool_call_ids": "x"}, {"function_call": {}}]
    ),
)


def _where(index: int) -> str:
    return f"messages[{index}]"


@settings(max_examples=600, deadline=None)
@given(ITEMS, st.booleans())
def test_an_item_the_plain_reader_takes_is_read_as_the_general_reader_reads_it(item, own):
    message = _plain_item(item, 7, own)
    if message is None:
        return
    expected, notes = _read_item(item, 7, 0, _where, own)
    assert message == expected and message.source == expected.source
    assert message.tool_calls == expected.tool_calls and message.line == expected.line
    # the notes parsed_items gives a plain item are the general reader's
    got = read_message_list([item], base_line=7, own=own).warnings
    assert [w.message for w in got] == notes == _call_notes(item, message, _where(0))
    assert all(w.line == 7 for w in got)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(ITEMS, st.just(5)), max_size=4))
def test_reading_without_a_copy_reads_what_reading_with_one_reads(items):
    owned = read_message_list(items)
    shared = read_message_list(items, own=False)
    assert owned == shared
    # (without a copy, a view of each item's pairs: the same pairs, in the same order)
    assert [tuple(m.source) for m in owned.messages] == [tuple(m.source) for m in shared.messages]


def _containers(value, found: list) -> list:
    if isinstance(value, list | dict):
        found.append(value)
        for item in value.values() if isinstance(value, dict) else value:
            _containers(item, found)
    return found


@settings(max_examples=300, deadline=None)
@given(ITEMS, st.sampled_from([None, "same", "", "new text"]))
def test_a_written_dict_shares_no_list_or_dict_with_what_it_was_read_from(item, text):
    message = _plain_item(item, 1, False) or _read_item(item, 1, 0, _where, False)[0]
    if message is None:
        return
    if text != "same":
        message = replace(message, content=text)
    out = message_to_dict(message)
    given_ids = {id(c) for c in _containers(item, [])}
    assert not any(id(c) in given_ids for c in _containers(out, []))


ITEM_VALUES = st.sampled_from([None, "", "hi", "é\u2028x", 3, ["a"], {"a": 1}, True])


ITEMS_OF_EVERY_ROLE = st.builds(
    lambda role, content, name, call_id, extra: {
        **({"role": role} if role != "-" else {}),
        **({"content": content} if content != "-" else {}),
        **({"name": name} if name != "-" else {}),
        **({"tool_call_id": call_id} if call_id != "-" else {}),
        **extra,
    },
    st.sampled_from(["user", "assistant", "tool", "system", "human", "USER", "odd", 3, None, "-"]),
    st.one_of(ITEM_VALUES, st.just("-")),
    st.one_of(ITEM_VALUES, st.just("-")),
    st.one_of(ITEM_VALUES, st.just("-")),
    st.sampled_from([{}, {"tool_call_ids": ["x"]}, {"function_call": {"name": "f"}}]),
)


@settings(max_examples=500, deadline=None)
@given(ITEMS_OF_EVERY_ROLE)
def test_a_plain_item_is_read_as_the_general_reader_reads_it(item):
    message = _plain_item(item, 7)
    if message is not None:
        expected, notes = _read_item(item, 7, 0, lambda index: f"messages[{index}]")
        assert notes == []
        assert message == expected and message.source == expected.source
        assert message.line == expected.line == 7
    # a dict subclass takes the general reader, to the same message
    if isinstance(item, dict):
        special = _read_item(OrderedDict(item), 7, 0, str)[0]
        plain = _read_item(item, 7, 0, str)[0]
        assert special == plain


CALL_VALUES = st.sampled_from(
    [None, "", "{}", '{"a": 1}', {"a": [1, "é"]}, 3, ["x"], True, math.nan, {"s": {1, 2}}]
)


CALLS_IN_EVERY_SHAPE = st.one_of(
    st.sampled_from([None, [], "calls", 3, {"id": "c1"}]),
    st.lists(
        st.one_of(
            st.builds(
                lambda call_id, name, arguments, nested: {
                    "id": call_id,
                    "type": "function",
                    **(
                        {"function": {"name": name, "arguments": arguments}}
                        if nested
                        else {"name": name, "arguments": arguments}
                    ),
                },
                st.sampled_from([None, "c1", 7]),
                st.sampled_from([None, "open", "", 3]),
                CALL_VALUES,
                st.booleans(),
            ),
            st.sampled_from(["call", 3, None, {"function": "f"}]),
        ),
        max_size=3,
    ),
)


ITEMS_WITH_CALLS = st.builds(
    lambda role, content, calls, extra: (
        {"role": role, "content": content, "tool_calls": calls} | extra
    ),
    st.sampled_from(["assistant", "user", "tool", "function", "human", 3]),
    st.sampled_from([None, "", "hi", ["a"]]),
    CALLS_IN_EVERY_SHAPE,
    st.sampled_from([{}, {"name": "n"}, {"tool_call_id": "t"}, {"tool_call_ids": ["x"]}]),
)


@settings(max_examples=400, deadline=None)
@given(ITEMS_WITH_CALLS)
def test_an_item_with_tool_calls_is_read_as_the_general_reader_reads_it(item):
    message = _plain_item(item, 4)
    if message is not None:
        expected, notes = _read_item(item, 4, 0, str)
        # the one note a plain item may carry, which parsed_items adds for it
        assert all(note.endswith("names no function") for note in notes)
        assert message == expected and message.source == expected.source
        assert message.tool_calls == expected.tool_calls and message.line == 4


def test_a_call_whose_arguments_json_cannot_hold_takes_the_general_reader():
    item = {"role": "assistant", "content": None, "tool_calls": [{"arguments": {"s": {1}}}]}
    assert _plain_item(item, 1) is None
    message, notes = _read_item(item, 1, 0, str)
    assert message.tool_calls == () and len(notes) == 1

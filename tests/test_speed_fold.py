"""The fold's fast paths give what the general paths give (speed work, helper session)."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from compiler.read.items import _plain_item, _read_item

CALL_VALUES = st.sampled_from(
    [None, "", "{}", '{"a": 1}', {"a": [1, "é"]}, 3, ["x"], True, math.nan, {"s": {1, 2}}]
)
CALLS = st.one_of(
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
ITEMS = st.builds(
    lambda role, content, calls, extra: (
        {"role": role, "content": content, "tool_calls": calls} | extra
    ),
    st.sampled_from(["assistant", "user", "tool", "function", "human", 3]),
    st.sampled_from([None, "", "hi", ["a"]]),
    CALLS,
    st.sampled_from([{}, {"name": "n"}, {"tool_call_id": "t"}, {"tool_call_ids": ["x"]}]),
)


@settings(max_examples=400, deadline=None)
@given(ITEMS)
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

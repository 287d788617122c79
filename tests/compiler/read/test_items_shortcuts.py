"""The reader's and writer's shortcuts give what the general paths give (speed work,
helper session): an item with extra keys takes the plain reader, a compile without the
cache reads without copying, and a written dict shares no list or dict with its source."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from compiler.read.items import _call_notes, _plain_item, _read_item, read_message_list
from compiler.read.messages import Message, message_to_dict

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
    assert [m.source for m in owned.messages] == [m.source for m in shared.messages]


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
        message = Message(**{**message.__dict__, "content": text})
    out = message_to_dict(message)
    given_ids = {id(c) for c in _containers(item, [])}
    assert not any(id(c) in given_ids for c in _containers(out, []))

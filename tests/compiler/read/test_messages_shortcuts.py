"""Shortcut tests for messages: a copy of a caller's value, a message with new content
and a made tool call, each against the plain construction (a comprehension,
``dataclasses.replace``, the constructor)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler.read.messages import (
    Message,
    ToolCall,
    make_tool_call,
    owned,
    with_content,
)

pytestmark = pytest.mark.shortcut


class Tags(list):
    """A list subclass, as a caller may hand one in."""


class Meta(dict):
    """A dict subclass."""


TEXT = st.sampled_from(["", "hi", "a b", "ünï", "x" * 9])


SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), TEXT)


VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(TEXT, inner, max_size=3),
        st.lists(inner, max_size=2).map(Tags),
        st.dictionaries(TEXT, inner, max_size=2).map(Meta),
        st.lists(inner, max_size=2).map(tuple),
    ),
    max_leaves=12,
)


CALLS = st.lists(st.builds(ToolCall, TEXT, TEXT, st.one_of(st.none(), TEXT)), max_size=3)


MESSAGES = st.builds(
    Message,
    st.sampled_from(["system", "user", "assistant", "tool"]),
    st.one_of(st.none(), TEXT, st.text(max_size=30)),
    st.one_of(st.none(), TEXT),
    st.one_of(st.none(), TEXT),
    CALLS.map(tuple),
    st.just(()),
    st.one_of(st.none(), st.integers(1, 99)),
)


def _old_owned(value):
    """``owned`` as it was: a comprehension over every list and dict."""
    if isinstance(value, list):
        return [item if type(item) is str else _old_owned(item) for item in value]
    if isinstance(value, dict):
        return {key: item if type(item) is str else _old_owned(item) for key, item in value.items()}
    return value


def _containers(value, found: list) -> list:
    """Every list and dict in ``value``, tuples looked into."""
    if isinstance(value, list | dict):
        found.append(value)
    if isinstance(value, list | tuple):
        for item in value:
            _containers(item, found)
    elif isinstance(value, dict):
        for item in value.values():
            _containers(item, found)
    return found


@settings(max_examples=500, deadline=None)
@given(VALUES)
def test_a_copy_is_the_copy_the_comprehension_made(value):
    copy, expected = owned(value), _old_owned(value)
    assert copy == expected and repr(copy) == repr(expected)
    assert type(copy) is type(expected)
    # the lists and dicts of the caller's it keeps are those it kept (inside a tuple)
    assert _shared(value, copy) == _shared(value, expected)


def _shared(value, copy) -> set[int]:
    given = {id(c) for c in _containers(value, [])}
    return {id(c) for c in _containers(copy, []) if id(c) in given}


@settings(max_examples=300, deadline=None)
@given(MESSAGES, st.one_of(st.none(), TEXT))
def test_a_message_with_new_content_is_the_one_replace_gives(message, content):
    changed = with_content(message, content)
    expected = replace(message, content=content)
    assert changed == expected and changed.source == expected.source  # (compare=False)


def test_a_made_tool_call_is_a_tool_call():
    assert make_tool_call("open", "{}", "c1") == ToolCall("open", "{}", "c1")

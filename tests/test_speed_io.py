"""The reader's, writer's and telemetry's shortcuts (speed work, session 8) give what the
plain code they replaced gives, for every input: a made instance is the dataclass's own,
a copy of a caller's value is the copy the comprehension made and shares no list or dict
with it, a stripped message is the one the role-by-role checks gave."""

from __future__ import annotations

from dataclasses import fields, replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler.fold import Fold
from compiler.frozen import build, maker
from compiler.layout.emit import (
    _BLOCK,
    _RECALL_TAIL,
    RECALL_MARKER,
    Recall,
    _recall_text,
    strip_compiled_one,
)
from compiler.layout.telemetry import _estimate, _estimated, message_tokens
from compiler.protocol.instruction import INSTRUCTION, render_instruction
from compiler.read.items import read_message_list
from compiler.read.messages import (
    Message,
    ToolCall,
    make_message,
    make_tool_call,
    owned,
    with_content,
)
from compiler.state.schema import load_schema
from compiler.types import Options


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


@pytest.mark.parametrize("cls", [Message, ToolCall])
def test_a_made_instance_is_the_one_the_dataclass_builds(cls):
    names = [spec.name for spec in fields(cls)]
    values = [f"v{index}" for index in range(len(names))]
    made = maker(cls)(*values)
    built = cls(*values)
    assert type(made) is cls and made == built and repr(made) == repr(built)
    assert list(made.__dict__.items()) == list(built.__dict__.items())
    assert made.__dict__ == build(cls, **dict(zip(names, values, strict=True))).__dict__


def test_a_made_instance_is_still_frozen():
    message = make_message("user", "hi", None, None, (), (), 1)
    with pytest.raises(AttributeError):
        message.content = "changed"


@settings(max_examples=300, deadline=None)
@given(MESSAGES, st.one_of(st.none(), TEXT))
def test_a_message_with_new_content_is_the_one_replace_gives(message, content):
    changed = with_content(message, content)
    expected = replace(message, content=content)
    assert changed == expected and changed.__dict__ == expected.__dict__


class Quarter:
    """chars/4 through the general path of ``message_tokens``: the parts joined."""

    name = "quarter"

    def count(self, text: str) -> int:
        return len(text) // 4


@settings(max_examples=300, deadline=None)
@given(MESSAGES)
def test_the_estimate_of_a_message_is_the_figure_of_its_parts_joined(message):
    assert _estimate(message) == message_tokens(Quarter(), message)


def test_a_made_tool_call_is_a_tool_call():
    assert make_tool_call("open", "{}", "c1") == ToolCall("open", "{}", "c1")


def _old_strip(message):
    """``strip_compiled_one`` as it was, its checks each naming the role."""
    text = message.content
    if text and message.role == "system" and ("]\n  - " in text or "]\n- " in text):
        text = _BLOCK.sub("", text)
    if text and message.role == "system" and "[STATE_PROTOCOL]" in text:
        text = INSTRUCTION.sub("", text)
    if text and message.role == "user" and RECALL_MARKER in text:
        text = _RECALL_TAIL.sub("", text)
    if text == message.content:
        return message, False
    if message.role == "system" and not text:  # (whitespace left is the caller's own)
        return None, True
    return with_content(message, text), True


HEADER = '[ACTIVE_AGENT_STATE]\n  - a = "1" (turn 0 [inferred])'
PIECES = st.sampled_from(
    [
        HEADER,
        HEADER.replace("  - ", "- "),
        "[DECLARED_INVARIANTS]\n- be kind",
        render_instruction(["a"]) + "\n",
        "[STATE_PROTOCOL]x[/STATE_PROTOCOL]\n",
        "\n\n" + _recall_text(Recall(2, "user", "W1", 1.0)),
        RECALL_MARKER,
        "]\n- ",
        "hello",
        "\n\n",
        " ",
        "",
    ]
)


@settings(max_examples=500, deadline=None)
@given(
    st.sampled_from(["system", "user", "assistant", "tool"]),
    st.one_of(st.none(), st.lists(PIECES, max_size=4).map("".join)),
)
def test_stripping_a_message_gives_what_the_role_by_role_checks_gave(role, text):
    message = Message(role, text, line=3)
    got, expected = strip_compiled_one(message), _old_strip(message)
    assert got == expected
    assert got[0] is None or got[0].__dict__ == expected[0].__dict__


TURNS = st.sampled_from(
    [
        {"role": "system", "content": HEADER + "\n\nBe kind."},
        {"role": "system", "content": "Be kind."},
        {"role": "user", "content": "Pay with my credit card."},
        {
            "role": "user",
            "content": "Actually use paypal instead." + _recall_text(Recall(0, "user", "x", 1.0)),
        },
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "get_order", "arguments": "{}"},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": '[{"id": 1, "status": "ok"}]' * 20},
        {"role": "assistant", "content": "Done."},
        {"role": "human", "content": "hi"},
        7,
    ]
)


@settings(max_examples=200, deadline=None)
@given(st.lists(TURNS, max_size=8), st.sampled_from(["compact", "cache_friendly"]))
def test_tokens_out_are_each_output_message_s_figure(history, mode):
    options = Options.build(mode=mode, schema=load_schema("logistics"))
    parsed = read_message_list(history, own=False)
    result = Fold(options, by_item=True).extend(parsed.messages, items=len(history))
    result = result.finish(remember=False)
    expected = (
        sum(map(_estimate, result.original)),
        sum(map(_estimate, result.emitted.messages)),
    )
    assert _estimated(result) == expected

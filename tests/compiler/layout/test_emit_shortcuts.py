"""Shortcut tests for the layout: a state value quoted and a compiled message stripped,
each against the plain version (``json.dumps``, the role-by-role checks)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler.layout.emit import (
    _BLOCK,
    _RECALL_TAIL,
    RECALL_MARKER,
    Recall,
    _quote,
    _recall_text,
    strip_compiled_one,
)
from compiler.protocol.instruction import INSTRUCTION, render_instruction
from compiler.read.messages import (
    Message,
    with_content,
)

pytestmark = pytest.mark.shortcut


@pytest.mark.parametrize("value", ["", "a", 'say "hi"', "<b>é</b>\n", "\ud800 lone", "\x00\x1f"])
def test_a_state_value_is_quoted_as_json_dumps_quotes_it(value):
    expected = json.dumps(value, ensure_ascii=False).replace("<", "\\u003c").replace(">", "\\u003e")
    assert _quote(value) == expected


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
    assert got[0] is None or (got[0].source, got[0].line) == (expected[0].source, expected[0].line)


def test_state_notes_read_on_point_by_point_are_the_notes_of_all_points_at_once():
    # (a shortcut: a longer history's compile reads on from the last compile's notes)
    from compiler.layout.notes import Notes, _notes

    a, b = ("a", '  - a = "1" (turn 0 [inferred])'), ("b", '  - b = "2" (turn 2 [inferred])')
    a2 = ("a", '  - a = "3" (turn 4 [inferred])')
    points = [(1, (a,)), (3, (a,)), (5, (a, b)), (7, (b,)), (9, (a2, b)), (11, (a2, b))]
    for rules, instruction in (([], ""), (["  - be kind"], "")):
        notes = Notes(rules, instruction)
        for end in range(len(points) + 1):
            before = list(notes.placed)
            notes = notes.read_on(points[:end])
            assert notes.placed == _notes(points[:end], rules, instruction)
            assert before == _notes(points[: max(0, end - 1)], rules, instruction)

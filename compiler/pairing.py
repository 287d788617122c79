"""Calls and answers the chat API would refuse to pair, found in a read history.

The API answers a request only when every tool call an assistant turn makes is answered by
the ``tool`` turns right after it, each naming its call's id (``tool_call_id``), and every
``tool`` turn answers a call of the assistant turn before it. A history read from display
text is paired as it is read (``text_turns.pair_tool_calls``); one read from message
objects, JSON or JSONL keeps what it was given, and these warnings say what of it cannot be
paired. Nothing is changed: the messages are kept as they came.
"""

from __future__ import annotations

from collections.abc import Sequence

from compiler.messages import Message, ParseWarning


def unpaired(messages: Sequence[Message]) -> list[ParseWarning]:
    """A warning for each call not answered by the tool turns right after its assistant
    turn, and each tool turn answering no call of the assistant turn before it; in the
    order of their lines.

    Example:
        >>> from compiler.messages import ToolCall
        >>> calls = (ToolCall("search", "{}", "c1"), ToolCall("book", "{}", "c2"))
        >>> history = [Message("assistant", None, tool_calls=calls, line=1),
        ...            Message("tool", "[]", tool_call_id="c1", line=2),
        ...            Message("user", "and?", line=3),
        ...            Message("tool", "ok", tool_call_id="c2", line=4),
        ...            Message("tool", "ok", line=5)]
        >>> for warning in unpaired(history):
        ...     print(warning)
        line 1: the call 'c2' (book) is not answered before the next turn (the API refuses that)
        line 4: a tool turn answers 'c2', no open call of the assistant turn before it
        line 5: a tool turn without a tool_call_id answers no call
    """
    found: list[ParseWarning] = []
    open_calls: dict[str, tuple[int, str]] = {}  # call id -> the line making it, its tool
    for message in messages:
        line = message.line or 1
        if message.role == "tool":
            answer = message.tool_call_id
            if answer and open_calls.pop(answer, None) is not None:
                continue
            note = (
                f"a tool turn answers {answer!r}, no open call of the assistant turn before it"
                if answer
                else "a tool turn without a tool_call_id answers no call"
            )
            found.append(ParseWarning(line, note))
            continue
        found.extend(_unanswered(open_calls, "is not answered before the next turn"))
        open_calls = {}
        if message.role == "assistant":
            for call in message.tool_calls:
                if call.id:
                    open_calls.setdefault(call.id, (line, call.name))
                else:
                    named = f" ({call.name})" if call.name else ""
                    note = f"a call{named} without an id: no tool turn can answer it"
                    found.append(ParseWarning(line, note))
    found.extend(_unanswered(open_calls, "has no tool turn answering it"))
    return sorted(found, key=lambda warning: warning.line)


def _unanswered(open_calls: dict[str, tuple[int, str]], why: str) -> list[ParseWarning]:
    notes = []
    for ident, (line, name) in open_calls.items():
        named = f" ({name})" if name else ""
        notes.append(ParseWarning(line, f"the call {ident!r}{named} {why} (the API refuses that)"))
    return notes


__all__ = ["unpaired"]

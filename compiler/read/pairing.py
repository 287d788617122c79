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

from compiler.read.messages import Message, ParseWarning


def unpaired(messages: Sequence[Message]) -> list[ParseWarning]:
    """A warning for each call not answered by the tool turns right after its assistant
    turn, each tool turn answering no call of the assistant turn before it, and each id
    two calls of one turn share; in the order of their lines. The older function-call
    shape (``function_call``, answered by a ``function`` turn) has no ids: there an answer
    without one answers the open call, by name where it gives one.

    Example:
        >>> from compiler.read.messages import ToolCall
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
    nameless: list[tuple[int, str]] = []  # open calls without an id (``function_call``)
    for message in messages:
        line = message.line or 1
        if message.role == "tool":
            note = _answer(message, open_calls, nameless)
            if note:
                found.append(ParseWarning(line, note))
            continue
        found.extend(_unanswered(open_calls, nameless, "is not answered before the next turn"))
        open_calls, nameless = {}, []
        if message.role == "assistant":
            legacy = message.tool_calls and any(k == "function_call" for k, _ in message.source)
            for call in message.tool_calls:
                if not call.id and legacy:
                    nameless.append((line, call.name))
                elif not call.id:
                    named = f" ({call.name})" if call.name else ""
                    note = f"a call{named} without an id: no tool turn can answer it"
                    found.append(ParseWarning(line, note))
                elif call.id in open_calls:
                    note = f"two calls of one turn share the id {call.id!r}: one answer ends both"
                    found.append(ParseWarning(line, note))
                else:
                    open_calls[call.id] = (line, call.name)
    found.extend(_unanswered(open_calls, nameless, "has no tool turn answering it"))
    return sorted(found, key=lambda warning: warning.line)


def _answer(message: Message, open_calls: dict, nameless: list) -> str:
    """What a tool turn answers, taken from the open calls; why it cannot, or ""."""
    answer = message.tool_call_id
    if answer:
        if open_calls.pop(answer, None) is not None:
            return ""
        return f"a tool turn answers {answer!r}, no open call of the assistant turn before it"
    several = dict(message.source).get("tool_call_ids")
    if isinstance(several, list) and several:  # SWE-agent's: one turn for several calls
        for ident in several:
            if isinstance(ident, str):
                open_calls.pop(ident, None)
        count = len(several)
        return f"a tool turn answers {count} calls at once (tool_call_ids); the API wants one each"
    for index, (_, name) in enumerate(nameless):
        if not message.name or not name or name == message.name:
            del nameless[index]
            return ""
    return "a tool turn without a tool_call_id answers no call"


def _unanswered(open_calls: dict, nameless: list, why: str) -> list[ParseWarning]:
    notes = []
    for ident, (line, name) in open_calls.items():
        named = f" ({name})" if name else ""
        notes.append(ParseWarning(line, f"the call {ident!r}{named} {why} (the API refuses that)"))
    for line, name in nameless:
        named = f" ({name})" if name else ""
        notes.append(
            ParseWarning(line, f"a call{named} without an id {why} (the API refuses that)")
        )
    return notes


__all__ = ["unpaired"]

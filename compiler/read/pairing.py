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
    return Pairing().extend(messages).warnings()


class Pairing:
    """``unpaired`` as a scan that a longer history resumes: the warnings of the messages
    read so far, and the calls still open after the last of them. A history compiled
    again with one more turn (``compiler.incremental``) reads only that turn.

    Example:
        >>> from compiler.read.messages import ToolCall
        >>> scan = Pairing().extend([Message("assistant", None,
        ...     tool_calls=(ToolCall("search", "{}", "c1"),), line=1)])
        >>> [str(w) for w in scan.warnings()]
        ["line 1: the call 'c1' (search) has no tool turn answering it (the API refuses that)"]
        >>> scan.copy().extend([Message("tool", "[]", tool_call_id="c1", line=2)]).warnings()
        []
    """

    __slots__ = ("found", "nameless", "open_calls")

    def __init__(self):
        self.found: list[ParseWarning] = []
        self.open_calls: dict[str, tuple[int, str]] = {}  # id -> the line making it, its tool
        self.nameless: list[tuple[int, str]] = []  # open calls without an id (``function_call``)

    def copy(self) -> Pairing:
        twin = Pairing()
        twin.found, twin.open_calls = list(self.found), dict(self.open_calls)
        twin.nameless = list(self.nameless)
        return twin

    def extend(self, messages: Sequence[Message]) -> Pairing:
        found = self.found
        for message in messages:
            line = message.line or 1
            if message.role == "tool":
                note = _answer(message, self.open_calls, self.nameless)
                if note:
                    found.append(ParseWarning(line, note))
                continue
            if self.open_calls or self.nameless:
                why = "is not answered before the next turn"
                found.extend(_unanswered(self.open_calls, self.nameless, why))
                self.open_calls, self.nameless = {}, []
            if message.role == "assistant" and message.tool_calls:
                self._calls(message, line)
        return self

    def _calls(self, message: Message, line: int) -> None:
        found, open_calls = self.found, self.open_calls
        legacy = any(k == "function_call" for k, _ in message.source)
        for call in message.tool_calls:
            if not call.id and legacy:
                self.nameless.append((line, call.name))
            elif not call.id:
                named = f" ({call.name})" if call.name else ""
                note = f"a call{named} without an id: no tool turn can answer it"
                found.append(ParseWarning(line, note))
            elif call.id in open_calls:
                note = f"two calls of one turn share the id {call.id!r}: one answer ends both"
                found.append(ParseWarning(line, note))
            else:
                open_calls[call.id] = (line, call.name)

    def warnings(self) -> list[ParseWarning]:
        """The warnings of the history read so far, in the order of their lines."""
        end = _unanswered(self.open_calls, self.nameless, "has no tool turn answering it")
        if not self.found and not end:
            return []
        return sorted([*self.found, *end], key=lambda warning: warning.line)


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


__all__ = ["Pairing", "unpaired"]

"""Classify each message: speech, machine output, an options menu, a tool call.

Machine output is recognised by its content, whatever role it is filed under:
real corpora file tool output under ``user`` (SWE-agent observations), so a
role check alone would read state out of grep listings and stack traces.
An options menu is only ever an assistant turn: a customer who writes
"Option 1: Flight HAT148" is choosing, not listing.
"""

from __future__ import annotations

import json
import re
from enum import StrEnum

from compiler.messages import Message


class Kind(StrEnum):
    SPEECH = "speech"
    MACHINE = "machine_output"
    MENU = "option_menu"
    TOOL_CALL = "tool_call"


# Markers that only tools write. Each is anchored so that a person quoting
# one word of it in a sentence does not turn their turn into machine output.
_MACHINE_MARKERS = re.compile(
    r"""
      \(Open\ file:\ [^\n]*\)\s*\n\s*\(Current\ directory:      # SWE-agent footer
    | ^\[File:\ [^\n]+\(\d+\ lines\ total\)\]                   # SWE-agent file view
    | ^(?:Found\ \d+\ matches|No\ matches\ found|More\ than\ \d+\ files\ matched)\ for
    | ^Your\ proposed\ edit\ has\ introduced
    | ^Exit\ code:\ \d+
    | ^TOOL_OUTPUT\b
    | ^=+\ test\ session\ starts\ =+
    | ^(?:PASSED|FAILED|ERROR)\ [\w/.]+::
    | ^diff\ --git\ a/
    | ^Usage:\ \S+
    """,
    re.MULTILINE | re.VERBOSE,
)
_TRACEBACK = re.compile(r"^Traceback \(most recent call last\):", re.MULTILINE)
_FENCE = re.compile(r"```")
_NUMBERED_LINE = re.compile(r"^\s*\d+[:|]", re.MULTILINE)
_TRAILING_COMMAND = re.compile(r"```[^\n]*\n([^\n]*\n){1,3}```\s*\Z")

_MENU_MARKERS = re.compile(
    r"^\W*(?:Option\s+\d+\s*:|\*\*Flight\s+\d+:?\*\*|Flight\s+\d+\s*:|Available\s+Seats\s*:)",
    re.IGNORECASE | re.MULTILINE,
)
_ENUMERATED = re.compile(r"^\s*(?:\d+[.)]|[-*•])\s+", re.MULTILINE)
_OFFER_WORDS = re.compile(
    r"\b(?:available|options?|which (?:one|flight|option)|choose|select)\b",
    re.IGNORECASE,
)
_PRICE = re.compile(r"\$\s?\d")


def classify(messages: tuple[Message, ...]) -> tuple[Kind, ...]:
    """One ``Kind`` per message.

    Example:
        >>> from compiler.messages import Message
        >>> classify((Message("user", "open main.py please"),
        ...           Message("user", "Traceback (most recent call last):\\n  x")))
        (<Kind.SPEECH: 'speech'>, <Kind.MACHINE: 'machine_output'>)
    """
    kinds = []
    previous: Message | None = None
    for message in messages:
        kinds.append(_kind(message, previous))
        previous = message
    return tuple(kinds)


def _kind(message: Message, previous: Message | None) -> Kind:
    text = message.text
    if message.role == "assistant" and message.tool_calls and not text.strip():
        return Kind.TOOL_CALL
    if message.role == "tool" or looks_like_machine_output(text):
        return Kind.MACHINE
    if message.role == "user" and _answers_a_command(previous):
        return Kind.MACHINE
    if message.role == "assistant" and looks_like_option_menu(text):
        return Kind.MENU
    return Kind.SPEECH


def looks_like_machine_output(text: str) -> bool:
    """True for text a tool wrote: listings, file views, traces, pure JSON.

    Example:
        >>> looks_like_machine_output('{"status": "ok"}')
        True
        >>> looks_like_machine_output('I said {"status": "ok"} earlier')
        False
    """
    stripped = text.strip()
    if not stripped:
        return False
    if stripped[0] in "[{" and _is_json(stripped):
        return True
    if _MACHINE_MARKERS.search(text):
        return True
    trace = _TRACEBACK.search(text)
    if trace and not _inside_fence(text, trace.start()):
        return True
    lines = stripped.count("\n") + 1
    return lines >= 8 and len(_NUMBERED_LINE.findall(text)) * 2 >= lines


def looks_like_option_menu(text: str) -> bool:
    """True for an agent listing alternatives (flights, cabins, options).

    Example:
        >>> looks_like_option_menu("Option 1: HAT001 $120\\nOption 2: HAT002 $99")
        True
        >>> looks_like_option_menu("Your flight HAT001 is booked in economy.")
        False
    """
    if len(_MENU_MARKERS.findall(text)) >= 2:
        return True
    priced_items = sum(
        1 for line in text.splitlines() if _ENUMERATED.match(line) and _PRICE.search(line)
    )
    if priced_items >= 2 and _OFFER_WORDS.search(text):
        return True
    return False


def _answers_a_command(previous: Message | None) -> bool:
    """A user turn right after an agent ran a one-line fenced command is its output."""
    if previous is None or previous.role != "assistant":
        return False
    return bool(_TRAILING_COMMAND.search(previous.text.rstrip()))


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def _inside_fence(text: str, position: int) -> bool:
    return len(_FENCE.findall(text, 0, position)) % 2 == 1

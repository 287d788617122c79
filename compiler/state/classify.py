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

from compiler.read import Message, may_be_json
from compiler.state.prefilter import admits, checking_order, fold, required_literals


class Kind(StrEnum):
    SPEECH = "speech"
    MACHINE = "machine_output"
    MENU = "option_menu"
    TOOL_CALL = "tool_call"
    # shaped like tool output, in a turn of the operator or the agent (a system prompt
    # written as JSON, an agent answering in JSON records): not read for facts, as
    # machine output is not, and not a payload to compact, since they are not a tool's
    QUOTED = "quoted_output"


# The kinds under module names as well, for the classifier's per-message path: looking a
# member up on its enum costs several times reading a global, and every message asks.
_SPEECH, _MACHINE, _MENU = Kind.SPEECH, Kind.MACHINE, Kind.MENU
_TOOL_CALL, _QUOTED = Kind.TOOL_CALL, Kind.QUOTED


# Markers that only tools write, on a payload's first line. Anchoring them there
# keeps a person who quotes one of them mid-sentence a speaker.
_START_MARKERS = re.compile(
    r"""\s*(?:
      \[File:\ [^\n]+\(\d+\ lines\ total\)\]                     # SWE-agent file view
    | (?:Found\ \d+\ matches|No\ matches\ found|More\ than\ \d+\ files\ matched)\ for
    | Your\ proposed\ edit\ has\ introduced
    | Exit\ code:\ \d+
    | TOOL_OUTPUT\b
    | =+\ test\ session\ starts\ =+
    | (?:PASSED|FAILED|ERROR)\ [\w/.]+::
    | diff\ --git\ a/
    | Usage:\ \S+
    | Traceback\ \(most\ recent\ call\ last\):
    )""",
    re.VERBOSE,
)
# The characters a marker above opens with (tests/test_speed_c_classify.py derives them
# from the pattern); "" never matches them.
_START_CHARS = frozenset("[FNMYETPdU=")
# The shell footer SWE-agent appends to every observation.
_FOOTER = re.compile(
    r"\(Open file: [^\n]*\)\s*\n\s*\(Current directory: [^\n]*\)\s*(?:\n\s*bash-\$\s*)?\Z"
)
_TAIL_CHARS = 400
_FENCE = re.compile(r"```")
_NUMBERED_LINE = re.compile(r"\s*\d+[:|]")
_SPLIT_CHARS = 4096  # a text up to this long is split to find its lines (_mostly_numbered)

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
# what a text must contain for a marker or a price to be found in it (compiler.state.prefilter)
_MENU_NEEDS = checking_order(required_literals(_MENU_MARKERS))
_PRICE_NEEDS = checking_order(required_literals(_PRICE))


def classify(messages: tuple[Message, ...]) -> tuple[Kind, ...]:
    """One ``Kind`` per message.

    The opening user turn states the task. It is speech even when a harness
    wrapped it in a tool's footer (SWE-agent appends its shell prompt to the
    issue text), unless it starts like tool output.

    Example:
        >>> from compiler.read.messages import Message
        >>> classify((Message("user", "open main.py please"),
        ...           Message("user", "Traceback (most recent call last):\\n  x")))
        (<Kind.SPEECH: 'speech'>, <Kind.MACHINE: 'machine_output'>)
    """
    kinds = []
    task_seen = False
    for message in messages:
        kind, task_seen = classify_next(message, task_seen)
        kinds.append(kind)
    return tuple(kinds)


def classify_next(message: Message, task_seen: bool) -> tuple[Kind, bool]:
    """The kind of one message, given whether the task was stated."""
    kind = _kind(message)
    if message.role == "user" and not task_seen:
        task_seen = True
        if kind is _MACHINE and not _starts_like_output(message.text):
            kind = _SPEECH
    if message.role == "assistant":
        task_seen = True
    return kind, task_seen


_OWN_WORDS = frozenset({"system", "assistant"})


def _kind(message: Message) -> Kind:
    text = message.content or ""  # (``message.text``, without a property call per message)
    if message.role == "assistant" and message.tool_calls and not text.strip():
        return _TOOL_CALL
    if message.role == "tool":
        return _MACHINE
    if looks_like_machine_output(text):
        return _QUOTED if message.role in _OWN_WORDS else _MACHINE
    if message.role == "assistant" and looks_like_option_menu(text):
        return _MENU
    return _SPEECH


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
    if _starts_like_output(stripped) or _ends_in_footer(stripped):
        return True
    at = text.find("Traceback (most recent call last):")
    if at >= 0 and not _inside_fence(text, at):
        return True
    return _mostly_numbered(stripped)


def _starts_like_output(stripped: str) -> bool:
    stripped = stripped.lstrip()
    first = stripped[:1]
    if first in ("[", "{") and _is_json(stripped):
        return True
    # after ``lstrip`` (the whitespace ``\s*`` takes) a marker can only open with one of
    # these: a failed match of the whole alternation costs several times this check
    return first in _START_CHARS and _START_MARKERS.match(stripped) is not None


def _ends_in_footer(stripped: str) -> bool:
    """Whether a stripped text ends in the shell footer. The footer's last character that
    is not whitespace closes "(Current directory: …)" or the "bash-$" prompt, so a text
    ending in anything else is passed over without copying and searching its tail.

    Example:
        >>> _ends_in_footer("ok\\n(Open file: n/a)\\n(Current directory: /repo)\\nbash-$")
        True
        >>> _ends_in_footer("(Open file: n/a)\\n(Current directory: /repo) and more")
        False
    """
    return stripped[-1:] in (")", "$") and _FOOTER.search(stripped[-_TAIL_CHARS:]) is not None


def _mostly_numbered(stripped: str) -> bool:
    """A source listing: most of its first 20 lines start with a line number. Only
    those lines are looked at, and the count stops once it is decided either way."""
    if len(stripped) <= _SPLIT_CHARS:  # one split in C, where a walk took a call per line
        lines = stripped.split("\n", 20)
        if len(lines) < 8:
            return False
        del lines[20:]  # (the rest of the text, past the 20th newline)
    else:  # a long text: walked to its 20th newline, so that only its lines are split off
        ends = []  # where each of the first 20 lines ends
        at = stripped.find("\n")
        while at >= 0 and len(ends) < 20:
            ends.append(at)
            at = stripped.find("\n", at + 1)
        if len(ends) < 7:
            return False  # fewer than 8 lines
        lines = (stripped[: ends[19]] if len(ends) == 20 else stripped).split("\n")
    total, numbered = len(lines), 0
    for index, line in enumerate(lines):
        if _NUMBERED_LINE.match(line):
            numbered += 1
            if numbered * 2 >= total:
                return True
        elif (numbered + total - index - 1) * 2 < total:
            return False  # too few lines left to make half
    return False


def looks_like_option_menu(text: str) -> bool:
    """True for an agent listing alternatives (flights, cabins, options).

    Example:
        >>> looks_like_option_menu("Option 1: HAT001 $120\\nOption 2: HAT002 $99")
        True
        >>> looks_like_option_menu("Your flight HAT001 is booked in economy.")
        False
    """
    folded = fold(text)
    if admits(_MENU_NEEDS, folded) and _two_markers(text):
        return True
    if not admits(_PRICE_NEEDS, folded):
        return False  # no line names a price
    priced_items = 0
    for line in text.splitlines():
        # a price needs a "$": most lines are passed over without a regex run
        if "$" in line and _ENUMERATED.match(line) and _PRICE.search(line):
            priced_items += 1
            if priced_items == 2:
                return _OFFER_WORDS.search(text) is not None
    return False


# What a line can start with for a menu marker to begin there: a marker opens with "Option",
# "Flight", "Available" (only these ASCII letters match those under IGNORECASE) or, after
# ``\W*``, with any character that is not a word character.
_MARKER_LETTERS = frozenset("ofaOFA")


def _two_markers(text: str) -> bool:
    """``len(_MENU_MARKERS.findall(text)) >= 2``, trying only where a line starts (the
    only place ``^`` holds) and a marker can begin, rather than at every character.

    Example:
        >>> _two_markers("Option 1: a\\n- Option 2: b"), _two_markers("Option 1: a\\nOption b")
        (True, False)
    """
    found, at, size = 0, 0, len(text)
    while at < size:  # ``at``: where a line starts
        char = text[at]
        if char in _MARKER_LETTERS or not (char.isalnum() or char == "_"):
            match = _MENU_MARKERS.match(text, at)
            if match is not None:
                found += 1
                if found == 2:
                    return True
                at = match.end() - 1  # (a match holds at least one character)
        at = text.find("\n", at) + 1
        if not at:
            break
    return False


def _is_json(text: str) -> bool:
    """Whether ``text`` parses as JSON; nesting too deep for the parser counts as not.

    Example:
        >>> _is_json('{"a": [1]}'), _is_json("[" * 5000 + "]" * 5000), _is_json("[" * 5000)
        (True, False, False)
    """
    if not may_be_json(text):
        return False
    try:
        json.loads(text)
    except (ValueError, RecursionError):
        return False
    return True


def _inside_fence(text: str, position: int) -> bool:
    return len(_FENCE.findall(text, 0, position)) % 2 == 1

"""Plain-text transcripts: ``role: text`` lines, read as messages (see ``formats``).

A turn starts on a line whose role word sits at column 0 (``_TURN``); continuation lines
belong to the turn above. A ``---`` line followed by a ``# <id> (<model>)`` header, or by
nothing, ends a transcript (the nebius corpus layout). Display text does not record which
tool was called: ``pair_tool_calls`` links each assistant turn to the tool turns after it.
The few-shot records' display text (``formats``) is read here too.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace

from compiler.read.items import ROLE_NAMES, Format, Parsed
from compiler.read.messages import Message, ParseWarning, ToolCall

_ROLE_WORD = "|".join(sorted(ROLE_NAMES, key=lambda word: (-len(word), word)))
# re.ASCII: under Unicode case folding "ſystem" would match "system".
_TURN = re.compile(
    rf"(?P<lead>[ \t>*_-]{{0,12}}?)(?:\*\*|__)?(?P<role>{_ROLE_WORD})"
    r"(?:[ \t]*\[(?P<name>[^\]]{0,80})\])?[*_]{0,2}[ \t]*:[*_]{0,2}(?=\s|$)(?P<rest>.*)",
    re.IGNORECASE | re.ASCII,
)
_HEADER = re.compile(r"#[ \t]*(?P<id>\S+)[ \t]+\((?P<model>[^()]*)\)[ \t]*")


def split_lines(text: str) -> list[str]:
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def text_entries(text: str) -> list[tuple[str, Parsed]]:
    lines = text.split("\n")
    blocks = _blocks(lines)
    entries = []
    for number, (start, end) in enumerate(blocks, start=1):
        parsed = read_text(lines[start:end], start + 1)
        fallback = "transcript" if len(blocks) == 1 else f"block{number}"
        entries.append((dict(parsed.meta).get("id", fallback), parsed))
    return entries


def starts_turn(line: str) -> bool:
    """Whether ``line`` opens a turn at column 0 (``user: hi``, ``**Assistant:** ok``).

    Example:
        >>> starts_turn("user: hi"), starts_turn("  user: hi"), starts_turn('{"role": "user"}')
        (True, False, False)
    """
    turn = _TURN.match(line)
    return turn is not None and not turn["lead"]


def _blocks(lines: list[str]) -> list[tuple[int, int]]:
    """Index ranges of the transcripts, split at ``---`` lines that end one.

    A ``---`` ends a transcript only if what follows it opens one (``_opens``): a
    ``# <id> (<model>)`` header with a turn after it, or the end of the text; and the
    transcript it ends has such a header before its first turn (``_headed``). Elsewhere it
    is a markdown rule in a turn, followed, say, by a ``# Summary (draft)`` heading.

    Example:
        >>> _blocks(["# a#0 (m)", "user: hi", "---", "# a#1 (m)", "user: yo"])
        [(0, 2), (3, 5)]
        >>> _blocks(["# a#0 (m)", "user: hi", "---", "# Plan (v2)", "1. edit a.py"])
        [(0, 5)]
    """
    bounds, start = [], 0
    for index, line in enumerate(lines):
        if line.rstrip() != "---":
            continue
        if _opens(lines, index + 1) and _headed(lines[start:index]):
            bounds.append((start, index))
            start = index + 1
    return [*bounds, (start, len(lines))]


def _opens(lines: list[str], index: int) -> bool:
    """Whether ``lines`` from ``index`` open a transcript: nothing but blank lines, or a
    ``# <id> (<model>)`` header whose next line that is neither blank nor a ``#`` line
    starts a turn at column 0 (or there is none)."""
    while index < len(lines) and not lines[index].strip():
        index += 1
    if index == len(lines):
        return True
    if not _HEADER.fullmatch(lines[index]):
        return False
    for line in lines[index + 1 :]:
        if line.strip() and not line.startswith("#"):
            return starts_turn(line)
    return True


def _headed(lines: list[str]) -> bool:
    """Whether a ``# <id> (<model>)`` header comes before the first turn of ``lines``:
    one inside a turn is a heading of the text (``# Summary (draft)``).

    Example:
        >>> _headed(["# a#0 (m1)", "user: hi"]), _headed(["user: hi", "# Summary (draft)"])
        (True, False)
    """
    for line in lines:
        if _HEADER.fullmatch(line):
            return True
        turn = _TURN.match(line)
        if turn is not None and not turn["lead"]:
            return False
    return False


def read_text(lines: list[str], first_line: int) -> Parsed:
    """``role: text`` turns from lines that begin on line ``first_line``."""
    starts, quoted = _turn_starts(lines)
    head = starts[0][0] if starts else len(lines)
    warnings = _preamble_warnings(lines[:head], first_line, turns=bool(starts))
    for index, word, usual in quoted:
        note = f"'{word}:' read as text of the turn above; this transcript's turns use '{usual}:'"
        warnings.append(ParseWarning(first_line + index, note))
    messages = []
    for number, (index, match) in enumerate(starts):
        end = starts[number + 1][0] if number + 1 < len(starts) else len(lines)
        warnings += _glued(match, lines, index + 1, end, first_line)
        message = _turn(match, lines[index + 1 : end], first_line + index)
        if message is None:
            role = ROLE_NAMES[match["role"].lower()]
            warnings.append(ParseWarning(first_line + index, f"empty {role} turn dropped"))
        else:
            messages.append(message)
    meta = _header_meta(lines[:head])
    messages, unpaired = pair_tool_calls(messages)
    warnings = sorted([*warnings, *unpaired], key=lambda warning: warning.line)
    return Parsed(tuple(messages), tuple(warnings), Format.TEXT, meta)


def _turn_starts(lines: list[str]) -> tuple[list[_Start], list[tuple[int, str, str]]]:
    r"""Lines that start a turn (column-0 role lines, else decorated ones), and role lines
    read as text instead, each as (line index, its word, the word its role's turns use).

    A line opening with another word for a role (``Customer:``, ``Agent:``, ``Model:``)
    than the one the role's first turn used is a form quoted inside a turn ("The ticket
    lists:\nCustomer: John Smith"), not a new speaker. The API's own names (``user:``,
    ``assistant:``, ``system:``, ``tool:``) always start a turn.

    Example:
        >>> text = "user: who?\nassistant: It lists:\nCustomer: Jo\nuser: ok"
        >>> starts, quoted = _turn_starts(text.split("\n"))
        >>> [i for i, _ in starts], quoted
        ([0, 1, 3], [(2, 'Customer', 'user')])
    """
    found = [(index, match) for index, line in enumerate(lines) if (match := _TURN.match(line))]
    chosen = [(index, match) for index, match in found if not match["lead"]] or found
    first: dict[str, str] = {}  # role -> the word its first turn used
    for _, match in chosen:
        word = match["role"].lower()
        first.setdefault(ROLE_NAMES[word], word)
    starts, quoted = [], []
    for index, match in chosen:
        word = match["role"].lower()
        role = ROLE_NAMES[word]
        if word == role or first[role] == word:
            starts.append((index, match))
        else:
            quoted.append((index, match["role"], first[role]))
    return starts, quoted


_Start = tuple[int, re.Match]
# ``assistant:ok``, a role word and its colon with no space after: read as text of the turn
# above (``user:pass`` in a config is not a turn), and said so
_GLUED = re.compile(r"(user|assistant|system|tool)[ \t]*:(?=[^\s/:])", re.IGNORECASE | re.ASCII)


def _glued(match: re.Match, lines: list[str], start: int, end: int, first_line: int) -> list:
    """A warning for each line of a spoken turn that looks like a turn but for the space
    after its colon (tool output quotes such lines: it is not searched).

    Example:
        >>> turn = _TURN.match("user: a")
        >>> _glued(turn, ["user: a", "assistant:b"], 1, 2, 1)[0].message
        "'assistant:b' read as text of the turn above; a turn needs a space after 'assistant:'"
    """
    if ROLE_NAMES[match["role"].lower()] == "tool":
        return []
    found = []
    for index in range(start, end):
        glued = _GLUED.match(lines[index])
        if glued is not None and not _TURN.match(lines[index]):
            word = glued[1]
            shown = lines[index][:40]
            note = f"'{shown}' read as text of the turn above; a turn needs a space after '{word}:'"
            found.append(ParseWarning(first_line + index, note))
    return found


def _preamble_warnings(lines: list[str], first_line: int, *, turns: bool) -> list[ParseWarning]:
    """One warning for text before the first turn; ``#`` lines are harmless."""
    ignored = [i for i, line in enumerate(lines) if line.strip() and not line.startswith("#")]
    if not ignored:
        return []
    low, high = first_line + ignored[0], first_line + ignored[-1]
    span = f"line {low}" if low == high else f"lines {low}-{high}"
    what = "text before the first turn" if turns else "text without any turn"
    messages = sum(_is_message_line(lines[i]) for i in ignored)
    if messages:  # JSON messages above role lines: the file mixes two formats
        held = "1 line holds" if messages == 1 else f"{messages} lines hold"
        span += f"; {held} JSON messages: a transcript is one format throughout"
    return [ParseWarning(low, f"{what} ignored ({span})")]


def _is_message_line(line: str) -> bool:
    """Whether ``line`` is a JSON message (an object with a ``role``), or a list of them.

    Example:
        >>> _is_message_line('{"role": "user", "content": "a"}'), _is_message_line("{x}")
        (True, False)
    """
    if '"role"' not in line:
        return False
    try:
        value = json.loads(line)
    except (ValueError, RecursionError):
        return False
    items = value if isinstance(value, list) else [value]
    return any(isinstance(item, dict) and "role" in item for item in items)


def _header_meta(lines: list[str]) -> tuple[tuple[str, str], ...]:
    """``id`` and ``model`` from the last ``# <id> (<model>)`` header line."""
    for line in reversed(lines):
        if match := _HEADER.fullmatch(line):
            return (("id", match["id"]), ("model", match["model"].strip()))
    return ()


def _turn(match: re.Match, body: list[str], line: int) -> Message | None:
    """The message a role line and its continuation lines make, or None if empty."""
    role = ROLE_NAMES[match["role"].lower()]
    name = (match["name"] or "").strip() or None
    content = "\n".join(_trim_blank([match["rest"].lstrip(" \t"), *_dedent(body)]))
    if role == "assistant" and content == "None":
        return Message(role, None, name=name, line=line)
    if not content and role != "tool":
        return None
    return Message(role, content, name=name, line=line)


def _dedent(body: list[str]) -> list[str]:
    """Strip the two-space continuation indent if every non-blank line has it."""
    filled = [line for line in body if line.strip()]
    if not filled or not all(line.startswith("  ") for line in filled):
        return body
    return [line[2:] if line.startswith("  ") else line for line in body]


def _trim_blank(lines: list[str]) -> list[str]:
    filled = [index for index, line in enumerate(lines) if line.strip()]
    return lines[filled[0] : filled[-1] + 1] if filled else []


def pair_tool_calls(messages: list[Message]) -> tuple[list[Message], list[ParseWarning]]:
    """Give each assistant turn the calls its following tool turns answer, linked by id,
    and warn of a call no turn answers or an answer to no call (the chat API refuses
    both).

    Text does not say which tool was called; a call is named after the tool turn's
    ``[name]`` when it has one, else ``""``, with empty arguments. Its id is made from
    the line of the tool turn answering it (``call_<line>``; an unanswered call, from the
    assistant's line), so the same text always gets the same ids.

    Example:
        >>> turns = [Message("assistant", None, line=1), Message("tool", "a.py", line=2)]
        >>> paired, warnings = pair_tool_calls(turns)
        >>> paired[0].tool_calls, paired[1].tool_call_id, warnings
        ((ToolCall(name='', arguments='', id='call_2'),), 'call_2', [])
    """
    out = list(messages)
    warnings = []
    for index, message in enumerate(out):
        if message.role == "tool" and out[index].tool_call_id is None:
            note = "a tool turn that follows no assistant turn answers no call"
            warnings.append(ParseWarning(message.line or 1, note))
        if message.role != "assistant" or message.tool_calls:
            continue
        answers, after = [], index + 1
        while after < len(out) and out[after].role == "tool":
            answer = out[after]
            call = ToolCall(name=answer.name or "", arguments="", id=f"call_{answer.line}")
            answers.append(call)
            out[after] = replace(answer, tool_call_id=call.id)
            after += 1
        if not answers and message.content is None:
            answers.append(ToolCall(name="", arguments="", id=f"call_{message.line}"))
            note = "assistant: None with no tool turn after it: its call is unanswered"
            warnings.append(ParseWarning(message.line or 1, note))
        if answers:
            out[index] = replace(message, tool_calls=tuple(answers))
    return out, warnings

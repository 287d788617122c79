"""Reading transcripts: every input shape we meet, as one tuple of messages.

``formats(text)`` reads one transcript, ``formats_many(text)`` a corpus file
that holds several, ``read_message_list(items)`` an already decoded list of
OpenAI-shaped message dicts. The shapes, tried in this order:

1. JSON (text starting with ``[`` or ``{``): an array of messages; an object
   with ``messages``; a tau-bench record (``traj``); a SWE-agent ``.traj``
   (``history``; tool output stays under ``user`` where the file put it); a
   few-shot record (``messages_display``); one message object; an array of
   records. Invalid JSON is reported with its line and column and the text
   is read as plain text instead.
2. JSONL: one JSON object per line, each a message or a record. Bad lines are
   reported by number and skipped.
3. Plain text: ``role: text`` lines (``compiler.read.text_turns``). A ``---`` line followed
   by a ``# <id> (<model>)`` header, or by nothing, ends a transcript: that is
   the nebius corpus layout.

Decisions worth knowing:

- Nothing disappears silently: every skipped item, dropped turn, ignored line
  or ignored further transcript leaves a ``ParseWarning``.
- A turn starts on a line whose role word sits at column 0 (``**User:**``
  counts). Decorated lines (``> user:``, ``- model:``, indented) start turns
  only in a text that has no column-0 turn at all, so an indented
  ``model: x`` inside tool output never splits a turn.
- Empty turns are dropped with a warning, except ``tool`` turns: a tool that
  returned nothing still answered its call, and dropping the answer would
  orphan the call.
- Display text does not record which tool was called. An ``assistant`` turn
  followed by ``tool`` turns gets one ``ToolCall`` per following tool turn,
  named after the tool turn's ``[name]`` if it has one, else ``""``, with
  empty arguments and an id made from the tool turn's line (``call_12``),
  which the tool turn answers. ``assistant: None`` means content ``None`` (and
  at least one such call). This holds for plain text too. A call left
  unanswered, or a tool turn after no assistant turn, is warned of: the chat
  API refuses both.
- Without source text (``read_message_list``), an item's "line" is
  ``base_line + index``: the 1-based item number by default. Read from JSON
  text, it is the real line the element starts on; warnings also name the
  index (``traj[3]``) since one-line JSON puts everything on line 1.
"""

from __future__ import annotations

import bisect
import json
import math
import re
from collections.abc import Callable
from dataclasses import replace
from typing import Any, NamedTuple

from compiler.errors import TranscriptError
from compiler.read.items import (
    ROLE_NAMES,
    Format,
    Parsed,
    indexed,
    json_kind,
    parsed_items,
    read_message_list,
)
from compiler.read.messages import ParseWarning
from compiler.read.pairing import unpaired
from compiler.read.text_turns import read_text, split_lines, starts_turn, text_entries

# Which key makes a JSON object a transcript record, the type it must have,
# and the format it means; first match wins.
_RECORD_KEYS = (
    ("messages", list, Format.MESSAGES),
    ("traj", list, Format.TAU_BENCH),
    ("history", list, Format.SWE_AGENT),
    ("messages_display", str, Format.DISPLAY),
)

_JSON_SPACE = re.compile(r"[ \t\n\r]*")
# a byte-order mark or a zero-width character at the start of a line: invisible, and in
# the way of the role word or the JSON that follows it
_INVISIBLE_LEAD = re.compile("^[\ufeff\u200b\u200c\u200d\u2060]+", re.MULTILINE)


class _NotFinite(ValueError):
    """A number JSON cannot hold: NaN, Infinity, or a literal too large for a float."""

    def __init__(self, literal: str, why: str):
        super().__init__(why)
        self.literal = literal


def _constant(literal: str):
    raise _NotFinite(literal, f"{literal} is not a JSON number")


def _finite(literal: str) -> float:
    value = float(literal)
    if value in (math.inf, -math.inf):
        sign = "-" if value < 0 else ""
        raise _NotFinite(literal, f"{literal} is too large to read: it would be {sign}Infinity")
    return value


# NaN and Infinity (written, or reached by a literal like 1e999) are refused rather than
# read: they are not JSON, and would come back out as null.
_DECODER = json.JSONDecoder(strict=False, parse_constant=_constant, parse_float=_finite)


def formats(text: str) -> Parsed:
    """Read one transcript from ``text``, whatever its shape.

    A file holding several transcripts yields the first, with a warning
    naming how many were ignored (``formats_many`` reads them all), and the
    warnings of the ignored ones. Raises
    ``TranscriptError`` if no turn can be found.

    Example:
        >>> parsed = formats("# demo\\nuser: hi\\nassistant: hello\\n  there")
        >>> [(m.role, m.content, m.line) for m in parsed.messages]
        [('user', 'hi', 2), ('assistant', 'hello\\nthere', 3)]
        >>> parsed.format == "text", parsed.warnings
        (True, ())
    """
    found = formats_many(text)
    first = found[0][1]
    if len(found) == 1:
        return first
    next_id, next_parsed = found[1]
    note = ParseWarning(
        next_parsed.messages[0].line or 1,
        f"{len(found) - 1} further transcript(s) ignored (next: {next_id});"
        " read them with formats_many",
    )
    # what the reader said of the lines it ignored goes with them: a malformed record
    # after the second is named, not lost with the transcript it was filed under
    ignored = [warning for _, parsed in found[1:] for warning in parsed.warnings]
    return replace(first, warnings=(*first.warnings, note, *ignored))


def formats_many(text: str) -> tuple[tuple[str, Parsed], ...]:
    """Read every transcript in ``text`` as ``(transcript_id, Parsed)`` pairs.

    Ids: ``<instance-id>#<n>`` from a nebius header, ``task<id>-trial<n>``
    for tau-bench records, ``line<N>`` for JSONL records, ``record<i>`` for
    other records in a JSON array, ``transcript`` for a lone transcript.
    Warnings about skipped pieces go to the transcript before them (or the
    first one). Raises ``TranscriptError`` if no transcript holds a turn. ``text`` may
    be UTF-8 bytes, as a file reads; anything else is a ``TranscriptError`` too.

    Example:
        >>> text = "# a#0 (m1)\\nuser: hi\\n---\\n# a#1 (m2)\\nuser: yo\\n---\\n"
        >>> [(i, p.messages[0].content) for i, p in formats_many(text)]
        [('a#0', 'hi'), ('a#1', 'yo')]
        >>> dict(formats_many(text)[1][1].meta)
        {'id': 'a#1', 'model': 'm2'}
    """
    text = _as_text(text).replace("\r\n", "\n").replace("\r", "\n")
    if _INVISIBLE_LEAD.search(text):  # files joined with cat keep each one's byte-order mark
        text = _INVISIBLE_LEAD.sub("", text)
    entries, line, column = _read_any(text)
    found, leftover = _collect(entries)
    if not found:
        raise TranscriptError("no recognisable turn", line=line, column=column, warnings=leftover)
    return found


def _as_text(text) -> str:
    """The transcript as text: UTF-8 bytes decoded; any other type refused by name.

    Example:
        >>> _as_text(b"user: caf\\xc3\\xa9")
        'user: café'
    """
    if isinstance(text, str):
        return text
    if not isinstance(text, bytes | bytearray):
        reason = f"a transcript is text (str, or UTF-8 bytes), not {type(text).__name__}"
        raise TranscriptError(reason)
    try:
        return bytes(text).decode("utf-8")
    except UnicodeDecodeError as error:
        # counted as the text is read: "\r\n", "\r" and "\n" each end a line, and a
        # column counts characters (what comes before the bad byte is valid UTF-8)
        before = bytes(text[: error.start]).decode("utf-8")
        lines = before.replace("\r\n", "\n").replace("\r", "\n").split("\n")
        line, column = len(lines), len(lines[-1]) + 1
        reason = f"not UTF-8 text (byte {error.start}: {error.reason})"
        raise TranscriptError(reason, line=line, column=column) from None


# -- assembling --------------------------------------------------------------

_Entry = tuple[str, Parsed]


def _read_any(text: str) -> tuple[list[_Entry], int, int]:
    """The transcripts in ``text``, and where to point if none holds a turn."""
    start = _JSON_SPACE.match(text).end()
    if text[start : start + 1] not in ("[", "{"):
        lines = text.split("\n")
        if _looks_jsonl(lines):  # JSONL after a line that is not an object
            return _jsonl_entries(lines), 1, 1
        return text_entries(text), 1, 1
    value, error = _decode(text, start)
    if error is None:
        doc = _Doc(text)
        return _json_entries(value, doc, start), doc.line(start), doc.column(start)
    lines = text.split("\n")
    if _looks_jsonl(lines):
        return _jsonl_entries(lines), 1, 1
    note = ParseWarning(
        error.line, f"not valid JSON ({error.message}, column {error.column}); read as text"
    )
    return [("", Parsed((), (note,))), *text_entries(text)], error.line, error.column


def _collect(entries: list[_Entry]) -> tuple[tuple[_Entry, ...], tuple[ParseWarning, ...]]:
    """Keep entries that hold messages; move the others' warnings to a neighbour."""
    kept: list[list] = []
    pending: list[ParseWarning] = []
    for ident, parsed in entries:
        if parsed.messages:
            kept.append([ident, _add_warnings(parsed, pending, before=True)])
            pending = []
        elif kept:
            kept[-1][1] = _add_warnings(kept[-1][1], parsed.warnings)
        else:
            pending.extend(parsed.warnings)
    ids = _unique([ident for ident, _ in kept])
    return tuple(zip(ids, (parsed for _, parsed in kept), strict=True)), tuple(pending)


def _add_warnings(parsed: Parsed, extra, *, before: bool = False) -> Parsed:
    if not extra:
        return parsed
    warnings = (*extra, *parsed.warnings) if before else (*parsed.warnings, *extra)
    return replace(parsed, warnings=warnings)


def _unique(ids: list[str]) -> list[str]:
    """The ids, a repeated one suffixed ``~2``, ``~3``… so each is distinct."""
    seen: set[str] = set()
    last_suffix: dict[str, int] = {}
    out = []
    for ident in ids:
        candidate, n = ident, last_suffix.get(ident, 1)
        while candidate in seen:
            n += 1
            candidate = f"{ident}~{n}"
        last_suffix[ident] = n
        seen.add(candidate)
        out.append(candidate)
    return out


# -- JSON --------------------------------------------------------------------


class _JsonError(NamedTuple):
    line: int
    column: int
    message: str


def _decode(text: str, start: int) -> tuple[Any, _JsonError | None]:
    """The JSON value filling ``text`` from ``start``, or where it broke."""
    try:
        value, end = _DECODER.raw_decode(text, start)
        end = _JSON_SPACE.match(text, end).end()
        if end != len(text):
            raise json.JSONDecodeError("Extra data", text, end)
    except json.JSONDecodeError as error:
        return None, _JsonError(error.lineno, error.colno, error.msg)
    except _NotFinite as error:
        found = re.compile(rf"(?<![\w\".]){re.escape(error.literal)}(?![\w.])").search(text, start)
        at = found.start() if found else start
        line = text.count("\n", 0, at) + 1
        return None, _JsonError(line, at - text.rfind("\n", 0, at), str(error))
    except (ValueError, RecursionError) as error:
        # Nested too deeply, or an integer longer than Python will convert.
        line = text.count("\n", 0, start) + 1
        column = start - text.rfind("\n", 0, start)
        why = "nested too deeply" if isinstance(error, RecursionError) else str(error)[:80]
        return None, _JsonError(line, column, why)
    return value, None


class _Doc:
    """A valid JSON text, answering where values start and on which line."""

    def __init__(self, text: str, base_line: int = 1):
        self.text = text
        self.base_line = base_line
        self._breaks = [m.start() for m in re.finditer("\n", text)]
        self._cache: dict[int, Any] = {}
        self._repeated: dict[tuple[int, str], int] = {}

    def line(self, pos: int) -> int:
        return self.base_line + bisect.bisect_left(self._breaks, pos)

    def column(self, pos: int) -> int:
        index = bisect.bisect_left(self._breaks, pos)
        return pos - (self._breaks[index - 1] + 1 if index else 0) + 1

    def elements(self, pos: int) -> list[int]:
        """Where each element of the array starting at ``pos`` starts."""
        if pos not in self._cache:
            self._cache[pos] = [start for _, start in self._walk(pos, keyed=False)]
        return self._cache[pos]

    def members(self, pos: int) -> dict[str, int]:
        """Where each member value of the object starting at ``pos`` starts (the last
        one's, for a key the object repeats: the value ``json`` reads)."""
        if pos not in self._cache:
            members: dict[str, int] = {}
            for key, start in self._walk(pos, keyed=True):
                if key in members:
                    self._repeated[pos, key] = self._repeated.get((pos, key), 1) + 1
                members[key] = start
            self._cache[pos] = members
        return self._cache[pos]

    def repeats(self, pos: int, key: str) -> int:
        """How many times the object starting at ``pos`` holds ``key``."""
        self.members(pos)
        return self._repeated.get((pos, key), 1 if key in self._cache[pos] else 0)

    def _walk(self, pos: int, *, keyed: bool):
        text, skip = self.text, _JSON_SPACE
        pos = skip.match(text, pos + 1).end()
        while text[pos] not in "]}":
            key = None
            if keyed:
                key, pos = _DECODER.raw_decode(text, pos)
                pos = skip.match(text, skip.match(text, pos).end() + 1).end()
            yield key, pos
            pos = skip.match(text, _value_end(text, pos)).end()
            if text[pos] == ",":
                pos = skip.match(text, pos + 1).end()


_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BRACKET = re.compile(r'["\[\]{}]')


def _value_end(text: str, pos: int) -> int:
    """Where the JSON value starting at ``pos`` of a text that decoded ends. The decoder
    says, unless the value is nested deeper than the stack left here allows (the text was
    read higher up it): then its brackets are counted, strings stepped over.

    Example:
        >>> text = '[' * 3000 + '"]"' + ']' * 3000 + ', 1'
        >>> _value_end(text, 0) == len(text) - 3
        True
    """
    try:
        return _DECODER.raw_decode(text, pos)[1]
    except RecursionError:
        depth, at = 0, pos
        while True:
            found = _BRACKET.search(text, at)
            if found.group() == '"':
                at = _STRING.match(text, found.start()).end()
                continue
            depth += 1 if found.group() in "[{" else -1
            at = found.end()
            if depth == 0:
                return at


def _json_entries(value: Any, doc: _Doc, start: int) -> list[_Entry]:
    """The transcripts in one decoded JSON document."""
    if isinstance(value, list) and _record_kind(next(_dicts(value), None)):
        starts = doc.elements(start)
        return [
            _record_entry(item, doc, starts[index], f"record{index}", f"[{index}]")
            for index, item in enumerate(value)
        ]
    if isinstance(value, dict) and _record_kind(value):
        return [_record_entry(value, doc, start, "transcript", "the object")]
    if isinstance(value, dict) and ("role" in value or "content" in value):
        parsed = _items([value], [doc.line(start)], _named("the object"), Format.MESSAGES)
        twice = _repeated_keys(doc, [start], [value], _named("the object"), start)
        return [("transcript", _add_warnings(parsed, twice, before=True))]
    if isinstance(value, dict):
        keys = ", ".join(key for key, _, _ in _RECORD_KEYS)
        note = f"JSON object has none of the keys {keys}, role; no messages"
        for key, kind, _ in _RECORD_KEYS:  # the key is there, holding the wrong thing
            if key in value:
                wanted = "an array" if kind is list else "a string"
                note = f"the object's {key!r} is {json_kind(value[key])}, not {wanted}; no messages"
                break
        return [("", Parsed((), (ParseWarning(doc.line(start), note),)))]
    starts = doc.elements(start)
    lines = [doc.line(pos) for pos in starts]
    parsed = _items(value, lines, indexed("messages"), Format.MESSAGES)
    twice = _repeated_keys(doc, starts, value, indexed("messages"), start)
    return [("transcript", _add_warnings(parsed, twice, before=True))]


_MESSAGE_KEYS = ("role", "content", "tool_calls", "tool_call_id")


def _repeated_keys(doc: _Doc, starts: list[int], items: list, where, pos: int) -> list:
    """A warning for each of a message's own keys that its object gives twice: ``json``
    keeps the last, and the value before it would vanish unreported. The objects are
    walked only where the text of the value at ``pos`` names those keys more often than
    the messages hold them (a key spelt with an escape, ``"\\u0072ole"``, is not counted).

    Example:
        >>> text = '[{"role": "user", "content": "a", "content": "b"}]'
        >>> doc = _Doc(text)
        >>> [w.message for w in _repeated_keys(doc, doc.elements(0), json.loads(text), str, 0)]
        ["0 holds the key 'content' 2 times; only the last was read"]
    """
    if not starts:
        return []
    text = doc.text
    end = _value_end(text, starts[-1])  # (the last message's end: a short walk)
    named = sum(text.count(f'"{key}"', pos, end) for key in _MESSAGE_KEYS)
    held = sum(key in item for item in items if type(item) is dict for key in _MESSAGE_KEYS)
    if named <= held:
        return []
    notes = []
    for index, (item, start) in enumerate(zip(items, starts, strict=True)):
        if type(item) is not dict:
            continue
        for key in _MESSAGE_KEYS:
            times = doc.repeats(start, key)
            if times > 1:
                said = f"{where(index)} holds the key {key!r} {times} times; only the last was read"
                notes.append(ParseWarning(doc.line(start), said))
    return notes


def _items(items: list, lines, where, fmt: Format) -> Parsed:
    """``parsed_items``, and a warning for each call or answer the chat API would refuse to
    pair (``pairing.unpaired``): message objects keep what they were given."""
    parsed = parsed_items(items, lines, where, fmt)
    return _add_warnings(parsed, unpaired(parsed.messages))


def _dicts(items: list):
    return (item for item in items if isinstance(item, dict))


def _record_kind(value: Any) -> tuple[str, Format] | None:
    """The key that makes ``value`` a transcript record, and its format."""
    if not isinstance(value, dict):
        return None
    for key, kind, fmt in _RECORD_KEYS:
        if isinstance(value.get(key), kind):
            return key, fmt
    return None


def _record_entry(record: Any, doc: _Doc, pos: int, fallback_id: str, where: str) -> _Entry:
    """One record (tau-bench, SWE-agent, few-shot, ``messages``) as a transcript."""
    kind = _record_kind(record)
    if kind is None:
        note = f"{where} is not a transcript record (no messages, traj or history); skipped"
        return "", Parsed((), (ParseWarning(doc.line(pos), note),))
    key, fmt = kind
    ident = _record_id(record, fallback_id)
    value_pos = doc.members(pos)[key]
    if fmt is Format.DISPLAY:
        parsed = _embed(read_text(split_lines(record[key]), 1), doc.line(value_pos), key)
    else:
        starts = doc.elements(value_pos)
        lines = [doc.line(p) for p in starts]
        parsed = _items(record[key], lines, indexed(key), fmt)
        twice = _repeated_keys(doc, starts, record[key], indexed(key), value_pos)
        parsed = _add_warnings(parsed, twice, before=True)
    if not parsed.messages:
        parsed = _add_warnings(parsed, [ParseWarning(doc.line(pos), f"{ident}: no message")])
    times = doc.repeats(pos, key)
    if times > 1:  # json keeps the last value: the earlier ones would vanish unreported
        note = f"{where} holds the key {key!r} {times} times; only the last was read"
        parsed = _add_warnings(parsed, [ParseWarning(doc.line(pos), note)], before=True)
    others = [k for k, kind, _ in _RECORD_KEYS if k != key and isinstance(record.get(k), kind)]
    if others:  # one record is one transcript: the turns under the other keys go unread
        unread = ", ".join(repr(k) for k in others)
        note = f"{where} also holds {unread}, another transcript key; only {key!r} was read"
        parsed = _add_warnings(parsed, [ParseWarning(doc.line(pos), note)], before=True)
    return ident, replace(parsed, meta=_record_meta(record), record=record)


def _record_id(record: dict, fallback: str) -> str:
    task, trial = record.get("task_id"), record.get("trial")
    if not isinstance(task, int | str) or isinstance(task, bool):
        return fallback
    if isinstance(trial, int | str) and not isinstance(trial, bool):
        return f"task{task}-trial{trial}"
    return f"task{task}"


def _record_meta(record: dict) -> tuple[tuple[str, str], ...]:
    meta = []
    for key in ("task_id", "trial", "reward"):
        value = record.get(key)
        if isinstance(value, str):
            meta.append((key, value))
        elif isinstance(value, int | float) and not isinstance(value, bool):
            meta.append((key, json.dumps(value)))
    return tuple(meta)


def _embed(parsed: Parsed, line: int, key: str) -> Parsed:
    """Text read from inside a JSON string, placed on the line of that string."""
    return replace(
        parsed,
        messages=tuple(replace(m, line=line) for m in parsed.messages),
        warnings=tuple(
            ParseWarning(line, f"{key} line {w.line}: {w.message}") for w in parsed.warnings
        ),
        format=Format.DISPLAY,
    )


# -- JSONL -------------------------------------------------------------------


def _looks_jsonl(lines: list[str]) -> bool:
    """Two or more non-blank lines, each opening an object, one a whole object; or,
    when some lines do not open one (a comment, a stray line), at least two whole
    objects that are messages or transcript records, and more lines opening an object
    than not. The other lines are skipped with a warning each.

    Pretty-printed JSON fails this: its inner lines open with ``"`` or ``}``. So does a
    plain transcript whose tool output is JSON rows: the rows are objects, but not
    messages, and its turn lines are the transcript. So does one with any turn line
    (``user: a``): read as text, the pasted message lines stay in a turn, where read as
    JSONL the turn lines would be skipped.

    Example:
        >>> _looks_jsonl(['# export', '{"role": "user", "content": "a"}', '{"role": "user"}'])
        True
        >>> _looks_jsonl(['user: hi', '{"a": 1}', 'assistant: ok'])
        False
        >>> _looks_jsonl(['user: check', 'tool [db]:', *['{"id": 1}'] * 6, 'assistant: ok'])
        False
        >>> _looks_jsonl(['user: a', *['{"role": "user", "content": "b"}'] * 3])
        False
    """
    filled = [line for line in lines if line.strip()]
    opening = [line for line in filled if line.lstrip().startswith("{")]
    if len(opening) < 2 or len(opening) * 2 <= len(filled):
        return False
    mixed = len(opening) < len(filled)
    if mixed and any(starts_turn(line) for line in filled):
        return False  # a plain transcript with messages pasted into a turn: read whole
    needed = 2 if mixed else 1
    for line in opening:
        value, error = _decode(line, _JSON_SPACE.match(line).end())
        if error is not None or not isinstance(value, dict):
            continue
        if mixed and "role" not in value and _record_kind(value) is None:
            continue  # a row of data, not a message: it counts for nothing here
        needed -= 1
        if not needed:
            return True
    return False


def _jsonl_entries(lines: list[str]) -> list[_Entry]:
    """One JSON object per line: messages (one transcript) or records (one each)."""
    rows, bad = [], []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        start = _JSON_SPACE.match(line).end()
        value, error = _decode(line, start)
        if error is None:
            rows.append((number, line, start, value))
        else:
            note = f"not valid JSON ({error.message}, column {error.column}); line skipped"
            bad.append(("", Parsed((), (ParseWarning(number, note),))))
    if _record_kind(next(_dicts([row[3] for row in rows]), None)):
        records = [
            _record_entry(value, _Doc(line, number), start, f"line{number}", "this line")
            for number, line, start, value in rows
        ]
        return sorted(bad + records, key=_entry_line)
    values = [row[3] for row in rows]
    numbers = [row[0] for row in rows]
    parsed = _items(values, numbers, _named("this line"), Format.JSONL)
    twice = [
        note
        for number, line, start, value in rows
        for note in _repeated_keys(_Doc(line, number), [start], [value], _named("this line"), start)
    ]
    found = [*parsed.warnings, *twice, *(p.warnings[0] for _, p in bad)]
    warnings = sorted(found, key=lambda w: w.line)
    return [("transcript", replace(parsed, warnings=tuple(warnings)))]


def _entry_line(entry: _Entry) -> int:
    parsed = entry[1]
    if parsed.messages:
        return parsed.messages[0].line or 0
    return parsed.warnings[0].line if parsed.warnings else 0


def _named(where: str) -> Callable[[int], str]:
    """Every item of a list named alike (one object, one line)."""
    return lambda index: where


# read_message_list (compiler.read.items) is read here too: this module reads every shape
__all__ = ["ROLE_NAMES", "Format", "Parsed", "formats", "formats_many", "read_message_list"]

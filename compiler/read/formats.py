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

import re
from dataclasses import replace

from compiler.errors import TranscriptError
from compiler.read.items import ROLE_NAMES, Format, Parsed, read_message_list
from compiler.read.json_records import Entry, add_warnings, json_entries
from compiler.read.json_text import JSON_SPACE, Doc, decode
from compiler.read.jsonl import jsonl_entries, looks_jsonl
from compiler.read.messages import ParseWarning
from compiler.read.text_turns import text_entries

# a byte-order mark or a zero-width character at the start of a line: invisible, and in
# the way of the role word or the JSON that follows it
_INVISIBLE_LEAD = re.compile("^[\ufeff\u200b\u200c\u200d\u2060]+", re.MULTILINE)


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


def _read_any(text: str) -> tuple[list[Entry], int, int]:
    """The transcripts in ``text``, and where to point if none holds a turn."""
    start = JSON_SPACE.match(text).end()
    if text[start : start + 1] not in ("[", "{"):
        lines = text.split("\n")
        if looks_jsonl(lines):  # JSONL after a line that is not an object
            return jsonl_entries(lines), 1, 1
        return text_entries(text), 1, 1
    value, error = decode(text, start)
    if error is None:
        doc = Doc(text)
        return json_entries(value, doc, start), doc.line(start), doc.column(start)
    lines = text.split("\n")
    if looks_jsonl(lines):
        return jsonl_entries(lines), 1, 1
    note = ParseWarning(
        error.line, f"not valid JSON ({error.message}, column {error.column}); read as text"
    )
    return [("", Parsed((), (note,))), *text_entries(text)], error.line, error.column


def _collect(entries: list[Entry]) -> tuple[tuple[Entry, ...], tuple[ParseWarning, ...]]:
    """Keep entries that hold messages; move the others' warnings to a neighbour."""
    kept: list[list] = []
    pending: list[ParseWarning] = []
    for ident, parsed in entries:
        if parsed.messages:
            kept.append([ident, add_warnings(parsed, pending, before=True)])
            pending = []
        elif kept:
            kept[-1][1] = add_warnings(kept[-1][1], parsed.warnings)
        else:
            pending.extend(parsed.warnings)
    ids = _unique([ident for ident, _ in kept])
    return tuple(zip(ids, (parsed for _, parsed in kept), strict=True)), tuple(pending)


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


# read_message_list (compiler.read.items) is read here too: this module reads every shape
__all__ = ["ROLE_NAMES", "Format", "Parsed", "formats", "formats_many", "read_message_list"]

"""JSONL transcripts: one JSON object per line, each a message or a record.

Bad lines are reported by number and skipped; a text is read as JSONL only when its
lines look like it (``looks_jsonl``), so pretty-printed JSON and plain transcripts
holding rows of JSON stay what they are.
"""

from __future__ import annotations

from dataclasses import replace

from compiler.read.items import Format, Parsed
from compiler.read.json_records import (
    Entry,
    dicts,
    message_items,
    named,
    record_entry,
    record_kind,
    repeated_keys,
)
from compiler.read.json_text import JSON_SPACE, Doc, decode
from compiler.read.messages import ParseWarning
from compiler.read.text_turns import starts_turn


def looks_jsonl(lines: list[str]) -> bool:
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
        >>> looks_jsonl(['# export', '{"role": "user", "content": "a"}', '{"role": "user"}'])
        True
        >>> looks_jsonl(['user: hi', '{"a": 1}', 'assistant: ok'])
        False
        >>> looks_jsonl(['user: check', 'tool [db]:', *['{"id": 1}'] * 6, 'assistant: ok'])
        False
        >>> looks_jsonl(['user: a', *['{"role": "user", "content": "b"}'] * 3])
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
        value, error = decode(line, JSON_SPACE.match(line).end())
        if error is not None or not isinstance(value, dict):
            continue
        if mixed and "role" not in value and record_kind(value) is None:
            continue  # a row of data, not a message: it counts for nothing here
        needed -= 1
        if not needed:
            return True
    return False


def jsonl_entries(lines: list[str]) -> list[Entry]:
    """One JSON object per line: messages (one transcript) or records (one each)."""
    rows, bad = [], []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        start = JSON_SPACE.match(line).end()
        value, error = decode(line, start)
        if error is None:
            rows.append((number, line, start, value))
        else:
            note = f"not valid JSON ({error.message}, column {error.column}); line skipped"
            bad.append(("", Parsed((), (ParseWarning(number, note),))))
    if record_kind(next(dicts([row[3] for row in rows]), None)):
        records = [
            record_entry(value, Doc(line, number), start, f"line{number}", "this line")
            for number, line, start, value in rows
        ]
        return sorted(bad + records, key=_entry_line)
    values = [row[3] for row in rows]
    numbers = [row[0] for row in rows]
    parsed = message_items(values, numbers, named("this line"), Format.JSONL)
    twice = [
        note
        for number, line, start, value in rows
        for note in repeated_keys(Doc(line, number), [start], [value], named("this line"), start)
    ]
    found = [*parsed.warnings, *twice, *(p.warnings[0] for _, p in bad)]
    warnings = sorted(found, key=lambda w: w.line)
    return [("transcript", replace(parsed, warnings=tuple(warnings)))]


def _entry_line(entry: Entry) -> int:
    parsed = entry[1]
    if parsed.messages:
        return parsed.messages[0].line or 0
    return parsed.warnings[0].line if parsed.warnings else 0

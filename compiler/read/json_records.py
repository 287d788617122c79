"""JSON documents as transcripts: an array of messages, one message object, or records
(tau-bench ``traj``, SWE-agent ``history``, few-shot ``messages_display``, ``messages``),
alone or in an array, each with its id, line numbers and warnings.

Decisions worth knowing:

- One record is one transcript: a record holding two transcript keys is read by the
  first (``RECORD_KEYS`` order), and the other is named in a warning.
- A key an object gives twice is read as ``json`` reads it (the last), and warned of, so
  the earlier value does not vanish unreported.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from compiler.read.items import Format, Parsed, indexed, json_kind, parsed_items
from compiler.read.json_text import Doc, value_end
from compiler.read.messages import ParseWarning
from compiler.read.pairing import unpaired
from compiler.read.text_turns import read_text, split_lines

Entry = tuple[str, Parsed]

# Which key makes a JSON object a transcript record, the type it must have,
# and the format it means; first match wins.
RECORD_KEYS = (
    ("messages", list, Format.MESSAGES),
    ("traj", list, Format.TAU_BENCH),
    ("history", list, Format.SWE_AGENT),
    ("messages_display", str, Format.DISPLAY),
)


def add_warnings(parsed: Parsed, extra, *, before: bool = False) -> Parsed:
    if not extra:
        return parsed
    warnings = (*extra, *parsed.warnings) if before else (*parsed.warnings, *extra)
    return replace(parsed, warnings=warnings)


def json_entries(value: Any, doc: Doc, start: int) -> list[Entry]:
    """The transcripts in one decoded JSON document."""
    if isinstance(value, list) and record_kind(next(dicts(value), None)):
        starts = doc.elements(start)
        return [
            record_entry(item, doc, starts[index], f"record{index}", f"[{index}]")
            for index, item in enumerate(value)
        ]
    if isinstance(value, dict) and record_kind(value):
        return [record_entry(value, doc, start, "transcript", "the object")]
    if isinstance(value, dict) and ("role" in value or "content" in value):
        parsed = message_items([value], [doc.line(start)], named("the object"), Format.MESSAGES)
        twice = repeated_keys(doc, [start], [value], named("the object"), start)
        return [("transcript", add_warnings(parsed, twice, before=True))]
    if isinstance(value, dict):
        keys = ", ".join(key for key, _, _ in RECORD_KEYS)
        note = f"JSON object has none of the keys {keys}, role; no messages"
        for key, kind, _ in RECORD_KEYS:  # the key is there, holding the wrong thing
            if key in value:
                wanted = "an array" if kind is list else "a string"
                note = f"the object's {key!r} is {json_kind(value[key])}, not {wanted}; no messages"
                break
        return [("", Parsed((), (ParseWarning(doc.line(start), note),)))]
    starts = doc.elements(start)
    lines = [doc.line(pos) for pos in starts]
    parsed = message_items(value, lines, indexed("messages"), Format.MESSAGES)
    twice = repeated_keys(doc, starts, value, indexed("messages"), start)
    return [("transcript", add_warnings(parsed, twice, before=True))]


_MESSAGE_KEYS = ("role", "content", "tool_calls", "tool_call_id")


def repeated_keys(doc: Doc, starts: list[int], items: list, where, pos: int) -> list:
    """A warning for each of a message's own keys that its object gives twice: ``json``
    keeps the last, and the value before it would vanish unreported. The objects are
    walked only where the text of the value at ``pos`` names those keys more often than
    the messages hold them (a key spelt with an escape, ``"\\u0072ole"``, is not counted).

    Example:
        >>> text = '[{"role": "user", "content": "a", "content": "b"}]'
        >>> doc = Doc(text)
        >>> [w.message for w in repeated_keys(doc, doc.elements(0), json.loads(text), str, 0)]
        ["0 holds the key 'content' 2 times; only the last was read"]
    """
    if not starts:
        return []
    text = doc.text
    end = value_end(text, starts[-1])  # (the last message's end: a short walk)
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


def message_items(items: list, lines, where, fmt: Format) -> Parsed:
    """``parsed_items``, and a warning for each call or answer the chat API would refuse to
    pair (``pairing.unpaired``): message objects keep what they were given."""
    parsed = parsed_items(items, lines, where, fmt)
    return add_warnings(parsed, unpaired(parsed.messages))


def dicts(items: list):
    return (item for item in items if isinstance(item, dict))


def record_kind(value: Any) -> tuple[str, Format] | None:
    """The key that makes ``value`` a transcript record, and its format."""
    if not isinstance(value, dict):
        return None
    for key, kind, fmt in RECORD_KEYS:
        if isinstance(value.get(key), kind):
            return key, fmt
    return None


def record_entry(record: Any, doc: Doc, pos: int, fallback_id: str, where: str) -> Entry:
    """One record (tau-bench, SWE-agent, few-shot, ``messages``) as a transcript."""
    kind = record_kind(record)
    if kind is None:
        note = f"{where} is not a transcript record (no messages, traj or history); skipped"
        return "", Parsed((), (ParseWarning(doc.line(pos), note),))
    key, fmt = kind
    ident = _record_id(record, fallback_id)
    value_pos = doc.members(pos)[key]
    if fmt is Format.DISPLAY:
        parsed = embed(read_text(split_lines(record[key]), 1), doc.line(value_pos), key)
    else:
        starts = doc.elements(value_pos)
        lines = [doc.line(p) for p in starts]
        parsed = message_items(record[key], lines, indexed(key), fmt)
        twice = repeated_keys(doc, starts, record[key], indexed(key), value_pos)
        parsed = add_warnings(parsed, twice, before=True)
    if not parsed.messages:
        parsed = add_warnings(parsed, [ParseWarning(doc.line(pos), f"{ident}: no message")])
    times = doc.repeats(pos, key)
    if times > 1:  # json keeps the last value: the earlier ones would vanish unreported
        note = f"{where} holds the key {key!r} {times} times; only the last was read"
        parsed = add_warnings(parsed, [ParseWarning(doc.line(pos), note)], before=True)
    others = [k for k, kind, _ in RECORD_KEYS if k != key and isinstance(record.get(k), kind)]
    if others:  # one record is one transcript: the turns under the other keys go unread
        unread = ", ".join(repr(k) for k in others)
        note = f"{where} also holds {unread}, another transcript key; only {key!r} was read"
        parsed = add_warnings(parsed, [ParseWarning(doc.line(pos), note)], before=True)
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


def embed(parsed: Parsed, line: int, key: str) -> Parsed:
    """Text read from inside a JSON string, placed on the line of that string."""
    return replace(
        parsed,
        messages=tuple(replace(m, line=line) for m in parsed.messages),
        warnings=tuple(
            ParseWarning(line, f"{key} line {w.line}: {w.message}") for w in parsed.warnings
        ),
        format=Format.DISPLAY,
    )


def named(where: str) -> Callable[[int], str]:
    """Every item of a list named alike (one object, one line)."""
    return lambda index: where

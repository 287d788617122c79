"""Stale reads: tool output that a later payload of the same thing has replaced.

When an agent reads the same thing twice — the same tool called with the same
arguments, the same file shown again in its editor window, or the same record
(a JSON object naming the same id) shown again by any tool, say an order read
and then returned by the call that cancelled it — the earlier output describes
a state the later one supersedes. It is what the transcript used to say, not
what is true now, so the compact stage replaces it with a short notice (keeping
any safety row it carried).

A record counts as shown again only when the later object has every top-level
field the earlier one had: a narrower view of the same id replaces nothing.

What a payload repeats of another that stays in front of the model, rather than
replaces, is ``compiler.compact.repeats``.
"""

from __future__ import annotations

from collections.abc import Sequence

from compiler.compact.compact import Compacted, unchanged
from compiler.compact.read_keys import (
    NOT_APPLIED,
    NUMBERED_LINE,
    Output,
    ReadKey,
    Window,
    lint_errors,
    next_read_key,
)
from compiler.compact.safety import has_safety_signal, safety_spans
from compiler.frozen import build
from compiler.read import Message, decode_json, dumps, encode_basestring
from compiler.state import Kind


def stale_reads(
    messages: tuple[Message, ...], kinds: tuple[Kind, ...]
) -> dict[int, tuple[str, int]]:
    """Payload index → (what it read, the index of the later read that replaced it).

    Example:
        >>> view = "[File: /a.py (3 lines total)]\\n1:a\\n2:b"
        >>> msgs = (Message("user", view), Message("user", "ok"), Message("user", view))
        >>> stale_reads(msgs, (Kind.MACHINE, Kind.SPEECH, Kind.MACHINE))
        {0: ('file /a.py', 2)}
    """
    calls: dict[str, tuple[str, str]] = {}
    keys: list[tuple[ReadKey, ...]] = []
    previous = None
    for message, kind in zip(messages, kinds, strict=True):
        keys.append(next_read_key(message, kind, previous, calls))
        previous = message
    return replaced_reads(keys)


def replaced_reads(keys: list[tuple[ReadKey, ...]]) -> dict[int, tuple[str, int]]:
    """Index → (key, index of the first later read that replaces it).

    A read is replaced by the next read with the same key; a record by the next
    one with the same key whose fields include all of its own.

    Example:
        >>> wide, narrow = frozenset("abc"), frozenset("ab")
        >>> replaced_reads([(("r 1", narrow),), (("r 1", wide),), (("r 1", narrow),)])
        {0: ('r 1', 1)}
    """
    waiting: dict[str, list[tuple[int, frozenset[str] | Window | None]]] = {}
    replaced: dict[int, tuple[str, int]] = {}
    for index, entries in enumerate(keys):
        for key, fields in entries:
            still = []
            for earlier, earlier_fields in waiting.get(key, ()):
                if earlier in replaced:
                    continue
                if _replaces(fields, earlier_fields):
                    replaced[earlier] = (key, index)
                else:
                    still.append((earlier, earlier_fields))
            still.append((index, fields))
            waiting[key] = still
    return replaced


def _replaces(fields, earlier_fields) -> bool:
    """Whether a read showing ``fields`` replaces an earlier one of the same key."""
    if earlier_fields is None:
        return True
    if isinstance(earlier_fields, Window):
        return isinstance(fields, Window) and fields.replaces(earlier_fields)
    if isinstance(earlier_fields, Output):
        return isinstance(fields, Output) and fields.replaces(earlier_fields)
    return fields is not None and not isinstance(fields, Window) and earlier_fields <= fields


def safety_lines(text: str) -> list[str]:
    r"""The lines a safety signal touches, in order, from one scan of the text: a
    phrase wrapped across a line break brings every line it spans.

    Example:
        >>> safety_lines("ok\nPEANUT oil, peanut\n\nphone: 5")
        ['PEANUT oil, peanut', 'phone: 5']
        >>> safety_lines("Take one daily. Do\nnot exceed the dose.\nok")
        ['Take one daily. Do', 'not exceed the dose.']
    """
    found, covered = [], 0  # the text before ``covered`` is in ``found`` already
    for start, end in sorted(safety_spans(text)):
        ends = text.find("\n", max(start, end - 1))
        ends = len(text) if ends < 0 else ends
        if ends < covered:
            continue
        begins = max(text.rfind("\n", 0, start) + 1, covered)
        found.extend(text[begins:ends].split("\n"))
        covered = ends + 1
    return found


def record_rows(value: dict) -> list[str]:
    """A JSON object as rows: each element of a list field, each entry of a field
    that maps names to objects, and each other field whole, with the field name.

    Example:
        >>> record_rows({"id": "R1", "pax": [{"dob": "1990"}], "pay": {"c1": {"n": 4}}})
        ['id: "R1"', 'pax: {"dob":"1990"}', 'pay.c1: {"n":4}']
    """
    rows = []
    for name, field in value.items():
        if type(field) is str:  # (most fields: written as ``dumps`` writes a string)
            rows.append(f"{name}: {encode_basestring(field)}")
        elif type(field) is int:  # (and as it writes an integer)
            rows.append(f"{name}: {field!r}")
        elif isinstance(field, list):
            rows.extend(f"{name}: {dumps(item)}" for item in field)
        elif isinstance(field, dict) and field and all(isinstance(v, dict) for v in field.values()):
            rows.extend(f"{name}.{entry}: {dumps(item)}" for entry, item in field.items())
        else:
            rows.append(f"{name}: {dumps(field)}")
    return rows


def _rows(value: dict | list) -> list[str]:
    return record_rows(value) if isinstance(value, dict) else [dumps(item) for item in value]


def elide_record(
    text: str, later_text: str, *, replaced_by: int, key: str, memo: dict | None = None
) -> Compacted:
    r"""A record shown again later: a notice, with the safety rows the later one lacks.

    A row that the later payload repeats exactly is still in front of the model, so
    only the safety rows it does not repeat need keeping here. A JSON array's rows are
    its elements, each kept whole, so a kept row says which item it is about.

    Example:
        >>> pax = '"pax": [{"dob": "1990"}, {"dob": "1991"}]'
        >>> old = '{"id": "R1", ' + pax + ', "note": "' + "x" * 200 + '"}'
        >>> new = '{"id": "R1", "pax": [{"dob": "1990"}], "note": "cancelled"}'
        >>> c = elide_record(old, new, replaced_by=7, key='record id="R1"')
        >>> print(c.text.replace("; ", ";\n"))
        [stale read: record id="R1" was shown again at turn 7;
        this older output is omitted (4 rows, 267 chars, truncated=true);
        safety rows it does not repeat kept:]
        pax: {"dob":"1991"}
    """
    try:
        old = decode_json(text, memo)
    except (ValueError, RecursionError):
        return elide(text, replaced_by=replaced_by, key=key)
    if not isinstance(old, dict | list):
        return elide(text, replaced_by=replaced_by, key=key)
    rows, safety = _rows(old), []
    # a row's signal is one of the rows joined (a line break ends every term, address and
    # card number as the end of the row does): most records have none, and then what the
    # later record repeats need not be asked, nor the later record decoded
    if rows and has_safety_signal("\n".join(rows)):
        try:
            new = decode_json(later_text, memo)
        except (ValueError, RecursionError):
            return elide(text, replaced_by=replaced_by, key=key)
        repeated = set(_rows(new)) if isinstance(new, dict | list) else set()
        safety = [row for row in rows if row not in repeated and has_safety_signal(row)]
    what = f"{len(rows)} rows, {len(text)} chars, truncated=true"
    head = f"[stale read: {key[:160]} was shown again at turn {replaced_by}; "
    head += f"this older output is omitted ({what})"
    head += "; safety rows it does not repeat kept:]" if safety else "]"
    return _notice(text, "\n".join([head, *safety]), len(rows), len(safety))


OUTSIDE_LINES_KEPT = 10  # a later view missing more of this one's lines names them instead


def elide(text: str, *, replaced_by: int, key: str, window: Window | None = None) -> Compacted:
    r"""A stale read as a one-line notice, with every safety line it carried (and, for
    the preview of an edit that was not applied, the lint errors that refused it).

    A file view replaced by a ``window`` that shows only part of it says which lines
    that window does not show: up to ``OUTSIDE_LINES_KEPT`` of them are kept, more are
    named as a range, so the agent knows what to open again.

    Example:
        >>> c = elide("row 1\nrow 2 WARNING: recall\n" + "x" * 300, replaced_by=9, key="call f {}")
        >>> print(c.text.replace("; ", ";\n"))
        [stale read: call f {} was shown again at turn 9;
        this older output is omitted (3 lines, 328 chars, truncated=true);
        safety lines kept:]
        row 2 WARNING: recall
        >>> view = "[File: /a.py (90 lines total)]\n" + "".join(f"{n}:code\n" for n in range(1, 60))
        >>> print(elide(view, replaced_by=4, key="file /a.py", window=Window(3, 59)).text)
        [stale read: file /a.py was shown again at turn 4 (lines 3-59); this older output is
        omitted (60 lines, 494 chars, truncated=true); the lines that view does not show are
        kept:]
        1:code
        2:code
        >>> print(elide(view, replaced_by=4, key="file /a.py", window=Window(30, 89)).text)
        [stale read: file /a.py was shown again at turn 4 (lines 30-89); this older output is
        omitted (60 lines, 494 chars, truncated=true); its lines 1-29, which that view does not
        show, are omitted too]
    """
    # the lines are counted, not split out: a final line break ends the last line
    lines = text.count("\n") + (bool(text) and not text.endswith("\n"))
    safety = safety_lines(text)
    errors = lint_errors(text)
    real = window is not None and window.last and not window.preview and NOT_APPLIED not in text
    outside = _outside(text, window) if real else []  # (a preview shows no file lines)
    few = len(outside) <= OUTSIDE_LINES_KEPT
    shown = outside if few else []
    known = {*errors, *shown}
    kept = [*errors, *shown, *(line for line in safety if line not in known)]
    what = f"{lines} lines, {len(text)} chars, truncated=true"
    if NOT_APPLIED in text:  # the window showed an edit, not the file
        key = f"an edit that was not applied, {key}"
    head = f"[stale read: {key[:160]} was shown again at turn {replaced_by}"
    if outside:
        head += f" (lines {window.first}-{window.last})"
    head += f"; this older output is omitted ({what})"
    if outside and not few:
        head += f"; its lines {_ranges(outside)}, which that view does not show, are omitted too"
    if outside and few:
        head += "; the lines that view does not show are kept:]"
    elif kept:
        head += "; lint errors and safety lines kept:]" if errors else "; safety lines kept:]"
    else:
        head += "]"
    return _notice(text, "\n".join([head, *kept]), lines, len(kept), len(safety))


def _outside(text: str, window: Window) -> list[str]:
    """The numbered lines of a file view (the first of each number) outside ``window``."""
    seen, out = set(), []
    for match in NUMBERED_LINE.finditer(text):
        number = int(match.group(1))
        if number in seen or window.first <= number <= window.last:
            continue
        seen.add(number)
        end = text.find("\n", match.start())
        out.append(text[match.start() : len(text) if end == -1 else end].rstrip())
    return out


def _ranges(lines: list[str]) -> str:
    """The numbers of numbered lines as ranges.

    Example:
        >>> _ranges(["1:a", "2:b", "3:c", "9:d"])
        '1-3, 9'
    """
    numbers = sorted(int(line.split(":", 1)[0]) for line in lines)
    spans, start = [], numbers[0]
    for before, after in zip(numbers, [*numbers[1:], None], strict=True):
        if after != before + 1:
            spans.append(f"{start}-{before}" if before > start else str(start))
            start = after
    return ", ".join(spans)


def _notice(text: str, notice: str, rows: int, kept: int, safety: int | None = None) -> Compacted:
    """The notice as the compaction result, unless it is no shorter than the text."""
    if len(notice) >= len(text):
        return unchanged(text, "none")
    return build(
        Compacted,
        text=notice,
        shape="stale_read",
        original_chars=len(text),
        compacted_chars=len(notice),
        rows_total=rows,
        rows_kept=kept,
        rows_dropped=rows - kept,
        safety_rows_kept=kept if safety is None else safety,
        changed=True,
    )


FRESH_PAYLOADS = 4  # at most this many unanswered payloads are left whole


def fresh_payloads(messages: Sequence[Message], kinds: Sequence[Kind]) -> frozenset[int]:
    """The payloads the agent has not answered yet: machine output after its last
    spoken turn, the latest ``FRESH_PAYLOADS`` of them at most.

    They are what the agent is about to act on — the order it just read, the
    variants it must pick an item id from — so the compact stage leaves them whole
    (a stale read among them still becomes a notice). Once the agent has spoken
    after them they are history and are compacted like any other payload. In a
    finished transcript, which ends with the agent speaking, none is fresh.

    Example:
        >>> msgs = (Message("user", "Order #1?"), Message("tool", "{}"),
        ...         Message("assistant", "Here it is."), Message("tool", "{}"),
        ...         Message("assistant", None), Message("tool", "[]"))
        >>> kinds = (Kind.SPEECH, Kind.MACHINE, Kind.SPEECH, Kind.MACHINE,
        ...          Kind.SPEECH, Kind.MACHINE)
        >>> sorted(fresh_payloads(msgs, kinds))
        [3, 5]
    """
    fresh = []
    for index in range(len(kinds) - 1, -1, -1):
        message = messages[index]
        if kinds[index] is Kind.MACHINE:
            fresh.append(index)
            if len(fresh) == FRESH_PAYLOADS:
                break
        elif message.role == "assistant" and (message.content or "").strip():
            break
    return frozenset(fresh)

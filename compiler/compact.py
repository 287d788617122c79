"""Compact one tool payload: fewer characters, every safety signal kept, omissions disclosed.

``compact`` reads a payload by its content, never by the role it was filed under: JSON
records, a directory or search listing, test-runner output, a Python stack trace, a unified
diff, or long text. It keeps what a model needs (the head rows, the failures, the frames
around the error, the changed lines), counts what it dropped in the text itself with
``truncated=true``, and never drops a row that carries a safety signal (``SAFETY_TERMS``).

Three guarantees hold for every input: the result is never longer than the input (when
nothing is gained the original comes back with ``changed=False``), the same input gives the
same bytes, and nothing raises.

Decisions worth knowing:

- A SWE-agent file view (``[File: path (N lines total)]`` and numbered lines) is passed
  through whole. It is the window the agent scrolled to on purpose and edits by line
  number; cutting its middle removes the very lines it asked for. A view that has gone
  stale is a question about later turns, which one payload cannot answer.
- Safety terms match on letter boundaries, so ``PEANUT_ALLERGEN`` and ``date_of_birth``
  match (``_`` is not a letter) while ``DeprecationWarning`` or ``adobe`` do not. A path
  such as ``warnings.py`` does match: keeping one extra row is cheap, dropping a real
  warning is not.
- JSON is re-serialised compactly; numbers go through ``float`` like any JSON reader, and a
  document with a duplicate key is treated as text, since re-serialising it would lose one.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

HEAD_ROWS = 3  # JSON records kept from the top of a collection
MIN_ROWS = 2  # fewer rows gain nothing from a header; nothing is dropped below HEAD_ROWS
SHORT_CHARS = 400  # a payload shorter than this is returned as it is
LONG_CHARS = 1500  # plain text longer than this is cut to head and tail
HEAD_CHARS = 500
TAIL_CHARS = 500
PIECE_CHARS = 400  # long lines are handled in pieces of this size
LISTING_HEAD_ROWS = 10
LISTING_MIN_ROWS = 12
HEAD_FRAMES = 1
TAIL_FRAMES = 2
DIFF_CHANGED_LINES = 200
EXEMPT_KEYS = ("arguments", "function", "tool_calls")  # a tool call states an action

SAFETY_TERMS = (
    r"allerg(?:en|ens|y|ies|ic)",
    r"peanuts?",
    r"gluten",
    r"lactose",
    r"sever(?:e|ity)",
    r"critical",
    r"warn(?:s|ed|ing|ings)?",
    r"danger(?:s|ous)?",
    r"hazard(?:s|ous)?",
    r"recall(?:s|ed)?",
    r"expir(?:y|es|ed|ation|ing)",
    r"best[\s_-]+before",
    r"use[\s_-]+by",
    r"contraindicat(?:ed|ion|ions)",
    r"do[\s_-]+not",
    r"pii",
    r"ssn",
    r"social[\s_-]+security",
    r"passports?",
    r"date[\s_-]+of[\s_-]+birth",
    r"dob",
    r"phones?",
)
_SAFETY = re.compile(
    # the look-ahead on first letters lets the engine skip most positions quickly
    "(?=[" + "".join(sorted({term[0] for term in SAFETY_TERMS})) + "])"
    r"(?<![^\W\d_])(?:" + "|".join(SAFETY_TERMS) + r")(?![^\W\d_])",
    re.IGNORECASE,
)
_EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]++@[\w-]+(?:\.[\w-]+)+")
_CARD = re.compile(r"(?<!\d)(?:\d[ -]?){12,18}\d(?!\d)")


class Shape(StrEnum):
    """What a payload was read as."""

    JSON_RECORDS = "json_records"
    JSON_OBJECT = "json_object"
    LISTING = "listing"
    TEST_OUTPUT = "test_output"
    STACK_TRACE = "stack_trace"
    DIFF = "diff"
    LONG_TEXT = "long_text"
    NONE = "none"


@dataclass(frozen=True)
class Compacted:
    """One compacted payload and what it cost.

    ``text`` is what the model receives; it is the original whenever ``changed`` is False.
    A row is a record (JSON), a line (listing, test output, diff), a frame (stack trace) or
    a line piece (long text). ``safety_rows_kept`` counts every kept row that carries a
    safety signal, including those among the head rows. The counts are 0 when nothing
    changed.
    """

    text: str
    shape: str
    original_chars: int
    compacted_chars: int
    rows_total: int
    rows_kept: int
    rows_dropped: int
    safety_rows_kept: int
    changed: bool


@dataclass(frozen=True)
class _Draft:
    text: str
    rows_total: int = 0
    rows_kept: int = 0
    safety_rows_kept: int = 0


@dataclass(frozen=True)
class _Unit:
    """A run of output that is kept or dropped as one; ``rows`` is how many it counts."""

    text: str
    keep: bool
    rows: int = 1
    safety: bool = False


def compact(text: str, *, tool_name: str | None = None, head_rows: int = HEAD_ROWS) -> Compacted:
    """Compact one tool payload, keeping safety rows and disclosing every omission.

    ``tool_name`` labels a top-level list of records; ``head_rows`` is how many records
    of a JSON collection are kept besides the safety-flagged ones.

    Example:
        >>> rows = [{"id": i, "note": "in stock"} for i in range(25)]
        >>> rows[14]["note"] = "PEANUT_ALLERGEN warning"
        >>> c = compact(json.dumps({"store": "north", "items": rows}))
        >>> print(c.text)
        {"store":"north"}
        [items: 25 rows, showing 4 (first 3 + 1 safety-flagged); 21 omitted (truncated=true)]
        columns=["id","note"]
        [0,"in stock"]
        [1,"in stock"]
        [2,"in stock"]
        [14,"PEANUT_ALLERGEN warning"]
        >>> print(c.shape, c.rows_dropped, c.safety_rows_kept, c.changed)
        json_records 21 1 True
        >>> compact("short payloads come back as they are").changed
        False
    """
    shape, draft = Shape.NONE, None
    if len(text) >= SHORT_CHARS:
        shape, draft = _compact_by_shape(text, tool_name, max(0, head_rows))
    if draft is None or len(draft.text) >= len(text):
        return Compacted(text, shape, len(text), len(text), 0, 0, 0, 0, False)
    return Compacted(
        text=draft.text,
        shape=shape,
        original_chars=len(text),
        compacted_chars=len(draft.text),
        rows_total=draft.rows_total,
        rows_kept=draft.rows_kept,
        rows_dropped=draft.rows_total - draft.rows_kept,
        safety_rows_kept=draft.safety_rows_kept,
        changed=True,
    )


def has_safety_signal(text: str) -> bool:
    """True if ``text`` carries a safety signal (a term, an email or a card number).

    Example:
        >>> has_safety_signal('{"sku": 7, "tags": "PEANUT_ALLERGEN"}')
        True
        >>> has_safety_signal("DeprecationWarning in adobe.py")
        False
    """
    return next(_safety_spans(text), None) is not None


def _safety_spans(text: str) -> Iterator[tuple[int, int]]:
    for match in _SAFETY.finditer(text):
        yield match.span()
    if "@" in text:
        for match in _EMAIL.finditer(text):
            yield match.span()
    for match in _CARD.finditer(text):
        if _luhn_valid(match.group()):
            yield match.span()


def _luhn_valid(number: str) -> bool:
    """A card number: a card network's first digit (2-6) and a valid Luhn check digit.

    The first digit rules out epoch-millisecond timestamps and most plain counters.
    """
    digits = [int(ch) for ch in reversed(number) if ch.isdigit()]
    if not 2 <= digits[-1] <= 6:
        return False
    total = sum(d if i % 2 == 0 else (d * 2 - 9 if d > 4 else d * 2) for i, d in enumerate(digits))
    return total % 10 == 0


# ---------------------------------------------------------------------------------------
# Dispatch: the order in which shapes are tried is data.

_JSON_START = re.compile(r"\s*[\[{]")
_FILE_VIEW = re.compile(r"^\[File: .+\(\d+ lines total\)\]\r?$", re.MULTILINE)
_TRAILER_LINE = re.compile(r"\((?:Open file|Current directory): .*\)|bash-\$|\s*")


def _compact_by_shape(
    text: str, tool_name: str | None, head_rows: int
) -> tuple[Shape, _Draft | None]:
    body, trailer = _split_trailer(text)
    if _JSON_START.match(body):
        try:
            value = json.loads(body, object_pairs_hook=_unique_keys)
            shape, draft = _compact_json(value, tool_name, head_rows)
            return shape, _Draft(draft.text + trailer, *_counts(draft))
        except (ValueError, RecursionError):
            pass  # not JSON, or nested too deep to walk: read it as text
    if _FILE_VIEW.search(body):
        return Shape.NONE, None
    detected = Shape.NONE
    for shape, detect, compactor in _TEXT_SHAPES:
        if not detect(body):
            continue
        draft = compactor(body)
        if len(draft.text) < len(body):
            return shape, _Draft(draft.text + trailer, *_counts(draft))
        # nothing gained (a traceback without frames, say): the next shape may still fit
        detected = shape if detected is Shape.NONE else detected
    return detected, None


def _counts(draft: _Draft) -> tuple[int, int, int]:
    return draft.rows_total, draft.rows_kept, draft.safety_rows_kept


def _split_trailer(text: str) -> tuple[str, str]:
    """Split off the shell footer SWE-agent appends, kept verbatim by every shape."""
    cut = len(text)
    while cut > 0:
        start = text.rfind("\n", 0, cut) + 1
        line = text[start:cut].rstrip("\r")
        if not _TRAILER_LINE.fullmatch(line) or start == 0:
            break
        cut = start - 1
    return text[:cut], text[cut:]


# ---------------------------------------------------------------------------------------
# JSON


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict:
    result = dict(pairs)
    if len(result) != len(pairs):
        raise ValueError("duplicate key: re-serialising would lose a value")
    return result


_SURROGATE = re.compile(r"[\ud800-\udfff]")


def _dumps(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    if _SURROGATE.search(text):  # a lone surrogate cannot be encoded: keep it escaped
        text = json.dumps(value, separators=(",", ":"))
    return text


@dataclass(frozen=True)
class _Collection:
    """Records found in a JSON value: ``kind`` is records, groups (lists of records) or map."""

    path: tuple[str | int, ...]
    kind: str
    rows: tuple[Any, ...]  # dicts, lists of dicts, or (key, dict) pairs


def _compact_json(value: Any, tool_name: str | None, head_rows: int) -> tuple[Shape, _Draft]:
    plain = _Draft(_dumps(value))
    found = _largest_collection(value)
    if found is None:
        return Shape.JSON_OBJECT, plain
    summary = _summarise(value, found, _label(found.path, tool_name), head_rows)
    if len(summary.text) < len(plain.text):
        return Shape.JSON_RECORDS, summary
    return Shape.JSON_OBJECT, plain


def _largest_collection(value: Any) -> _Collection | None:
    """The collection with the longest serialisation, found under any key at any depth."""
    best, best_size = None, -1
    stack: list[tuple[tuple[str | int, ...], Any]] = [((), value)]
    while stack:
        path, node = stack.pop()
        found = _as_collection(path, node)
        if found is not None:  # anything nested inside it is smaller
            size = len(_dumps(node))
            if size > best_size:
                best, best_size = found, size
            continue
        if isinstance(node, dict):
            items = [(k, v) for k, v in node.items() if k not in EXEMPT_KEYS]
        elif isinstance(node, list):
            items = list(enumerate(node))
        else:
            continue
        children = [((*path, k), v) for k, v in items if isinstance(v, dict | list)]
        stack.extend(reversed(children))
    return best


def _as_collection(path: tuple[str | int, ...], node: Any) -> _Collection | None:
    if isinstance(node, list) and len(node) >= MIN_ROWS:
        if all(isinstance(row, dict) for row in node):
            return _Collection(path, "records", tuple(node))
        if all(_is_group(row) for row in node):
            return _Collection(path, "groups", tuple(node))
    if isinstance(node, dict) and len(node) >= MIN_ROWS and _is_record_map(node):
        return _Collection(path, "map", tuple(node.items()))
    return None


def _is_group(row: Any) -> bool:
    return isinstance(row, list) and bool(row) and all(isinstance(leg, dict) for leg in row)


def _is_record_map(node: dict) -> bool:
    """Values that are all records sharing a field; a map of strings is not one."""
    shared: set[str] | None = None
    for record in node.values():
        if not isinstance(record, dict) or not record:
            return False
        shared = set(record) if shared is None else shared & record.keys()
    return bool(shared)


_PLAIN_KEY = re.compile(r"[\w -]+")


def _label(path: tuple[str | int, ...], tool_name: str | None) -> str:
    if not path:
        return tool_name or "rows"
    label = ""
    for step in path:
        if isinstance(step, int):
            label += f"[{step}]"
        else:
            name = step if _PLAIN_KEY.fullmatch(step) else json.dumps(step, ensure_ascii=False)
            label += f".{name}" if label else name
    return label


def _summarise(value: Any, found: _Collection, label: str, head_rows: int) -> _Draft:
    texts = [_dumps(_row_payload(found.kind, row)) for row in found.rows]
    flags = [has_safety_signal(text) for text in texts]
    kept = [i for i, flag in enumerate(flags) if i < head_rows or flag]
    rows = [found.rows[i] for i in kept]
    key_column = _key_column(rows) if found.kind == "map" else None
    header = _rows_header(label, len(texts), len(kept), head_rows, key_column)
    body = _render_rows(found.kind, rows, key_column)
    parts = [header + body]
    if found.path:
        parts.insert(0, _dumps(_without(value, found.path)))
    safety = sum(flags[i] for i in kept)
    return _Draft("\n".join(parts), len(texts), len(kept), safety)


def _row_payload(kind: str, row: Any) -> Any:
    return {row[0]: row[1]} if kind == "map" else row


def _rows_header(label: str, total: int, kept: int, head_rows: int, key_column: str | None) -> str:
    keyed = f" keyed by {key_column}" if key_column else ""
    if kept == total:
        return f"[{label}: {total} rows{keyed}]"
    head = min(head_rows, total)
    extra = kept - head
    shown = f"{kept} (first {head} + {extra} safety-flagged)" if extra else f"first {kept}"
    return (
        f"[{label}: {total} rows{keyed}, showing {shown}; {total - kept} omitted (truncated=true)]"
    )


def _key_column(rows: list[tuple[str, dict]]) -> str | None:
    """A field equal to the key in every kept row, so the key need not be repeated."""
    if not rows:
        return None
    first_key, first_record = rows[0]
    for column, cell in first_record.items():
        if cell == first_key and all(record.get(column) == key for key, record in rows):
            return column
    return None


def _render_rows(kind: str, rows: list[Any], key_column: str | None) -> str:
    """Rows as one JSON object per line, or as a header and value tuples when shorter."""
    if kind == "map":
        objects = [f"{_dumps(key)}:{_dumps(record)}" for key, record in rows]
    else:
        objects = [_dumps(row) for row in rows]
    best = "\n" + "\n".join(objects) if objects else ""
    table = _table(kind, rows, key_column)
    if table is not None and len(table) < len(best):
        return table
    return best


def _table(kind: str, rows: list[Any], key_column: str | None) -> str | None:
    """Column names once and a value tuple per row, if every kept record has the same
    fields: nested objects as dotted columns if that is uniform, else as cells."""
    for flatten in (True, False):
        table = _table_with(kind, rows, key_column, flatten)
        if table is not None:
            return table
    return None


def _table_with(kind: str, rows: list[Any], key_column: str | None, flatten: bool) -> str | None:
    cells = _flatten if flatten else (lambda record: list(record.items()))
    if kind == "groups":
        grouped = [[cells(leg) for leg in group] for group in rows]
        legs = [leg for group in grouped for leg in group]
    elif kind == "map":
        legs = [cells(record) for _, record in rows]
    else:
        legs = [cells(record) for record in rows]
    columns = [name for name, _ in legs[0]] if legs and legs[0] is not None else None
    if columns is None or any(leg is None or [n for n, _ in leg] != columns for leg in legs):
        return None
    if kind == "groups":
        lines = [_dumps([[cell for _, cell in leg] for leg in group]) for group in grouped]
    elif kind == "map" and key_column is None:
        columns = ["(key)", *columns]
        keys = [key for key, _ in rows]
        lines = [_dumps([key, *(c for _, c in leg)]) for key, leg in zip(keys, legs, strict=True)]
    else:
        lines = [_dumps([cell for _, cell in leg]) for leg in legs]
    return "\ncolumns=" + _dumps(columns) + "\n" + "\n".join(lines)


def _flatten(record: dict) -> list[tuple[str, Any]] | None:
    """Nested objects as dotted columns; None when a key already holds a dot."""
    flat: list[tuple[str, Any]] = []
    for key, cell in record.items():
        if "." in key:
            return None
        if isinstance(cell, dict) and cell:
            inner = _flatten(cell)
            if inner is None:
                return None
            flat.extend((f"{key}.{name}", value) for name, value in inner)
        else:
            flat.append((key, cell))
    return flat


def _without(value: Any, path: tuple[str | int, ...]) -> Any:
    """``value`` with the collection at ``path`` removed (a list keeps a placeholder)."""
    step, rest = path[0], path[1:]
    if isinstance(value, dict):
        if not rest:
            return {k: v for k, v in value.items() if k != step}
        return {k: (_without(v, rest) if k == step else v) for k, v in value.items()}
    copy = list(value)
    copy[step] = _without(copy[step], rest) if rest else "[rows below]"
    return copy


# ---------------------------------------------------------------------------------------
# Text shapes


def _emit_gaps(units: list[_Unit], marker: Callable[[list[_Unit]], str]) -> str:
    """Join kept units; each run of dropped ones becomes one marker where it was."""
    parts: list[tuple[str, bool]] = []
    gap: list[_Unit] = []
    for unit in [*units, None]:
        if unit is not None and not unit.keep:
            gap.append(unit)
            continue
        if gap:
            parts.append((marker(gap), True))
            gap = []
        if unit is not None:
            parts.append((unit.text, False))
    return _join(parts)


def _emit_merged(units: list[_Unit], marker: Callable[[list[_Unit]], str]) -> str:
    """Join kept units with one marker for everything dropped, at the first gap after
    something kept (a gap before the first kept unit would read as a preamble)."""
    dropped = [unit for unit in units if not unit.keep]
    parts: list[tuple[str, bool]] = []
    placed = not dropped
    for unit in units:
        if unit.keep:
            parts.append((unit.text, False))
        elif parts and not placed:
            parts.append((marker(dropped), True))
            placed = True
    if not placed:
        parts.insert(0, (marker(dropped), True))
    return _join(parts)


def _join(parts: list[tuple[str, bool]]) -> str:
    """Concatenate, putting each marker on a line of its own."""
    out: list[str] = []
    for index, (text, is_marker) in enumerate(parts):
        if is_marker and text:
            if out and not out[-1].endswith("\n"):
                out.append("\n")
            out.append(text + ("\n" if index + 1 < len(parts) else ""))
        elif not is_marker:
            out.append(text)
    return "".join(out)


def _lines(text: str) -> list[str]:
    """Lines split on ``\\n`` only, each with its newline, so joining gives the text back."""
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def _draft(units: list[_Unit], text: str) -> _Draft:
    total = sum(u.rows for u in units)
    kept = sum(u.rows for u in units if u.keep)
    safety = sum(u.rows for u in units if u.keep and u.safety)
    return _Draft(text, total, kept, safety)


def _marker_line(body: str) -> str:
    return f"[… {body} (truncated=true) …]"


# Listings ------------------------------------------------------------------------------

_LISTING_FRAME = re.compile(
    r"(?:Found \d+ match|End of matches for|No matches found for"
    r"|More than \d+ files matched|total \d+$).*"
)
_LISTING_ROW = re.compile(
    r"""\S+/?
      |\S+\ \(\d+\ matches?\)
      |[^\s:]+:\d+[:-].*
      |[^\s:]+\.\w+:.*
      |Line\ \d+:.*
      |[-dlcbps][-rwxsStT]{9}[.@+]?\s.*
      |\S+(?:[ \t]{2,}\S+)+
    """,
    re.VERBOSE,
)


def _is_listing(body: str) -> bool:
    lines = [line.rstrip("\r") for line in body.split("\n") if line.strip()]
    if len(lines) < LISTING_MIN_ROWS:
        return False
    rows = sum(bool(_LISTING_ROW.fullmatch(line) or _LISTING_FRAME.match(line)) for line in lines)
    return rows >= 0.9 * len(lines)


def _compact_listing(body: str) -> _Draft:
    units, seen = [], 0
    for line in _lines(body):
        bare = line.strip()
        if _LISTING_FRAME.match(bare) or (not bare and seen <= LISTING_HEAD_ROWS):
            units.append(_Unit(line, keep=True, rows=0))
            continue
        if not bare:
            units.append(_Unit(line, keep=False, rows=0))
            continue
        seen += 1
        flag = has_safety_signal(line)
        units.append(_Unit(line, keep=seen <= LISTING_HEAD_ROWS or flag, safety=flag))
    return _draft(units, _emit_gaps(units, _rows_marker))


def _rows_marker(gap: list[_Unit]) -> str:
    rows = sum(u.rows for u in gap)
    return _marker_line(f"{rows} rows omitted") if rows else ""


# Test-runner output --------------------------------------------------------------------

_TEST_RUN = re.compile(
    r"^=+ test session starts =+\r?$"
    # bounded gaps: a crafted line of repeated "1 passed" must not backtrack for ever
    r"|^=+ [^\n]{0,160}\b\d+ (?:passed|failed|errors?)\b[^\n]{0,160} in [\d.]+s"
    r"|^Ran \d+ tests? in [\d.]+s\r?$"
    r"|^collected \d+ items?",
    re.MULTILINE,
)
_TEST_SECTION = re.compile(r"[=_-]{3,}")
_TEST_KEEP = re.compile(
    r"^E\s|^>\s|^\S+:\d+: \S"
    r"|\b(?:FAILED|ERROR|FAIL|XPASS|XPASSED)\b"
    r"|^Ran \d+ tests?|^OK\b"
    r"|^Traceback \(most recent call last\)"
    r"|^[\w.]*(?:Error|Exception|Exit|Interrupt)\b"
    r"|\b\d+ (?:failed|passed|errors?|skipped|xfailed|xpassed|deselected)\b"
)


def _compact_test_output(body: str) -> _Draft:
    units, summary, frame_source = [], False, False
    for line in _lines(body):
        if _TEST_SECTION.match(line):
            summary = "short test summary info" in line
            units.append(_Unit(line, keep=True))
            continue
        flag = has_safety_signal(line)
        # a unittest frame: its ``File`` line and the source line under it say where
        keep = summary or flag or frame_source or _TEST_KEEP.search(line) is not None
        frame_source = _FRAME.match(line) is not None
        units.append(_Unit(line, keep=keep or frame_source, safety=flag))
    total = len(units)

    def marker(dropped: list[_Unit]) -> str:
        what = "passing tests, progress and source context"
        return _marker_line(f"{len(dropped)} of {total} lines omitted: {what}")

    return _draft(units, _emit_merged(units, marker))


# Stack traces --------------------------------------------------------------------------

_TRACEBACK = re.compile(r"^\s*Traceback \(most recent call last\):", re.MULTILINE)
_FRAME = re.compile(r"\s+File \"")


def _compact_stack_trace(body: str) -> _Draft:
    lines, units, i = _lines(body), [], 0
    while i < len(lines):
        units.append(_Unit(lines[i], keep=True, rows=0))
        if _TRACEBACK.match(lines[i]):
            frames, i = _frames(lines, i + 1)
            units.extend(_frame_units(frames))
        else:
            i += 1
    return _draft(units, _emit_gaps(units, _frames_marker))


def _frames(lines: list[str], i: int) -> tuple[list[str], int]:
    """The frames after a ``Traceback`` line, each with its source lines; and where they end."""
    frames: list[str] = []
    while i < len(lines) and lines[i][:1] in (" ", "\t"):
        if _FRAME.match(lines[i]) or not frames:
            frames.append(lines[i])
        else:
            frames[-1] += lines[i]
        i += 1
    return frames, i


def _frame_units(frames: list[str]) -> list[_Unit]:
    units = []
    for index, frame in enumerate(frames):
        flag = has_safety_signal(frame)
        edge = index < HEAD_FRAMES or index >= len(frames) - TAIL_FRAMES
        units.append(_Unit(frame, keep=edge or flag, safety=flag))
    return units


def _frames_marker(gap: list[_Unit]) -> str:
    return "  " + _marker_line(f"{len(gap)} frames omitted")


# Diffs ---------------------------------------------------------------------------------

_DIFF = re.compile(r"^diff --git |^--- \S.*\r?\n\+\+\+ \S.*\r?\n@@ ", re.MULTILINE)
_DIFF_HEADER = re.compile(
    r"diff --git |index |--- |\+\+\+ |@@ "
    r"|new file mode|deleted file mode|similarity |rename |Binary "
)


def _compact_diff(body: str) -> _Draft:
    units, changed = [], 0
    for line in _lines(body):
        flag = has_safety_signal(line)
        if _DIFF_HEADER.match(line):
            keep = True
        elif line[:1] in ("+", "-"):
            changed += 1
            keep = changed <= DIFF_CHANGED_LINES
        else:
            keep = False
        units.append(_Unit(line, keep=keep or flag, safety=flag))
    total = len(units)

    def marker(dropped: list[_Unit]) -> str:
        what = "context lines and changes past the budget"
        return _marker_line(f"{len(dropped)} of {total} diff lines omitted: {what}")

    return _draft(units, _emit_merged(units, marker))


# Long text -----------------------------------------------------------------------------


def _is_long_text(body: str) -> bool:
    return len(body) > LONG_CHARS


def _compact_long_text(body: str) -> _Draft:
    pieces = [piece for line in _lines(body) for piece in _pieces(line)]
    head = _fit(pieces, HEAD_CHARS)
    tail = len(pieces) - _fit(pieces[::-1], TAIL_CHARS)
    units = []
    for index, (piece, flag) in enumerate(pieces):
        keep = index < head or index >= max(head, tail) or flag
        units.append(_Unit(piece, keep=keep, safety=flag))
    return _draft(units, _emit_gaps(units, _chars_marker))


def _pieces(line: str) -> list[tuple[str, bool]]:
    """A line cut to PIECE_CHARS pieces, each marked when a safety match overlaps it."""
    flagged: set[int] = set()
    for start, end in _safety_spans(line):
        flagged.update(range(start // PIECE_CHARS, (end - 1) // PIECE_CHARS + 1))
    return [
        (line[at : at + PIECE_CHARS], at // PIECE_CHARS in flagged)
        for at in range(0, len(line), PIECE_CHARS)
    ]


def _fit(pieces: list[tuple[str, bool]], budget: int) -> int:
    """How many pieces from the start fit in ``budget`` characters (at least one)."""
    used, count = 0, 0
    for piece, _ in pieces:
        used += len(piece)
        if used > budget and count:
            break
        count += 1
    return count


def _chars_marker(gap: list[_Unit]) -> str:
    return _marker_line(f"{sum(len(u.text) for u in gap)} chars omitted")


_TEXT_SHAPES: tuple[tuple[Shape, Callable[[str], bool], Callable[[str], _Draft]], ...] = (
    (Shape.DIFF, lambda body: _DIFF.search(body) is not None, _compact_diff),
    (Shape.TEST_OUTPUT, lambda body: _TEST_RUN.search(body) is not None, _compact_test_output),
    (Shape.STACK_TRACE, lambda body: _TRACEBACK.search(body) is not None, _compact_stack_trace),
    (Shape.LISTING, _is_listing, _compact_listing),
    (Shape.LONG_TEXT, _is_long_text, _compact_long_text),
)

"""Compact a JSON payload: its largest collection of records becomes a header, the rows
kept (the head rows and every row the caller must keep) and a count of the rest.

This is the JSON half of ``compiler.compact.compact``, which passes in what a row that must be
kept looks like (``signal``, a safety signal there). The other fields of the payload are
re-serialised compactly around the collection; when a summary would not be shorter, the
payload comes back as plain compact JSON.

Decisions worth knowing:

- The collection is the one with the longest serialisation, found under any key at any
  depth; the keys of a tool call (``EXEMPT_KEYS``) are never searched, since a call states
  an action rather than returning data.
- Rows are checked for a signal only when the collection's text carries one: a match
  never crosses a row boundary (``,`` ``{`` ``}`` ``[`` ``]`` end every term, address and
  card number), so a clean collection has clean rows.
- A lone surrogate cannot be encoded, so it is written as a ``\\uXXXX`` escape; every
  other character is written as it is.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from itertools import islice, repeat
from typing import Any, NamedTuple

from compiler.frozen import build
from compiler.read import (
    CHECKING_DECODER,
    decode_json,
    dumps,
    escape_surrogates,
    exact_numbers,
    may_be_json,
)

MIN_ROWS = 2  # fewer rows gain nothing from a header
# A list of plain values (paths, ids, number tuples) is a collection only in a payload
# that holds no records, and only this long: a short one is usually ids the agent goes
# on to use (a user's reservations, an order's items), and is kept whole.
MIN_VALUES = 20
EXEMPT_KEYS = ("arguments", "function", "tool_calls")  # a tool call states an action


@dataclass(frozen=True)
class JsonSummary:
    """A compacted JSON payload; ``records`` is False when it is plain compact JSON."""

    text: str
    records: bool = False
    rows_total: int = 0
    rows_kept: int = 0
    safety_rows_kept: int = 0


def compact_json(
    text: str,
    *,
    tool_name: str | None,
    head_rows: int,
    signal: Callable[[str], bool],
    memo: dict | None = None,
) -> JsonSummary | None:
    """``text`` compacted as JSON, or None if it is not JSON this module can rewrite.

    ``signal`` says whether a row's compact JSON must be kept whatever its position;
    ``memo`` holds texts decoded before (``decode_json``), and gets the JSON text the
    summary opens with, with the value it reads as.

    Example:
        >>> rows = [{"id": i, "ok": i != 7} for i in range(12)]
        >>> doc = json.dumps({"page": 1, "rows": rows})
        >>> print(compact_json(doc, tool_name=None, head_rows=2,
        ...                    signal=lambda row: "false" in row).text)
        {"page":1}
        [rows: 12 rows, showing 3 (first 2 + 1 safety-flagged); 9 omitted (truncated=true)]
        columns=["id","ok"]
        [0,true]
        [1,true]
        [7,false]
        >>> compact_json('{"a": 1, "a": 2}', tool_name=None, head_rows=3, signal=bool) is None
        True
    """
    # Keys are checked for duplicates by counting colons, which is exact unless a
    # ``\u`` escape could spell one; then the decoder checks every object as it goes.
    checked = "\\u" in text
    try:
        if checked and not may_be_json(text):
            raise ValueError("not JSON")
        value = CHECKING_DECODER.decode(text) if checked else decode_json(text, memo)
        summary, colons, opening = _compact_value(value, tool_name, head_rows, signal)
    except (ValueError, RecursionError):
        return None  # not JSON, a duplicate key, or nested too deep to walk
    if not checked and colons != text.count(":"):
        return None  # a duplicate key: writing the value back would lose the other value
    if not exact_numbers(text):
        return None  # a number Python's float would change: rewriting it would too
    if memo is not None and opening is not None:
        # what the summary opens with reads back as the value it was written from: a
        # later reader of the summary (``repeats.json_values``) need not decode it
        memo.setdefault(*opening)
    return summary


def _compact_value(
    value: Any, tool_name: str | None, head_rows: int, signal: Callable[[str], bool]
) -> tuple[JsonSummary, int, tuple[str, Any] | None]:
    """The payload compacted, how many colons its plain serialisation holds, and the JSON
    text the summary opens with and its value (None when it opens with no JSON)."""
    found = _largest_collection(value)
    if found is not None:
        around = _without(value, found.path) if found.path else None
        rest = dumps(around) if found.path else None
        summary = _summarise(found, rest, _label(found.path, tool_name), head_rows, signal)
        size, colons = _plain_size(value, found, rest)
        if len(summary.text) < size:
            opening = None if rest is None else (escape_surrogates(rest), around)
            return summary, colons, opening
    plain = found.text if found is not None and not found.path else dumps(value)
    summary = build(
        JsonSummary,
        text=escape_surrogates(plain),
        records=False,
        rows_total=0,
        rows_kept=0,
        safety_rows_kept=0,
    )
    return summary, plain.count(":"), (summary.text, value)


def _plain_size(value: Any, found: _Collection, rest: str | None) -> tuple[int, int]:
    """The length (surrogates escaped) and colons of the plain serialisation of ``value``,
    from what is written already: the collection, and ``rest``, the value without it.

    Writing the value whole would cost as much again as the summary."""
    size, colons = len(escape_surrogates(found.text)), found.text.count(":")
    if rest is None:
        return size, colons
    size, colons = size + len(escape_surrogates(rest)), colons + rest.count(":")
    parent = value
    for step in found.path[:-1]:
        parent = parent[step]
    if isinstance(parent, list):  # the collection's place holds a placeholder in ``rest``
        return size - len(dumps(_PLACEHOLDER)), colons
    key = escape_surrogates(dumps(found.path[-1]))
    comma = 1 if len(parent) > 1 else 0
    return size + len(key) + 1 + comma, colons + key.count(":") + 1


def summary_floor(value: Any, cut_chars: int) -> int:
    """A lower bound on the length of every text ``compact_json`` can make of ``value`` (a
    summary, or plain compact JSON, or that with each string over ``cut_chars`` cut, as
    ``compiler.compact.compact`` cuts it), from the top level of a JSON object alone, so nothing is
    written: 0 when there is none.

    Every output keeps each top-level key, but at most one (the collection's, taken out of
    the fields around it), and in full each value that can hold no collection (a scalar,
    or a dict or short list of scalars), but a string that may be cut; a value that can
    hold the collection counts nothing.

    Example:
        >>> value = {"id": "R1", "rows": [{"n": i} for i in range(9)], "note": "ok"}
        >>> summary_floor(value, 1500), len(dumps({"id": "R1", "note": "ok"}))
        (22, 23)
    """
    if not isinstance(value, dict) or _collection_kind(value) is not None:
        return 0  # a list, or the collection itself: its fields are not written around it
    size, holder = 2, 0  # the braces; the longest key of a value that can hold the collection
    for key, child in value.items():
        written = len(key) + 3  # quoted, and its colon
        if isinstance(child, _NESTED) and not _holds_none(child):
            holder = max(holder, written)
            size += written
        else:
            size += written + _leaf_floor(child, cut_chars)
    return size - holder


def _holds_none(node: dict | list) -> bool:
    """A dict or list that can be no collection and holds none: no dict or list in it, and
    too short a list to be read as one of plain values."""
    if isinstance(node, list) and len(node) >= MIN_VALUES:
        return False
    return not _branches(node)


def _leaf_floor(value: Any, cut_chars: int) -> int:
    """The fewest characters ``value`` (a scalar, or a dict or list of scalars) is written
    in: a string over ``cut_chars`` counts nothing."""
    if isinstance(value, str):
        return len(value) + 2 if len(value) <= cut_chars else 0
    if isinstance(value, dict):
        return 2 + sum(len(key) + 3 + _leaf_floor(cell, cut_chars) for key, cell in value.items())
    if isinstance(value, list):
        return 2 + sum(_leaf_floor(cell, cut_chars) for cell in value)
    return 4 if value is None or isinstance(value, bool) else 1  # null, true; a number


# ---------------------------------------------------------------------------------------
# Finding the collection


class _Collection(NamedTuple):
    """Records found in a JSON value: ``kind`` is records, groups (lists of records) or map.

    ``text`` is the collection's compact JSON, its size the measure of "largest"."""

    path: tuple[str | int, ...]
    kind: str
    node: Any
    text: str

    @property
    def rows(self) -> list[Any]:
        """Dicts, lists of dicts, or (key, dict) pairs."""
        return list(self.node.items()) if self.kind == "map" else self.node


def _largest_collection(value: Any) -> _Collection | None:
    """The collection with the longest serialisation, found under any key at any depth;
    the first in document order of equals."""
    found: list[_Collection] = []
    # (an object that holds no object or array, as most small payloads are, holds none)
    if isinstance(value, list) or (isinstance(value, dict) and _branches(value)):
        _collect(value, (), found)
        if not found:
            _collect_values(value, (), found)
    return max(found, key=lambda collection: len(collection.text), default=None)


def _collect_values(node: dict | list, path: tuple[str | int, ...], found: list) -> None:
    """Every list of at least ``MIN_VALUES`` plain values (no object among them) in
    ``node``, in document order, for a payload without records: a listing sent as JSON.

    Example:
        >>> found = []
        >>> _collect_values({"files": [f"f{i}.py" for i in range(25)], "n": [1, 2]}, (), found)
        >>> [(c.path, c.kind, len(c.rows)) for c in found]
        [(('files',), 'values', 25)]
    """
    if isinstance(node, list):
        if len(node) >= MIN_VALUES and not any(isinstance(item, dict) for item in node):
            found.append(_Collection(path, "values", node, dumps(node)))
            return
        steps = enumerate(node)
    else:
        steps = ((key, child) for key, child in node.items() if key not in EXEMPT_KEYS)
    for step, child in steps:
        if isinstance(child, _NESTED):
            _collect_values(child, (*path, step), found)


def _collect(node: dict | list, path: tuple[str | int, ...], found: list[_Collection]) -> None:
    """Every collection in ``node``, in document order. Recursive: a value nested deeper
    than Python recurses raises RecursionError, and the payload is read as text."""
    kind = _collection_kind(node)
    if kind is not None:  # anything nested inside it is smaller
        found.append(_Collection(path, kind, node, dumps(node)))
    elif isinstance(node, dict):
        for key, child in node.items():
            if isinstance(child, _NESTED) and key not in EXEMPT_KEYS and _branches(child):
                _collect(child, (*path, key), found)
    else:
        for index, child in enumerate(node):
            if isinstance(child, _NESTED) and _branches(child):
                _collect(child, (*path, index), found)


_NESTED = (dict, list)
_NESTED_TYPES = frozenset(_NESTED)


def _branches(node: dict | list) -> bool:
    """Whether ``node`` holds a dict or a list. One that does not is no collection (each
    kind's rows are dicts or lists) and holds none, so it is not walked: most objects
    in a payload are leaves (a name, an address)."""
    children = node.values() if isinstance(node, dict) else node
    return not _NESTED_TYPES.isdisjoint(map(type, children))


def _collection_kind(node: dict | list) -> str | None:
    if isinstance(node, list):
        if len(node) >= MIN_ROWS and all(map(isinstance, node, repeat(dict))):
            return "records"
        if len(node) >= MIN_ROWS and all(map(_is_group, node)):
            return "groups"
    elif len(node) >= MIN_ROWS and _is_record_map(node):
        return "map"
    return None


def _is_group(row: Any) -> bool:
    return isinstance(row, list) and bool(row) and all(map(isinstance, row, repeat(dict)))


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


# ---------------------------------------------------------------------------------------
# Summarising it


def _summarise(
    found: _Collection, rest: str | None, label: str, head_rows: int, signal: Callable[[str], bool]
) -> JsonSummary:
    """The collection as a header and its kept rows, after ``rest``, the fields around it.
    Every row of a collection whose name carries a safety signal is a safety row, as a
    stale read's record rows, written with their field's name, are."""
    total = len(found.node)
    named = next((step for step in reversed(found.path) if isinstance(step, str)), "")
    if named and signal(named):  # "recalled_items", "allergens": each row is one of them
        kept_rows = list(found.rows)
        written, safety = [_row_text(found.kind, row) for row in kept_rows], len(kept_rows)
    elif signal(found.text):
        kept_rows, written, safety = _keep(found.kind, found.rows, head_rows, signal)
    else:  # the collection, so every row of it, carries no signal: the head rows are kept
        kept_rows = _head_rows(found, head_rows)
        written, safety = [None] * len(kept_rows), 0
    key_column = _key_column(kept_rows) if found.kind == "map" else None
    header = _rows_header(label, total, len(kept_rows), head_rows, key_column)
    text = header + _render_rows(found.kind, kept_rows, written, key_column)
    if rest is not None:
        text = rest + "\n" + text
    return build(
        JsonSummary,
        text=escape_surrogates(text),
        records=True,
        rows_total=total,
        rows_kept=len(kept_rows),
        safety_rows_kept=safety,
    )


def _head_rows(found: _Collection, head_rows: int) -> list[Any]:
    """The first ``head_rows`` rows of the collection, the others not listed."""
    head = max(head_rows, 0)
    if found.kind == "map":
        return list(islice(found.node.items(), head))
    return found.node[:head]


def _keep(
    kind: str, rows: list[Any], head_rows: int, signal: Callable[[str], bool]
) -> tuple[list[Any], list[str], int]:
    """The rows kept of a collection that carries a signal (the head, and every row that
    carries one), each one's text, written to be checked, and how many carry one."""
    kept, written, safety = [], [], 0
    for index, row in enumerate(rows):
        text = _row_text(kind, row)
        flag = signal(text)
        if index < head_rows or flag:
            kept.append(row)
            written.append(text)
            safety += flag
    return kept, written, safety


def _row_text(kind: str, row: Any) -> str:
    """A row as one line of JSON: an object, a group's list, or ``"key":{…}`` for a map."""
    if kind == "map":
        return f"{dumps(row[0])}:{dumps(row[1])}"
    return dumps(row)


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


def _render_rows(
    kind: str, rows: list[Any], written: list[str | None], key_column: str | None
) -> str:
    """Rows as a header and value tuples, or as one JSON object per line when that is no
    longer. ``written`` holds each row's object where it is written already."""
    table = _table(kind, rows, key_column)
    if table is not None and len(table[0]) < table[1]:
        return table[0]
    objects = [text or _row_text(kind, row) for text, row in zip(written, rows, strict=True)]
    return "\n" + "\n".join(objects) if objects else ""


def _table(kind: str, rows: list[Any], key_column: str | None) -> tuple[str, int] | None:
    """Column names once and a value tuple per row, if every kept record has the same
    fields: nested objects as dotted columns if that is uniform, else as cells. With it,
    how long the rows would be as objects."""
    for flatten in (True, False):
        table = _table_with(kind, rows, key_column, flatten)
        if table is not None:
            return table
    return None


def _table_with(
    kind: str, rows: list[Any], key_column: str | None, flatten: bool
) -> tuple[str, int] | None:
    if kind == "values":  # plain values have no columns: one per line is the table
        return None
    if kind == "groups":
        records = [leg for group in rows for leg in group]
    elif kind == "map":
        records = [record for _, record in rows]
    else:
        records = rows
    split = _shared_columns(records, flatten)
    if split is None:
        return None
    columns, cells = split
    names = header = dumps(columns)
    if kind == "groups":
        legs = iter(cells)
        lines = [dumps([next(legs) for _ in group]) for group in rows]
    elif kind == "map" and key_column is None:
        header = dumps(["(key)", *columns])
        lines = [dumps([key, *cells]) for (key, _), cells in zip(rows, cells, strict=True)]
    else:
        lines = list(map(dumps, cells))
    if columns and columns == list(records[0]):  # nothing was flattened
        keys = len(names) - 1  # each key, and its colon
    else:
        keys = len(dumps(records[0])) - len(dumps(cells[0]))
    table = "\ncolumns=" + header + "\n" + "\n".join(lines)
    return table, _objects_size(kind, rows, keys, lines, key_column)


def _shared_columns(records: list[dict], flatten: bool) -> tuple[list[str], list[list[Any]]] | None:
    """The columns every record has, and each record's cells; None if they differ."""
    columns: list[str] | None = None
    cells: list[list[Any]] = []
    for record in records:
        split = _columns(record, flatten)
        if split is None or (columns is not None and split[0] != columns):
            return None
        columns = split[0] if columns is None else columns
        cells.append(split[1])
    return None if columns is None else (columns, cells)


def _objects_size(kind: str, rows: list[Any], keys: int, lines: list[str], key: str | None) -> int:
    """How long ``rows`` are as objects, one a line, from the table's ``lines``: a record
    is longer than its value tuple by its keys and braces (``keys`` characters), the same
    in every record of a table, since they share their columns. (A map's record is never
    empty, so its ``[key, …]`` line is its object's key, a comma for the colon, and the
    record's cells.)"""
    records = sum(map(len, rows)) if kind == "groups" else len(rows)  # a group's legs
    size = sum(map(len, lines)) + len(lines) + keys * records
    if kind == "map" and key is not None:  # the key is a cell of the tuple, and leads the object
        size += sum(len(dumps(name)) + 1 for name, _ in rows)
    return size


def _columns(record: dict, flatten: bool) -> tuple[list[str], list[Any]] | None:
    """A record's column names and cells. ``flatten``: nested objects as dotted columns,
    and None when a key already holds a dot; else nested objects are cells."""
    names, cells = list(record), list(record.values())
    if not flatten:
        return names, cells
    if "." in "".join(names):
        return None
    if dict not in map(type, cells):  # as json.loads builds them: no subclasses
        return names, cells
    flat_names: list[str] = []
    flat_cells: list[Any] = []
    for name, cell in record.items():
        if isinstance(cell, dict) and cell:
            inner = _columns(cell, flatten)
            if inner is None:
                return None
            prefix = name + "."
            flat_names += [prefix + inner_name for inner_name in inner[0]]
            flat_cells += inner[1]
        else:
            flat_names.append(name)
            flat_cells.append(cell)
    return flat_names, flat_cells


_PLACEHOLDER = "[rows below]"


def _without(value: Any, path: tuple[str | int, ...]) -> Any:
    """``value`` with the collection at ``path`` removed (a list keeps a placeholder)."""
    step, rest = path[0], path[1:]
    if isinstance(value, dict):
        if not rest:
            return {k: v for k, v in value.items() if k != step}
        return {k: (_without(v, rest) if k == step else v) for k, v in value.items()}
    copy = list(value)
    copy[step] = _without(copy[step], rest) if rest else _PLACEHOLDER
    return copy

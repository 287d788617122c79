"""Re-encode a JSON payload losslessly: whitespace dropped, and a list of records that
share their fields written as the fields once and one row of values per record.

``cache_friendly`` mode applies it the first time a payload is seen, so it never
rewrites a prompt a provider has cached, and loses nothing: ``decode`` gives back the
very JSON value the payload held (types, numbers and key order included), and a
payload is re-encoded only when that was checked and the result is strictly shorter.
Every identifier stays, since every value does.

The encoding, for a payload that is a list of records::

    columns=["id","origin","prices.economy"]
    ["HAT001","JFK",120]
    ["HAT002","LAX",95]

and for an object, each top-level field holding such a list written as the text
``"[rows below]"`` in the object (compact JSON, first line) and its table after it,
under its key::

    {"reservation_id":"4WQ150","flights":"[rows below]"}
    "flights" columns=["origin","destination"]
    ["JFK","LAX"]

A list of groups of records (a connecting flight's legs) is written the same way
under ``group columns=``, one line per group holding each record's values.
Column names and rows are the table code ``compact_json`` writes for compacted
payloads (nested objects as dotted columns where every record has the same ones);
anything else is compact JSON (``json_text``).
"""

from __future__ import annotations

import re
from typing import Any

from compiler.compact.compact import Compacted
from compiler.compact.json_collections import MIN_ROWS
from compiler.compact.json_tables import as_table
from compiler.frozen import build
from compiler.read import CHECKING_DECODER, exact_numbers, may_be_json
from compiler.read.jsonio import canonical_dumps, json_text

PLACEHOLDER = "[rows below]"
_COLUMNS = "columns="
_GROUP = "group "
_SECTION = re.compile(r'^("(?:[^"\\]|\\.)*") (?:group )?columns=')


def lossless(text: str) -> str | None:
    """``text`` re-encoded as the module says, or None when that is not strictly shorter
    or would not decode to the same value (not JSON, a duplicate key, a number a double
    does not hold, a NaN).

    Example:
        >>> print(lossless('[{"id": "A1", "n": 1}, {"id": "B2", "n": 2}]'))
        columns=["id","n"]
        ["A1",1]
        ["B2",2]
        >>> lossless('{"id":"A1"}') is None  # compact already
        True
    """
    if not text or not may_be_json(text) or not exact_numbers(text):
        return None
    try:
        value = CHECKING_DECODER.decode(text)
    except (ValueError, RecursionError):
        return None
    if not isinstance(value, dict | list):
        return None
    try:
        encoded = _encode(value)
        # the value let go before the re-encoding is decoded: a payload's decoded JSON is
        # several times its text, and two at once were a compile's peak memory
        canonical, value = canonical_dumps(value), None
        same = canonical_dumps(decode(encoded)) == canonical
    except (ValueError, RecursionError):
        return None
    return encoded if same and len(encoded) < len(text) else None


def encoded(text: str) -> Compacted | None:
    """``lossless(text)`` as a compacted payload (shape ``lossless``), or None.

    Example:
        >>> found = encoded('[{"id": "A1", "n": 1}, {"id": "B2", "n": 2}]')
        >>> found.shape, found.original_chars, found.compacted_chars, found.rows_dropped
        ('lossless', 44, 36, 0)
    """
    text_out = lossless(text)
    if text_out is None:
        return None
    rows = text_out.count("\n") if "columns=" in text_out else 0
    return build(
        Compacted,
        text=text_out,
        shape="lossless",
        original_chars=len(text),
        compacted_chars=len(text_out),
        rows_total=rows,
        rows_kept=rows,
        rows_dropped=0,
        safety_rows_kept=0,
        changed=True,
        status_lines_dropped=0,
    )


def decode(text: str) -> Any:
    """The JSON value a ``lossless`` text holds.

    Example:
        >>> decode('{"a":"[rows below]"}\\n"a" columns=["x"]\\n[1]\\n[2]')
        {'a': [{'x': 1}, {'x': 2}]}
    """
    lines = text.split("\n")
    if lines[0].startswith((_COLUMNS, _GROUP + _COLUMNS)):
        return _rows(lines)
    value = CHECKING_DECODER.decode(lines[0])
    starts = [i for i, line in enumerate(lines) if i and _SECTION.match(line)]
    if starts and not isinstance(value, dict):
        raise ValueError("tables under a value that is no object")
    for start, end in zip(starts, [*starts[1:], len(lines)], strict=False):
        key_text = _SECTION.match(lines[start]).group(1)
        key = CHECKING_DECODER.decode(key_text)
        if value.get(key) != PLACEHOLDER:
            raise ValueError(f"no placeholder for {key!r}")
        value[key] = _rows([lines[start][len(key_text) + 1 :], *lines[start + 1 : end]])
    if (starts[0] if starts else len(lines)) != 1:
        raise ValueError("lines between the value and its first table")
    return value


def _encode(value: dict | list) -> str:
    """The shorter of the tables and plain compact JSON."""
    plain = json_text(value)
    if isinstance(value, list):
        table = _records_table(value)
        return table if table is not None and len(table) < len(plain) else plain
    tables = {key: _records_table(field) for key, field in value.items()}
    tables = {key: table for key, table in tables.items() if table is not None}
    if not tables:
        return plain
    head = {key: PLACEHOLDER if key in tables else field for key, field in value.items()}
    sections = [f"{json_text(key)} {table}" for key, table in tables.items()]
    text = "\n".join([json_text(head), *sections])
    return text if len(text) < len(plain) else plain


def _records_table(value: Any) -> str | None:
    """A list of at least ``MIN_ROWS`` records sharing their fields, as columns and rows;
    or a list of groups of such records (a connecting flight's legs), as the columns and
    one row of value lists per group, under ``group columns=``."""
    if not isinstance(value, list) or len(value) < MIN_ROWS:
        return None
    if all(isinstance(row, dict) and row for row in value):
        table = as_table("records", value, None)
        return None if table is None else table[0].lstrip("\n")
    if all(isinstance(group, list) and group for group in value) and all(
        isinstance(leg, dict) and leg for group in value for leg in group
    ):
        table = as_table("groups", value, None)
        return None if table is None else _GROUP + table[0].lstrip("\n")
    return None


def _rows(lines: list[str]) -> list:
    head = lines[0]
    grouped = head.startswith(_GROUP)
    columns = CHECKING_DECODER.decode(head[len(_GROUP) * grouped + len(_COLUMNS) :])
    if grouped:
        return [
            [_record(columns, cells) for cells in CHECKING_DECODER.decode(line)]
            for line in lines[1:]
        ]
    return [_record(columns, CHECKING_DECODER.decode(line)) for line in lines[1:]]


def _record(columns: list[str], cells: list) -> dict:
    """One row's record: a dotted column's cell goes into the nested object it names."""
    if len(cells) != len(columns):
        raise ValueError("a row's cells do not match the columns")
    record: dict = {}
    for name, cell in zip(columns, cells, strict=True):
        *path, last = name.split(".")
        node = record
        for step in path:
            node = node.setdefault(step, {})
        node[last] = cell
    return record

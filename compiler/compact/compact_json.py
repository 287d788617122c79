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

from collections.abc import Callable
from dataclasses import dataclass
from itertools import islice
from typing import Any

from compiler.compact.json_collections import (
    MIN_VALUES,
    NESTED,
    PLACEHOLDER,
    Collection,
    branches,
    collection_kind,
    collection_label,
    largest_collection,
    without,
)
from compiler.compact.json_tables import render_rows, row_text, rows_header, shared_key_column
from compiler.frozen import build
from compiler.read import (
    CHECKING_DECODER,
    decode_json,
    dumps,
    escape_surrogates,
    exact_numbers,
    may_be_json,
)


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
        >>> import json
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
    found = largest_collection(value)
    if found is not None:
        around = without(value, found.path) if found.path else None
        rest = dumps(around) if found.path else None
        summary = _summarise(
            found, rest, collection_label(found.path, tool_name), head_rows, signal
        )
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


def _plain_size(value: Any, found: Collection, rest: str | None) -> tuple[int, int]:
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
        return size - len(dumps(PLACEHOLDER)), colons
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
    if not isinstance(value, dict) or collection_kind(value) is not None:
        return 0  # a list, or the collection itself: its fields are not written around it
    size, holder = 2, 0  # the braces; the longest key of a value that can hold the collection
    for key, child in value.items():
        written = len(key) + 3  # quoted, and its colon
        if isinstance(child, NESTED) and not _holds_none(child):
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
    return not branches(node)


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
# Summarising it


def _summarise(
    found: Collection, rest: str | None, label: str, head_rows: int, signal: Callable[[str], bool]
) -> JsonSummary:
    """The collection as a header and its kept rows, after ``rest``, the fields around it.
    Every row of a collection whose name carries a safety signal is a safety row, as a
    stale read's record rows, written with their field's name, are."""
    total = len(found.node)
    named = next((step for step in reversed(found.path) if isinstance(step, str)), "")
    if named and signal(named):  # "recalled_items", "allergens": each row is one of them
        kept_rows = list(found.rows)
        written, safety = [row_text(found.kind, row) for row in kept_rows], len(kept_rows)
    elif signal(found.text):
        kept_rows, written, safety = _keep(found.kind, found.rows, head_rows, signal)
    else:  # the collection, so every row of it, carries no signal: the head rows are kept
        kept_rows = _head_rows(found, head_rows)
        written, safety = [None] * len(kept_rows), 0
    key_column = shared_key_column(kept_rows) if found.kind == "map" else None
    header = rows_header(label, total, len(kept_rows), head_rows, key_column)
    text = header + render_rows(found.kind, kept_rows, written, key_column)
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


def _head_rows(found: Collection, head_rows: int) -> list[Any]:
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
        text = row_text(kind, row)
        flag = signal(text)
        if index < head_rows or flag:
            kept.append(row)
            written.append(text)
            safety += flag
    return kept, written, safety

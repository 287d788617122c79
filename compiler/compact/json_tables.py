"""Rows of a JSON collection written out: as one object a line, or as a table (the
column names once, then a value tuple per row) when every row has the same fields and the
table is shorter. Nested objects become dotted columns where that is uniform.
"""

from __future__ import annotations

from typing import Any

from compiler.read import dumps


def row_text(kind: str, row: Any) -> str:
    """A row as one line of JSON: an object, a group's list, or ``"key":{…}`` for a map."""
    if kind == "map":
        return f"{dumps(row[0])}:{dumps(row[1])}"
    return dumps(row)


def rows_header(label: str, total: int, kept: int, head_rows: int, key_column: str | None) -> str:
    keyed = f" keyed by {key_column}" if key_column else ""
    if kept == total:
        return f"[{label}: {total} rows{keyed}]"
    head = min(head_rows, total)
    extra = kept - head
    shown = f"{kept} (first {head} + {extra} safety-flagged)" if extra else f"first {kept}"
    return (
        f"[{label}: {total} rows{keyed}, showing {shown}; {total - kept} omitted (truncated=true)]"
    )


def shared_key_column(rows: list[tuple[str, dict]]) -> str | None:
    """A field equal to the key in every kept row, so the key need not be repeated."""
    if not rows:
        return None
    first_key, first_record = rows[0]
    for column, cell in first_record.items():
        if cell == first_key and all(record.get(column) == key for key, record in rows):
            return column
    return None


def render_rows(
    kind: str, rows: list[Any], written: list[str | None], key_column: str | None
) -> str:
    """Rows as a header and value tuples, or as one JSON object per line when that is no
    longer. ``written`` holds each row's object where it is written already."""
    table = as_table(kind, rows, key_column)
    if table is not None and len(table[0]) < table[1]:
        return table[0]
    objects = [text or row_text(kind, row) for text, row in zip(written, rows, strict=True)]
    return "\n" + "\n".join(objects) if objects else ""


def as_table(kind: str, rows: list[Any], key_column: str | None) -> tuple[str, int] | None:
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

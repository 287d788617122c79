"""The collection a JSON payload is compacted around: the records found under any key at
any depth, the largest by its compact JSON, named by its path, and the payload without it.

A collection is a list of records (objects), a list of groups (lists of records, as a
trip's legs), a map of records (an object whose values are records), or, in a payload
that holds no records, a long list of plain values. The keys of a tool call
(``EXEMPT_KEYS``) are never searched: a call states an action rather than returning data.
"""

from __future__ import annotations

import json
import re
from itertools import repeat
from typing import Any, NamedTuple

from compiler.read import dumps

MIN_ROWS = 2  # fewer rows gain nothing from a header
# A list of plain values (paths, ids, number tuples) is a collection only in a payload
# that holds no records, and only this long: a short one is usually ids the agent goes
# on to use (a user's reservations, an order's items), and is kept whole.
MIN_VALUES = 20
EXEMPT_KEYS = ("arguments", "function", "tool_calls")  # a tool call states an action


class Collection(NamedTuple):
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


def largest_collection(value: Any) -> Collection | None:
    """The collection with the longest serialisation, found under any key at any depth;
    the first in document order of equals."""
    found: list[Collection] = []
    # (an object that holds no object or array, as most small payloads are, holds none)
    if isinstance(value, list) or (isinstance(value, dict) and branches(value)):
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
            found.append(Collection(path, "values", node, dumps(node)))
            return
        steps = enumerate(node)
    else:
        steps = ((key, child) for key, child in node.items() if key not in EXEMPT_KEYS)
    for step, child in steps:
        if isinstance(child, NESTED):
            _collect_values(child, (*path, step), found)


def _collect(node: dict | list, path: tuple[str | int, ...], found: list[Collection]) -> None:
    """Every collection in ``node``, in document order. Recursive: a value nested deeper
    than Python recurses raises RecursionError, and the payload is read as text."""
    kind = collection_kind(node)
    if kind is not None:  # anything nested inside it is smaller
        found.append(Collection(path, kind, node, dumps(node)))
    elif isinstance(node, dict):
        for key, child in node.items():
            if isinstance(child, NESTED) and key not in EXEMPT_KEYS and branches(child):
                _collect(child, (*path, key), found)
    else:
        for index, child in enumerate(node):
            if isinstance(child, NESTED) and branches(child):
                _collect(child, (*path, index), found)


NESTED = (dict, list)
NESTED_TYPES = frozenset(NESTED)


def branches(node: dict | list) -> bool:
    """Whether ``node`` holds a dict or a list. One that does not is no collection (each
    kind's rows are dicts or lists) and holds none, so it is not walked: most objects
    in a payload are leaves (a name, an address)."""
    children = node.values() if isinstance(node, dict) else node
    return not NESTED_TYPES.isdisjoint(map(type, children))


def collection_kind(node: dict | list) -> str | None:
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


def collection_label(path: tuple[str | int, ...], tool_name: str | None) -> str:
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


PLACEHOLDER = "[rows below]"


def without(value: Any, path: tuple[str | int, ...]) -> Any:
    """``value`` with the collection at ``path`` removed (a list keeps a placeholder)."""
    step, rest = path[0], path[1:]
    if isinstance(value, dict):
        if not rest:
            return {k: v for k, v in value.items() if k != step}
        return {k: (without(v, rest) if k == step else v) for k, v in value.items()}
    copy = list(value)
    copy[step] = without(copy[step], rest) if rest else PLACEHOLDER
    return copy

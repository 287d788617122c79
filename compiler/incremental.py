"""Incremental compile for agent loops: a session costs O(turns), not O(turns²).

A wrapper compiles the whole history on every model call. Each call here
identifies its input items by content, finds the longest prefix it has already
folded (a bounded LRU of ``Fold`` snapshots keyed by a rolling hash of the
items, verified item by item), resumes it with the new items only, and
finishes. A snapshot the call extends is taken out of the cache, so the call owns
it and resumes it in place; one it repeats exactly stays and is resumed from a
copy. The caller still passes the full history every time and gets exactly what
a full compile of that history gives: the full compile is the same fold started
from empty.

Nothing is shared between histories but results that are pure functions of
their content, so conversations never see each other's state. The cache is
bounded in snapshots and in items held, safe under threads (a lock guards the
index; no two calls work on one snapshot), and can be switched off per call
(``compile_messages(..., cache=False)``) or resized (``configure``).
"""

from __future__ import annotations

import marshal
import os
import threading
from collections import OrderedDict

from compiler.fold import Fold
from compiler.read import Pairing, as_message_dict, read_message_list

DEFAULT_HISTORIES = int(os.environ.get("CONTEXTGC_CACHE_HISTORIES", "128"))
DEFAULT_ITEMS = int(os.environ.get("CONTEXTGC_CACHE_ITEMS", "50000"))


def item_key(item):
    """A hashable key that is equal exactly when two message items are equal.

    Example:
        >>> item_key({"role": "user", "content": "hi"})
        (('role', 'user'), ('content', 'hi'))
        >>> item_key({"role": "tool", "content": [{"type": "text", "text": "x"}]})[0]
        '<marshal>'
    """
    if isinstance(item, dict):
        pairs = tuple(item.items())
        if _PLAIN.issuperset(map(type, item.values())):
            return pairs  # the common case: text values, hashed without copying
        try:  # (an assistant turn's tool calls: 1.7 us where the pairs' ``repr`` took 9)
            return ("<marshal>", marshal.dumps(item, _MARSHAL_VERSION))
        except ValueError:  # a type it does not write exactly, or nested past its depth
            pass
        return tuple((key, _freeze(value)) for key, value in pairs)
    read = as_message_dict(item)  # an SDK message object: keyed by what it says
    if read is not None:
        return ("<message>", item_key(read))
    return ("<item>", _freeze(item))


_PLAIN = frozenset({str, type(None)})
# ``marshal`` writes a dict, list, text or number of exactly those types (no subclass),
# ``True`` apart from ``1`` and ``1.0``, each dict's keys in order and a float's bits, and
# reads the value back from the bytes: equal bytes are equal values. Version 2 is the
# last that writes no back-references, whose use follows reference counts: with them the
# same item could write other bytes on the next call.
_MARSHAL_VERSION = 2


def _freeze(value):
    """``repr`` tells apart what ``==`` confuses (``True``/``1``/``1.0``) and is
    exact for the JSON values messages hold; anything else keys by identity, held
    (``_Pinned``) so that no other object can take its address while the key lives."""
    if value is None or isinstance(value, str | int | float | bool | list | dict | tuple):
        try:
            text = repr(value)
            if "nan" not in text or not _has_nan(value):
                return (type(value).__name__, text)
        except (RecursionError, ValueError):
            # Too deep to write out, or an int too long for ``repr``. Its identity would not
            # do: the caller may change it in place, and an equal key would resume a history
            # that no longer holds. A key equal to nothing else makes the compile start afresh.
            return ("<unkeyed>", _Pinned(object()))
    return ("<object>", _Pinned(value))


class _Pinned:
    """An object as a key part: equal only to itself, and kept alive by the key. Keyed
    by a bare ``id``, an object freed after a compile let a new object at the same
    address resume another conversation's history.

    Example:
        >>> a, b = object(), object()
        >>> _Pinned(a) == _Pinned(a), _Pinned(a) == _Pinned(b)
        (True, False)
    """

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def __eq__(self, other):
        return isinstance(other, _Pinned) and other.value is self.value

    def __hash__(self):
        return id(self.value)


def _has_nan(value) -> bool:
    """A float NaN anywhere inside (it never equals itself, so it keys by identity)."""
    if isinstance(value, float):
        return value != value
    if isinstance(value, dict):
        return any(_has_nan(v) for v in value.values())
    if isinstance(value, list | tuple):
        return any(_has_nan(v) for v in value)
    return False


class HistoryCache:
    """A bounded LRU of folded histories, keyed by options and a rolling item hash."""

    def __init__(self, max_histories: int = DEFAULT_HISTORIES, max_items: int = DEFAULT_ITEMS):
        self.max_histories = max_histories
        self.max_items = max_items
        self._entries: OrderedDict = OrderedDict()
        self._items = 0
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def compile(self, items: list, options, options_key):
        """Compile ``items`` resuming the longest cached prefix; returns the
        ``Compilation`` and the parse warnings of every item, then those of the calls and
        answers that do not pair (``pairing.unpaired``, over the whole history: a call and
        its answer may come in different extensions)."""
        keys = [item_key(item) for item in items]
        chain = _chain(keys)
        start, found, taken = self._longest(options_key, keys, chain)
        if found is None:
            progress = Fold(options, by_item=True)
            progress.pairing = Pairing()
        else:  # a snapshot taken out of the cache is this call's alone: it needs no copy
            progress = found if taken else found.copy()
        progress.options = options  # the layout options (invariants, recall, …) are this call's
        if start < len(items):
            parsed = read_message_list(items[start:], start=start)
            progress.extend(parsed.messages, keys[start:], parsed.warnings)
            progress.pairing.extend(parsed.messages)  # (``unpaired``, read on from the last)
        result = progress.finish()
        if keys and self.max_histories > 0:
            self._store((options_key, chain[-1]), progress)
        return result, (*progress.warnings, *progress.pairing.warnings())

    def _longest(self, options_key, keys, chain) -> tuple[int, Fold | None, bool]:
        """The longest cached prefix, and whether it was taken out of the cache. A prefix
        this call extends is: the conversation has moved on, and its tip will be stored
        instead. One the call repeats stays, shared, and is resumed from a copy."""
        with self._lock:
            for length in range(len(keys), 0, -1):
                key = (options_key, chain[length - 1])
                entry = self._entries.get(key)
                if entry is not None and entry.keys == keys[:length]:
                    self.hits += 1
                    if length < len(keys):
                        del self._entries[key]
                        self._items -= len(entry.keys)
                        return length, entry, True
                    self._entries.move_to_end(key)
                    return length, entry, False
            self.misses += 1
        return 0, None, False

    def _store(self, key, progress: Fold) -> None:
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self._items -= len(old.keys)
            self._entries[key] = progress
            self._items += len(progress.keys)
            self._trim()

    def _trim(self) -> None:
        """Drop the least recently used snapshots until both bounds hold (lock held)."""
        while self._entries and (
            len(self._entries) > self.max_histories or self._items > self.max_items
        ):
            _, evicted = self._entries.popitem(last=False)
            self._items -= len(evicted.keys)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._items = 0

    def stats(self) -> dict:
        with self._lock:
            return {
                "histories": len(self._entries),
                "items": self._items,
                "hits": self.hits,
                "misses": self.misses,
                "max_histories": self.max_histories,
                "max_items": self.max_items,
            }


def _chain(keys: list) -> list[int]:
    """Rolling hashes: element i identifies the prefix of length i + 1."""
    out, running = [], 0
    for key in keys:
        running = hash((running, key))
        out.append(running)
    return out


HISTORIES = HistoryCache()


def configure(*, max_histories: int | None = None, max_items: int | None = None) -> None:
    """Resize the shared cache (0 histories switches it off)."""
    if max_histories is not None:
        HISTORIES.max_histories = max_histories
    if max_items is not None:
        HISTORIES.max_items = max_items
    with HISTORIES._lock:
        HISTORIES._trim()

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
        return ("<frozen>", tuple((key, _freeze(value)) for key, value in pairs))
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
        # (options key, id of a history's first item): the key of the snapshot last
        # stored for it (``_resume``)
        self._heads: dict = {}
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def compile(self, items: list, options, options_key):
        """Compile ``items`` resuming the longest cached prefix; returns the
        ``Compilation`` and the parse warnings of every item, then those of the calls and
        answers that do not pair (``pairing.unpaired``, over the whole history: a call and
        its answer may come in different extensions)."""
        ids = tuple(map(id, items))
        same = self._resume(options_key, items, ids)
        if same is not None:  # these very items, unchanged: only the new ones are keyed
            start, found, taken, keys, chain = same
            keys.extend(map(item_key, items[start:]))
            chain = _chain(keys[start:], chain)
        else:
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
            self._store((options_key, chain[-1]), _Tip(progress, ids, chain))
        return result, (*progress.warnings, *progress.pairing.warnings())

    def _resume(self, options_key, items, ids) -> tuple | None:
        """``_longest`` found without keying every item: the snapshot last stored for a
        history whose first item is this very object, where the items it holds are the
        objects this call starts with (by ``id``) and each still reads as its key says
        (``_unchanged``, which tells apart whatever ``item_key`` does). Returns its length,
        its fold, whether it was taken out, its keys and its chain (both new lists); None
        where there is no such snapshot, and every item is keyed as before. (On the 62nd
        call of an airline loop keying every item took about a quarter of the call.)"""
        with self._lock:
            key = self._heads.get((options_key, ids[0])) if ids else None
            tip = self._entries.get(key) if key is not None else None
            if tip is None:
                return None
            length = len(tip.ids)
            if length > len(ids) or tip.ids != ids[:length]:
                return None
            fold = tip.fold
            if not _unchanged(items, fold.keys):
                return None
            self.hits += 1
            keys, chain = list(fold.keys), list(tip.chain)
            if length == len(ids):
                self._entries.move_to_end(key)
                return length, fold, False, keys, chain
            self._drop(key)
            return length, fold, True, keys, chain

    def _longest(self, options_key, keys, chain) -> tuple[int, Fold | None, bool]:
        """The longest cached prefix, and whether it was taken out of the cache. A prefix
        this call extends is: the conversation has moved on, and its tip will be stored
        instead. One the call repeats stays, shared, and is resumed from a copy."""
        with self._lock:
            for length in range(len(keys), 0, -1):
                key = (options_key, chain[length - 1])
                tip = self._entries.get(key)
                if tip is not None and tip.fold.keys == keys[:length]:
                    self.hits += 1
                    if length < len(keys):
                        self._drop(key)
                        return length, tip.fold, True
                    self._entries.move_to_end(key)
                    return length, tip.fold, False
            self.misses += 1
        return 0, None, False

    def _store(self, key, tip: _Tip) -> None:
        with self._lock:
            if key in self._entries:
                self._drop(key)
            self._entries[key] = tip
            self._items += len(tip.fold.keys)
            if tip.ids:
                self._heads[(key[0], tip.ids[0])] = key
            self._trim()

    def _drop(self, key) -> None:
        """One snapshot out of the cache (lock held)."""
        tip = self._entries.pop(key)
        self._items -= len(tip.fold.keys)
        head = (key[0], tip.ids[0]) if tip.ids else None
        if head is not None and self._heads.get(head) == key:
            del self._heads[head]

    def _trim(self) -> None:
        """Drop the least recently used snapshots until both bounds hold (lock held)."""
        while self._entries and (
            len(self._entries) > self.max_histories or self._items > self.max_items
        ):
            self._drop(next(iter(self._entries)))

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._heads.clear()
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


def _chain(keys: list, before: list[int] | None = None) -> list[int]:
    """Rolling hashes: element i identifies the prefix of length i + 1 (``before``: those
    of the keys before these, extended in place)."""
    out = before if before is not None else []
    running = out[-1] if out else 0
    for key in keys:
        running = hash((running, key))
        out.append(running)
    return out


class _Tip:
    """A cached snapshot: the fold, the ``id`` of each item it was given, and its chain."""

    __slots__ = ("chain", "fold", "ids")

    def __init__(self, fold: Fold, ids: tuple, chain: list[int]):
        self.fold, self.ids, self.chain = fold, ids, chain


def _unchanged(items, keys) -> bool:
    """Whether each item still has the key it was stored with, asked more cheaply than
    keying it afresh: a dict of text and nulls (a key of its pairs, never led by text) by
    its pairs, which equal such pairs only where they are the same text and nulls in the
    same order; one keyed by its ``marshal`` bytes by those; anything else keyed again.

    Example:
        >>> item = {"role": "user", "content": "hi"}
        >>> _unchanged([item], [item_key(item)])
        True
        >>> _unchanged([{"role": "user", "content": 1}], [item_key(item)])
        False
    """
    for item, key in zip(items, keys, strict=False):
        if key and type(key[0]) is str:  # a tagged key (``item_key``)
            if key[0] == "<marshal>":
                try:
                    same = type(item) is dict and marshal.dumps(item, _MARSHAL_VERSION) == key[1]
                except ValueError:
                    same = False
            else:
                same = item_key(item) == key
        else:
            same = isinstance(item, dict) and tuple(item.items()) == key
        if not same:
            return False
    return True


HISTORIES = HistoryCache()


def configure(*, max_histories: int | None = None, max_items: int | None = None) -> None:
    """Resize the shared cache (0 histories switches it off)."""
    if max_histories is not None:
        HISTORIES.max_histories = max_histories
    if max_items is not None:
        HISTORIES.max_items = max_items
    with HISTORIES._lock:
        HISTORIES._trim()

"""Slots kept per entity: the part of the register fold that files a scoped slot's value
under its entity (``scope`` in the schema: a cabin per reservation).

A value is kept under a key: the slot's name for an unscoped slot, and for a scoped one
the slot and the value its entity slot holds when the value is said (``entity_key``), so
that values of one entity supersede, conflict with and move on from only each other's.
A value said while the entity slot holds none waits under the key of no entity; the next
entity named takes it up, unless it holds a value of its own for the slot.
"""

from __future__ import annotations

from compiler.facts import Observation
from compiler.frozen import build
from compiler.state.entries import Entry, value_key


class EntityScopes:
    """The entity keys of ``RegisterFold``: it holds ``scopes`` (scoped slot → its entity
    slot), ``scoped`` (entity slot → the slots it scopes), ``live`` (key → entry index),
    ``entries``, ``ended`` and ``moving``."""

    scopes: dict[str, str]
    scoped: dict[str, tuple[str, ...]]
    live: dict[str, int]
    entries: list[Entry]
    ended: dict[str, set[str]]
    moving: dict

    def _current(self, key: str) -> Entry | None:
        index = self.live.get(key)
        return None if index is None else self.entries[index]

    def _key(self, slot: str) -> str:
        return slot if slot not in self.scopes else self._entity(slot)[0]

    def _entity(self, slot: str) -> tuple[str, str | None]:
        """A scoped slot's key as things stand, and its entity: the value its entity slot
        holds now (None: none)."""
        held = self._current(self._key(self.scopes[slot]))
        if held is None:
            return entity_key(slot, None), None
        return entity_key(slot, held.value), held.value

    def _depth(self, obs: Observation) -> int:
        """How many entity slots stand above ``obs.slot`` (0: unscoped)."""
        depth, slot = 0, obs.slot
        while slot in self.scopes:
            depth, slot = depth + 1, self.scopes[slot]
        return depth

    def _adopt(self, scope: str, entity: str) -> None:
        """The values said of the slots ``scope`` scopes while it held no entity are the
        entity's just named, unless it holds a value of its own for the slot."""
        for slot in self.scoped.get(scope, ()):
            waiting, key = entity_key(slot, None), entity_key(slot, entity)
            if waiting in self.live and key not in self.live:
                index = self.live.pop(waiting)
                self.live[key] = index
                moved = {**self.entries[index].__dict__, "entity": entity}
                self.entries[index] = build(Entry, **moved)
                if waiting in self.moving:
                    self.moving[key] = self.moving.pop(waiting)

    def _current_and_others(self) -> tuple[list[Entry], list[Entry]]:
        """The live entries of unscoped slots and of each scoped slot's current entity;
        and the live entries of the other entities, entity by entity, leaving out those
        whose entity a tool call ended (a cancelled reservation's cabin is no state)."""
        current = {self._key(slot) for slot in self.scopes}
        live, others = [], []
        for key, index in self.live.items():
            entry = self.entries[index]
            if entry.slot not in self.scopes or key in current:
                live.append(entry)
            elif value_key(entry.entity or "") not in self.ended.get(self.scopes[entry.slot], ()):
                others.append(entry)
        others.sort(key=lambda e: (value_key(e.entity or ""), e.slot))
        return sorted(live, key=by_slot), others


ENTITY_MARK = "\x00"  # between a scoped slot's name and its entity's value in a key


def entity_key(slot: str, entity: str | None) -> str:
    """Where a scoped slot's value for ``entity`` is kept (None: no entity named yet).

    Example:
        >>> entity_key("cabin", "ABC123") == entity_key("cabin", "abc123")
        True
    """
    return f"{slot}{ENTITY_MARK}{'' if entity is None else value_key(entity)}"


def by_slot(entry: Entry) -> str:
    return entry.slot

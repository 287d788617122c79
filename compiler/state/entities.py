"""Slots kept per entity: the part of the register fold that files a scoped slot's value
under its entity (``scope`` in the schema: a cabin per reservation).

A value is kept under a key: the slot's name for an unscoped slot, and for a scoped one
the slot and the value its entity slot holds when the value is said (``entity_key``), so
that values of one entity supersede, conflict with and move on from only each other's.
A value said while the entity slot holds none waits under the key of no entity; the next
entity named takes it up, unless it holds a value of its own for the slot.
"""

from __future__ import annotations

from compiler.facts import Observation, Provenance
from compiler.frozen import build
from compiler.state.entries import Entry, value_key


class EntityScopes:
    """The entity keys of ``RegisterFold``: it holds ``scopes`` (scoped slot → its entity
    slot), ``scoped`` (entity slot → the slots it scopes), ``live`` (key → entry index),
    ``entries``, ``ended``, ``moving``, ``immutable``, ``displaced`` and ``started``; and
    how a tool call starts a new entity (``_start``, ``_reclaim``)."""

    scopes: dict[str, str]
    scoped: dict[str, tuple[str, ...]]
    live: dict[str, int]
    entries: list[Entry]
    ended: dict[str, set[str]]
    moving: dict
    started: tuple[int, str, str] | None
    displaced: list[int]
    immutable: frozenset[str]

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

    def _start(self, obs: Observation) -> None:
        """A tool call began a new entity of the slot's kind, not yet named: the value
        held is replaced (by the value named next), not ended; a pinned or immutable one
        stays. ``started`` notes the start: its turn, entity slot and the entity it
        displaced (``_reclaim``). The entry is recorded as ``displaced``: another entity
        took its place, but nothing said of it was replaced (a new booking leaves the old
        reservation as it was), so ``retire`` keeps the turns that said it."""
        key = self._key(obs.slot)
        current = self._current(key)
        if current is None or current.pinned or obs.slot in self.immutable:
            return
        index = self.live.pop(key)
        ended = {**current.__dict__, "superseded_by": obs.turn, "revoked_at": None}
        self.entries[index] = build(Entry, **ended)
        self.displaced.append(index)
        self.moving.pop(key, None)
        self.started = (obs.turn, obs.slot, current.value)

    def _reclaim(self, obs: Observation) -> None:
        """``obs`` sets a scoped slot of the entity a tool call just started (a booking's
        cabin). A value speech said of the entity held before, the same as the one the new
        entity is started with, was about the new one, not yet named then (the cabin of the
        trip being booked, said while another reservation was in hand): it is filed under
        no entity, for the new one to take up, and the value it replaced is the old
        entity's again. A value the agent acted on or declared for the old one stays.

        Example:
            >>> from compiler.facts import Op, Provenance
            >>> from compiler.state.register import RegisterFold
            >>> fold = RegisterFold(scopes={"cabin": "res"})
            >>> for o in (Observation("res", "AB12CD", 1), Observation("cabin", "economy", 2),
            ...           Observation("cabin", "basic economy", 5)):
            ...     fold.apply(o)
            >>> fold.apply_turn([Observation("res", "", 7, Provenance.ACTED, op=Op.START),
            ...                  Observation("cabin", "basic_economy", 7, Provenance.ACTED)])
            >>> for e in fold.result().history:
            ...     print(e.value, e.entity, e.live)
            AB12CD None False
            economy AB12CD True
            basic economy None False
            basic_economy None True
        """
        scope, old = self.started[1:]
        if self.scopes.get(obs.slot) != scope or obs.provenance is Provenance.INFERRED:
            return
        key = entity_key(obs.slot, old)
        held = self._current(key)
        if held is None or held.provenance is not Provenance.INFERRED:
            return
        if _spelling_key(held.value) != _spelling_key(obs.value):
            return
        index = self.live.pop(key)
        before = [
            i
            for i, e in enumerate(self.entries[:index])
            if entity_key(e.slot, e.entity) == key and e.superseded_by in held.supports
        ]
        if before:  # the value the reclaimed one replaced is the old entity's again
            self.entries[before[-1]] = _restated_live(self.entries[before[-1]])
            self.live[key] = before[-1]
        self.live[entity_key(obs.slot, None)] = index
        self.entries[index] = build(Entry, **{**held.__dict__, "entity": None})
        self.moving.pop(key, None)

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


def _restated_live(entry: Entry) -> Entry:
    """``entry`` live again: what replaced it was about another entity."""
    return build(Entry, **{**entry.__dict__, "superseded_by": None, "revoked_at": None})


def _spelling_key(value: str) -> str:
    """A value as compared across spellings of one enumeration: a tool argument's
    ``basic_economy`` is speech's "Basic Economy"."""
    return value_key(value.replace("_", " "))


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

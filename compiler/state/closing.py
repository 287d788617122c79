"""What a tool call does to a live value besides setting one: revoke it or end it (a
cancel); the part of the register fold (``register.RegisterFold``) that closes entries
rather than writing them. Starting a new entity of a kind is ``entities.EntityScopes``'s,
as it also decides which entity later values belong to.
"""

from __future__ import annotations

from compiler.facts import Observation
from compiler.frozen import build
from compiler.state.entities import EntityScopes
from compiler.state.entries import Entry, Refusal, value_key


class Closings(EntityScopes):
    """Revokes, ends and starts for ``RegisterFold``, which holds besides what
    ``EntityScopes`` names ``immutable`` (the slots never rewritten), ``revoked`` (keys
    voided) and ``refusals``."""

    immutable: frozenset[str]
    revoked: set[str]
    refusals: list[Refusal]

    def _revoke(self, obs: Observation) -> None:
        key = self._key(obs.slot)
        current = self._current(key)
        if current is None:
            self.refusals.append(
                Refusal(obs.slot, obs.turn, "revoke_refused", "nothing to revoke: slot not set")
            )
            return
        if current.pinned or obs.slot in self.immutable:
            self.refusals.append(
                Refusal(obs.slot, obs.turn, "revoke_refused", "pinned or immutable slot")
            )
            return
        self.entries[self.live.pop(key)] = closed(current, revoked_at=obs.turn)
        self.moving.pop(key, None)
        self.revoked.add(key)

    def _end(self, obs: Observation) -> None:
        """A tool call ended ``obs.value``: it is over, whether or not the slot holds it."""
        self.ended.setdefault(obs.slot, set()).add(value_key(obs.value))
        key = self._key(obs.slot)
        current = self._current(key)
        if current is None or value_key(current.value) != value_key(obs.value):
            return
        if current.pinned or obs.slot in self.immutable:
            self.refusals.append(
                Refusal(obs.slot, obs.turn, "end_refused", "pinned or immutable slot", obs.value)
            )
            return
        self.entries[self.live.pop(key)] = closed(current, revoked_at=obs.turn)
        self.moving.pop(key, None)


def closed(entry: Entry, superseded_by: int | None = None, revoked_at: int | None = None) -> Entry:
    """``entry``, no longer live: replaced at ``superseded_by`` or revoked at ``revoked_at``."""
    return build(
        Entry, **{**entry.__dict__, "superseded_by": superseded_by, "revoked_at": revoked_at}
    )

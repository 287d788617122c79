"""The state register: a fold over turns.

Observations are applied in turn order. The last write wins; an equal or
case-only-different value is a reaffirmation and supersedes nothing. A value
of weaker provenance does not overwrite a stronger one (declared > acted >
inferred): the disagreement is kept as a conflict instead, until the
conversation has moved on (``moved_on``): then the value both speakers have
taken up replaces it. A pin is lifted
only by a re-pin; a revoke voids a fact, and inference does not bring it
back until it is declared again. An end (a tool call that cancels the value)
closes that value: the slot clears if it held it, and speech naming the value
again does not bring it back; only the agent acting on it or declaring it does.

A slot the schema scopes by another (a cabin per reservation) is kept per entity
(``entities``): its values for one entity never supersede another's.

The state after turn k depends only on the state after turn k-1 and the
observations of turn k (``RegisterFold.apply_turn``), so a caller that has
folded a prefix can copy the fold and carry on from there.
"""

from __future__ import annotations

from functools import partial

from compiler.facts import PROVENANCE_RANK, Observation, Op, Provenance
from compiler.frozen import build
from compiler.state.closing import Closings, closed
from compiler.state.entities import ENTITY_MARK, by_slot
from compiler.state.entries import (
    MAX_VALUE_CHARS,
    Conflict,
    Entry,
    Refusal,
    Register,
    value_key,
)

MAX_FACTS = 64


class RegisterFold(Closings):
    """The mutable fold behind ``register``; ``copy()`` snapshots it."""

    def __init__(self, immutable: frozenset[str] = frozenset(), scopes=None):
        self.immutable = immutable
        # scoped slot → its entity slot, and entity slot → the slots scoped by it
        self.scopes: dict[str, str] = dict(scopes or {})
        self.scoped: dict[str, tuple[str, ...]] = {}
        for slot, scope in sorted(self.scopes.items()):
            self.scoped[scope] = (*self.scoped.get(scope, ()), slot)
        self.entries: list[Entry] = []
        # the live entry's index per key: the slot, or for a scoped slot ``entity_key``
        self.live: dict[str, int] = {}
        self.revoked: set[str] = set()
        self.conflicts: list[Conflict] = []
        self.refusals: list[Refusal] = []
        # history indices of the entries a start displaced, and the last start (``_start``)
        self.displaced: list[int] = []
        self.started: tuple[int, str, str] | None = None
        self.reaffirmations = 0
        self.applied = 0  # observations applied: unchanged, so is the register
        # per slot, the values a tool call ended (by ``value_key``)
        self.ended: dict[str, set[str]] = {}
        # per slot whose live value is stronger than speech: the other values speech has
        # said since (by ``value_key``), each with its spelling, speakers and turns
        self.moving: dict[str, dict[str, tuple[str, frozenset[str], tuple[int, ...]]]] = {}

    def copy(self) -> RegisterFold:
        return _copy_fold(self)

    def apply_turn(self, observations: list[Observation], speaker: str | None = None) -> None:
        """One turn's observations; ``speaker`` is the role of the turn's author, when known
        (what speech says counts towards ``moved_on`` only then)."""
        if len(observations) > 1:  # (one needs no ordering)
            if self.scopes:  # an entity named in the turn first, then what is said of it
                depth = self._depth
                observations = sorted(observations, key=lambda o: (_OP_ORDER[o.op], depth(o)))
            else:
                observations = sorted(observations, key=lambda o: _OP_ORDER[o.op])
        for observation in observations:
            self.apply(observation, speaker)

    def apply(self, obs: Observation, speaker: str | None = None) -> None:
        self.applied += 1
        closing = _CLOSING.get(obs.op)
        if closing is not None:  # a revoke, an end or a start closes what it names
            closing(self, obs)
            return
        ended = self.ended.get(obs.slot)
        if ended and value_key(obs.value) in ended:
            if obs.provenance is _INFERRED:
                refusal = Refusal(obs.slot, obs.turn, ENDED_VALUE, _ENDED_WHY, obs.value)
                self.refusals.append(refusal)
                return
            ended.discard(value_key(obs.value))  # the agent acts on it again, or declares it
        if self.started is not None and obs.turn == self.started[0]:
            self._reclaim(obs)
        key, entity = (obs.slot, None) if obs.slot not in self.scopes else self._entity(obs.slot)
        current = self._current(key)
        if key in self.revoked and obs.provenance is not _DECLARED:
            # the agent voided the slot: a value said or acted on since does not bring it
            # back, but it is reported, and its turn is kept while the slot stays void
            self.refusals.append(Refusal(obs.slot, obs.turn, REVOKED_SLOT, _REVOKED_WHY, obs.value))
            return
        if current is None:
            self._set(current, obs, key=key, entity=entity)
            return
        same = current.value == obs.value or value_key(current.value) == value_key(obs.value)
        if same:
            self.moving.pop(key, None)  # the held value said again: nobody moved on
        elif self._moved_on(current, obs, speaker, key):
            supports = self.moving.pop(key)[value_key(obs.value)][2]
            self._set(current, obs, supports, key, entity)
            return
        if self._blocked(current, obs, same):
            return
        if same:
            self._reaffirm(current, obs, key)
            return
        self._set(current, obs, key=key, entity=entity)

    def _moved_on(self, current: Entry, obs: Observation, speaker: str | None, key: str) -> bool:
        """Whether speech about another value than the stronger one held shows the
        conversation has moved on to it: since the held value was last said or acted on,
        both the user and the assistant have said this other value, each in a turn of their
        own. Counts ``obs`` towards that; a pinned or immutable slot never moves.

        Example:
            >>> fold = RegisterFold()
            >>> fold.apply(Observation("r", "K1", 1, Provenance.ACTED))
            >>> fold.apply(Observation("r", "K2", 3), "user")
            >>> [e.value for e in fold.result().active]  # one side's mention: K1 holds
            ['K1']
            >>> fold.apply(Observation("r", "K2", 4), "assistant")
            >>> [(e.value, e.supports) for e in fold.result().active]
            [('K2', (3, 4))]
        """
        if speaker not in _SPEAKERS or obs.op is not _ASSERT or obs.provenance is not _INFERRED:
            return False
        if current.pinned or obs.slot in self.immutable:
            return False
        if PROVENANCE_RANK[current.provenance] <= PROVENANCE_RANK[_INFERRED]:
            return False  # speech against speech: the last write wins anyway
        said = self.moving.setdefault(key, {})
        key = value_key(obs.value)
        value, speakers, turns = said.get(key, (obs.value, frozenset(), ()))
        if obs.turn not in turns:
            turns = (*turns, obs.turn)
        said[key] = (value, speakers | {speaker}, turns)
        return speakers | {speaker} == _SPEAKERS

    def _blocked(self, current: Entry, obs: Observation, same: bool) -> bool:
        """``same``: the values are equal but for case."""
        if current.pinned and obs.op is not _PIN and not same:
            self._refuse_or_conflict(current, obs, "pinned_write_blocked", "the slot is pinned")
            return True
        if obs.slot in self.immutable and not same:
            self._refuse_or_conflict(current, obs, "immutable_write_blocked", "immutable slot")
            return True
        if PROVENANCE_RANK[obs.provenance] < PROVENANCE_RANK[current.provenance] and not same:
            self.conflicts.append(Conflict(obs.slot, current, obs.value, obs.turn, obs.provenance))
            return True
        return False

    def _refuse_or_conflict(self, current: Entry, obs: Observation, kind: str, why: str):
        if obs.provenance is _DECLARED:
            self.refusals.append(Refusal(obs.slot, obs.turn, kind, why, obs.value))
        else:
            self.conflicts.append(Conflict(obs.slot, current, obs.value, obs.turn, obs.provenance))

    def _reaffirm(self, current: Entry, obs: Observation, key: str) -> None:
        """An equal value said again: the turn joins its supports. A stronger source (the
        agent acting on what the user said, or declaring it) takes the entry over, its
        turn and spelling with its provenance, so a header line names the turn that gives
        it its provenance; the turn that first said it stays a support."""
        supports = current.supports
        if obs.turn not in supports:
            supports = (*supports, obs.turn)
        stronger = PROVENANCE_RANK[obs.provenance] > PROVENANCE_RANK[current.provenance]
        source = obs if stronger else current  # (its provenance, turn and spelling)
        self.entries[self.live[key]] = _restated(
            current,
            source.provenance,
            supports,
            current.pinned or obs.op is _PIN,
            _unsure_after(current, obs),
            source.value,
            source.turn,
        )
        self.reaffirmations += 1

    def _set(self, current: Entry | None, obs: Observation, supports=None, key=None, entity=None):
        """``obs`` becomes the value held under ``key`` (by default its slot; for a scoped
        slot, its entity's: ``entity``); ``supports``: the turns that said it, when more
        than its own (``_moved_on``)."""
        key = obs.slot if key is None else key
        if current is not None:
            self.entries[self.live[key]] = closed(current, superseded_by=obs.turn)
        self.moving.pop(key, None)
        self.revoked.discard(key)
        self.live[key] = len(self.entries)
        self.entries.append(
            _entry(
                slot=obs.slot,
                value=obs.value,
                turn=obs.turn,
                provenance=obs.provenance,
                supports=supports or (obs.turn,),
                pinned=obs.op is _PIN or obs.slot in self.immutable,
                unsure=obs.op is _UNSURE,
                superseded_by=None,
                revoked_at=None,
                entity=entity,
            )
        )
        if obs.slot in self.scoped:
            self._adopt(obs.slot, obs.value)

    def result(self) -> Register:
        if self.scopes:
            live, others = self._current_and_others()
            others = others[:MAX_FACTS]
        else:
            live, others = sorted((self.entries[i] for i in self.live.values()), key=by_slot), []
        kept, dropped = _cap(live)
        return build(  # Register(...), built as frozen.build builds
            Register,
            history=tuple(self.entries),
            active=tuple(kept),
            dropped_over_limit=tuple(dropped),
            truncated_values=tuple(e.slot for e in kept if len(e.value) > MAX_VALUE_CHARS),
            conflicts=tuple(self.conflicts),
            refusals=tuple(self.refusals),
            reaffirmations=self.reaffirmations,
            revoked=tuple(sorted({key.split(ENTITY_MARK)[0] for key in self.revoked})),
            others=tuple(others),
            scopes=tuple(sorted(self.scopes.items())),
            displaced=tuple(self.displaced),
        )


REVOKED_SLOT = "revoked_slot_not_inferred"  # the kind of refusal for a value said after a revoke
_REVOKED_WHY = "the slot was revoked; only a declaration sets it again"
ENDED_VALUE = "ended_value_not_inferred"  # a value said again after a tool call ended it
_ENDED_WHY = "a tool call ended this value; only acting on it or declaring it sets it again"

# an end applies last: a cancel outranks a mention of the same value in its own turn
# and a start first: what the call that begins an entity sets is the new entity's
_OP_ORDER = {Op.START: -1, Op.REVOKE: 0, Op.UNSURE: 1, Op.PIN: 2, Op.ASSERT: 3, Op.END: 4}
# Members the fold names once or more per observation, under module names: looking a
# member up on its enum costs several times reading a global.
_REVOKE, _PIN, _UNSURE, _END, _START = Op.REVOKE, Op.PIN, Op.UNSURE, Op.END, Op.START
_DECLARED, _INFERRED, _ASSERT = Provenance.DECLARED, Provenance.INFERRED, Op.ASSERT
# who must both have said another value for the conversation to have moved on to it
_SPEAKERS = frozenset({"user", "assistant"})


def _unsure_after(current: Entry, obs: Observation) -> bool:
    """An ``unsure`` restatement flags the value; a declared assertion settles it."""
    if obs.op is _UNSURE:
        return True
    if obs.provenance is _DECLARED:
        return False
    return current.unsure


_entry = partial(build, Entry)  # Entry(**fields), every field given: one per value set or restated
_new = object.__new__


def _restated(
    entry: Entry, provenance: Provenance, supports: tuple, pinned, unsure, value: str, turn: int
) -> Entry:
    """``entry`` restated, live: these fields new, its slot its own. Built
    as ``frozen.build`` builds, from a copy of its fields rather than from keywords: one is
    built per value restated, which is most observations of a long history.

    Example:
        >>> first = _entry(slot="a", value="x", turn=1, provenance=Provenance.INFERRED,
        ...     supports=(1,), pinned=False, unsure=False, superseded_by=None, revoked_at=None)
        >>> _restated(first, Provenance.ACTED, (1, 3), True, False, "X", 3) == Entry(
        ...     "a", "X", 3, Provenance.ACTED, (1, 3), pinned=True)
        True
    """
    restated = _new(Entry)
    fields = restated.__dict__
    fields.update(entry.__dict__)
    fields["provenance"] = provenance
    fields["supports"] = supports
    fields["pinned"] = pinned
    fields["unsure"] = unsure
    fields["value"] = value
    fields["turn"] = turn
    fields["superseded_by"] = fields["revoked_at"] = None
    return restated


def _copy_fold(fold: RegisterFold) -> RegisterFold:
    twin = RegisterFold(fold.immutable, fold.scopes)
    twin.entries = list(fold.entries)
    twin.live = dict(fold.live)
    twin.revoked = set(fold.revoked)
    twin.conflicts = list(fold.conflicts)
    twin.refusals = list(fold.refusals)
    twin.displaced, twin.started = list(fold.displaced), fold.started
    twin.reaffirmations, twin.applied = fold.reaffirmations, fold.applied
    twin.ended = {slot: set(values) for slot, values in fold.ended.items()}
    twin.moving = {slot: dict(said) for slot, said in fold.moving.items()}
    return twin


def _cap(live: list[Entry]) -> tuple[list[Entry], list[str]]:
    """Keep at most 64 facts: pinned and declared first, then the most recent."""
    if len(live) <= MAX_FACTS:
        return live, []
    ranked = sorted(
        live,
        key=lambda e: (-e.pinned, -PROVENANCE_RANK[e.provenance], -e.turn, e.slot),
    )
    kept = sorted(ranked[:MAX_FACTS], key=lambda e: e.slot)
    dropped = sorted(e.slot for e in ranked[MAX_FACTS:])
    return kept, dropped


def register(
    observations: tuple[Observation, ...], *, immutable=frozenset(), speakers=None, scopes=None
) -> Register:
    """Fold observations (in turn order) into the state register. ``speakers`` maps a
    turn to the role that spoke it, where known (``RegisterFold.apply_turn``).

    Example:
        >>> from compiler.facts import Observation
        >>> reg = register((Observation("cabin", "economy", 0),
        ...                 Observation("cabin", "Economy", 2),
        ...                 Observation("cabin", "business", 4)))
        >>> [(e.value, e.turn, e.supports, e.superseded_by) for e in reg.history]
        [('economy', 0, (0, 2), 4), ('business', 4, (4,), None)]
    """
    fold = RegisterFold(frozenset(immutable), scopes)
    batch: list[Observation] = []
    said = (speakers or {}).get
    for obs in observations:
        if batch and obs.turn != batch[0].turn:
            fold.apply_turn(batch, said(batch[0].turn))
            batch = []
        batch.append(obs)
    if batch:
        fold.apply_turn(batch, said(batch[0].turn))
    return fold.result()


# what each closing op does (``closing.Closings``, ``entities.EntityScopes``)
_CLOSING = {_REVOKE: RegisterFold._revoke, _END: RegisterFold._end, _START: RegisterFold._start}

"""Shortcut tests for the register fold: an ended entry and a restated value are built
as the plain dataclass construction builds them."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler.facts import PROVENANCE_RANK, Observation, Op, Provenance
from compiler.state.closing import closed
from compiler.state.register import Entry, RegisterFold, _entry, _unsure_after

pytestmark = pytest.mark.shortcut


def test_an_ended_entry_is_the_entry_with_its_end_set():
    entry = Entry("cabin", "economy", 2, Provenance.ACTED, (2, 5), None, None, True, True)
    assert closed(entry, superseded_by=7) == Entry(
        "cabin", "economy", 2, Provenance.ACTED, (2, 5), 7, None, True, True
    )
    assert closed(entry, revoked_at=9) == replace(entry, revoked_at=9)


class _FoldAsItWas(RegisterFold):
    """The register fold with ``_reaffirm`` as it was: every field given by keyword."""

    def _reaffirm(self, current, obs, key):
        index = self.live[key]
        stronger = PROVENANCE_RANK[obs.provenance] > PROVENANCE_RANK[current.provenance]
        supports = (
            current.supports if obs.turn in current.supports else (*current.supports, obs.turn)
        )
        self.entries[index] = _entry(
            slot=current.slot,
            value=obs.value if stronger else current.value,
            turn=obs.turn if stronger else current.turn,
            provenance=obs.provenance if stronger else current.provenance,
            supports=supports,
            pinned=current.pinned or obs.op is Op.PIN,
            unsure=_unsure_after(current, obs),
            superseded_by=None,
            revoked_at=None,
            entity=current.entity,
        )
        self.reaffirmations += 1


OBSERVATIONS = st.builds(
    Observation,
    slot=st.sampled_from(["a", "b"]),
    value=st.sampled_from(["x", "X", "y", "May 13, 2024", "2024-05-13"]),
    turn=st.integers(0, 5),
    provenance=st.sampled_from(list(Provenance)),
    op=st.sampled_from(list(Op)),
)


@settings(max_examples=500, deadline=None)
@given(st.lists(st.lists(OBSERVATIONS, max_size=3), max_size=8), st.booleans())
def test_a_value_restated_from_its_entry_folds_as_one_built_by_keyword(turns, immutable):
    fold = RegisterFold(frozenset({"a"} if immutable else ()))
    plain = _FoldAsItWas(fold.immutable)
    for turn, observations in enumerate(turns):
        batch = [replace(o, turn=turn) for o in observations]
        fold.apply_turn(batch)
        plain.apply_turn(batch)
    assert fold.result() == plain.result()
    assert [e.__dict__ for e in fold.entries] == [e.__dict__ for e in plain.entries]
    assert [list(e.__dict__) for e in fold.entries] == [list(e.__dict__) for e in plain.entries]

"""The per-message shortcuts (speed work, session 8, helper "read") give what the plain
computation gives."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from compiler import list_schemas, load_schema
from compiler.compact.repeats import _status_start, status_values
from compiler.facts import PROVENANCE_RANK, Observation, Op, Provenance
from compiler.state import extract
from compiler.state.extract import _CORRECTION_NEEDS, _has_correction, extract_turn
from compiler.state.prefilter import admits, fold
from compiler.state.register import RegisterFold, _entry, _unsure_after

SCHEMAS = [load_schema(name) for name in list_schemas()]

STATUS_PIECES = st.sampled_from(
    [
        "(Open file: /r/a.py)", "(Current directory: /r)", "bash-$", "bash-$ ", "\n", "\r\n",
        " ", "\t", "\u00a0", "\u2028", "ok", ")", "$", "(Open file: n/a)\r", "x)", "",
    ]
)  # fmt: skip


def _status_values_plainly(text: str) -> tuple[str | None, str | None]:
    """``status_values`` as it was: the status block looked for in every text."""
    found: dict[str, str] = {}
    _status_start(text, found)
    return found.get("Open file"), found.get("Current directory")


@settings(max_examples=1000, deadline=None)
@given(st.lists(STATUS_PIECES, max_size=8).map("".join))
def test_status_values_agree_with_reading_every_text_for_a_status_block(text):
    assert status_values(text) == _status_values_plainly(text)


READ_PIECES = st.sampled_from(
    [
        "Ship it to 12 Oak Street", "45 Elm Road", "sorry, my mistake: ", "my mistake ",
        "Correction: ", "scratch that, ", "I meant ", "make that ", "change it to ",
        "pay with PayPal", "my credit card", "economy", "business", "book in ", "HAT001",
        "open src/app.py", "not ", ". ", "\n", " ", "Make ", "meant", "sorry",
    ]
)  # fmt: skip


def _corrects_by_literals(folded: str) -> bool:
    """The turn's correction check as it was: the cue's literals, the cue looked for after
    each slot's match."""
    return admits(_CORRECTION_NEEDS, folded)


@settings(max_examples=1000, deadline=None)
@given(st.lists(READ_PIECES, max_size=10).map("".join))
def test_a_turn_checked_once_for_a_correction_reads_what_a_check_per_match_reads(text):
    expected = []
    saved = extract._has_correction
    extract._has_correction = _corrects_by_literals
    try:
        for schema in SCHEMAS:
            expected.append(extract_turn(text, 0, schema))
    finally:
        extract._has_correction = saved
    assert [extract_turn(text, 0, schema) for schema in SCHEMAS] == expected


def test_a_turn_without_a_cue_has_none_after_any_match():
    folded = fold("Ship it to 12 Oak Street. Make it quick, it meant well.")
    assert admits(_CORRECTION_NEEDS, folded) and not _has_correction(folded)


class _FoldAsItWas(RegisterFold):
    """The register fold with ``_reaffirm`` as it was: every field given by keyword."""

    def _reaffirm(self, current, obs):
        index = self.live[obs.slot]
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

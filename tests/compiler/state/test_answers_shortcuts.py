"""Shortcut tests for a call's answer: a turn none of whose calls sets or ends anything is
folded at once (``answers.take``), with no ``Held`` built, into the register that holding
and applying it builds."""

from __future__ import annotations

import pytest

from compiler.facts import Observation, Op, Provenance
from compiler.read import Message
from compiler.state import RegisterFold
from compiler.state.answers import Held, take

pytestmark = pytest.mark.shortcut


def test_a_turn_whose_calls_set_nothing_is_folded_at_once_as_its_held_turn_would_be():
    message = Message("assistant", "Your reservation ABC123 is in business class now.")
    said = [Observation("active_reservation", "ABC123", 3)]
    acted = ((None, [Observation("booking", "", 3, Provenance.ACTED, op=Op.START)]),)
    declared = [Observation("cabin_class", "business", 3, Provenance.DECLARED)]
    taken, held = RegisterFold(), RegisterFold()
    assert take(taken, message, said, acted, declared) is None
    Held.of(message, said, acted, declared).apply(held)
    assert taken.result() == held.result()

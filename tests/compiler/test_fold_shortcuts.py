"""Shortcut tests for the fold: a cache_friendly call point reuses the last point's state
lines while the register applied no observation since (``RegisterFold.applied``), and
those are the lines the register would give there."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compiler import load_schema
from compiler.fold import Fold
from compiler.layout.emit import keyed_state_lines
from compiler.read import formats_many, read_message_list
from compiler.types import Options

pytestmark = pytest.mark.shortcut

SITE = Path(__file__).resolve().parents[1] / "fixtures" / "site"


def _histories():
    airline = json.loads((SITE / "airline-task3-trial0-62-messages.json").read_text())
    yield "travel", read_message_list(airline).messages
    text = (SITE / "retail-gift-card-visa.txt").read_text(encoding="utf-8")
    ((_, parsed),) = formats_many(text)
    yield "logistics", parsed.messages


@pytest.mark.parametrize("schema, messages", list(_histories()), ids=["airline", "retail"])
def test_each_call_points_lines_are_the_registers_lines_at_that_point(schema, messages):
    fold = Fold(Options.build(schema=load_schema(schema), mode="cache_friendly"))
    reused = 0
    for message in messages:
        expected = keyed_state_lines(fold.fold.result(), fold.number)
        unchanged = bool(fold.points) and fold.fold.applied == fold.lines_applied
        before = len(fold.points)
        fold.advance(message)
        if len(fold.points) > before:  # this message was a call point
            assert fold.points[-1][1] == expected
            reused += unchanged
    assert reused, "the history has call points with nothing folded between them"

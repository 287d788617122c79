"""The prefilter's speed changes (helper c) keep it sound: it may only skip text that a
pattern could never match, and a slot's readers skip only what the scan would skip."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from compiler import list_schemas, load_schema
from compiler.state.prefilter import TEXT_START, admits, checking_order, fold, required_literals
from compiler.state.schema import _implied


def test_a_clause_every_alternative_needs_is_needed():
    pattern = re.compile(r"\bon\s+(?:(?:May|June)\s+\d{1,2}|\d{4}-\d{2}-\d{2})", re.I)
    clauses = required_literals(pattern)
    assert frozenset("0123456789") in clauses
    assert frozenset({"may", "june", "-"}) in clauses


def test_clauses_that_reduce_to_one_are_checked_once():
    assert checking_order((frozenset({"test"}), frozenset({"test", "tests"}))) == (("test",),)


DATES = st.sampled_from(
    [
        "on ", "for ", "from ", "to ", "date", ": ", "is ", "May", "June", "July", "January",
        " 5", "12", "2024-05-20", "2024", "-", "05", "st", ", ", "flight", "return", "depart",
        "ſ", "İ", "K", " ", "\n", "x", "**", "born ", "segment", "s", "test", "failed ",
        "failing ", "module ", "file ", "tests ", "a.py", "/", "`", ".",
    ]
)  # fmt: skip
PATTERNS = [p for name in list_schemas() for slot in load_schema(name).slots for p in slot.patterns]


@settings(max_examples=1000, deadline=None)
@given(st.lists(DATES, max_size=25).map("".join))
def test_a_shipped_pattern_never_matches_text_its_clauses_turn_away(text):
    folded = fold(text)
    for pattern in PATTERNS:
        if pattern.search(text):
            assert admits(checking_order(required_literals(pattern)), folded), pattern.pattern


def test_a_reader_asks_for_every_clause_but_the_gate_and_those_its_leads_hold():
    for name in list_schemas():
        for slot in load_schema(name).slots:
            gate = set(slot.gate)
            for (_pattern, need, lead, _after), full in zip(slot.readers, slot.needs, strict=True):
                for clause in full:
                    if clause in gate or _implied(clause, lead):
                        continue
                    assert checking_order((clause,))[0] in need


def test_only_leading_literals_that_each_hold_the_clause_imply_it():
    assert _implied(frozenset({"to", "in"}), frozenset({"to", "into"}))
    assert not _implied(frozenset({"to"}), frozenset({"to", "in"}))
    assert not _implied(frozenset({"in"}), frozenset({TEXT_START, "in"}))

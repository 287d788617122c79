"""Shortcut tests for the literal prefilter: it may only skip text a pattern could never
match, and a slot's readers skip only what a full scan would skip."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler import list_schemas, load_schema
from compiler.state.prefilter import (
    _FOLD,
    admits,
    checking_order,
    fold,
    required_literals,
    shared_clauses,
)
from compiler.state.schema import _implied
from compiler.state.starts import (
    TEXT_START,
    anchored_finditer,
    candidate_starts,
    leading_literals,
    starts_of,
    word_bounded,
    word_char,
)

pytestmark = pytest.mark.shortcut


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
            readers = zip(slot.readers, slot.needs, strict=True)
            for (_pattern, need, lead, _after, _guard), full in readers:
                for clause in full:
                    if clause in gate or _implied(clause, lead):
                        continue
                    assert checking_order((clause,))[0] in need


def test_only_leading_literals_that_each_hold_the_clause_imply_it():
    assert _implied(frozenset({"to", "in"}), frozenset({"to", "into"}))
    assert not _implied(frozenset({"to"}), frozenset({"to", "in"}))
    assert not _implied(frozenset({"in"}), frozenset({TEXT_START, "in"}))


SCHEMAS = [load_schema(name) for name in list_schemas()]


WORDS = st.sampled_from(
    [
        "economy", "Business", "reservation", "ID", "is", "it's", "flight", "HAT123", "from",
        "JFK", "to", "SEA", "open", "EDIT", "created", "`src/app.py`", "test_x.py", "the",
        "failing test", "12", "Street", "Ave", "my", "credit", "card", "PayPal", "Pay",
        "with", "user", "mia_li_3668", "May 5", "2024-05-20", "not", "date:", "I am", " ",
        "\n", ".", ",", ":", "**", "-", "İ", "ſ", "K", "é", "2", "x", "_", "```\n", "<command>",
        "in", "book", "new", "return",
    ]
)  # fmt: skip


TEXTS = st.lists(WORDS, max_size=40).map("".join)


def test_folding_replaces_what_the_table_translates():
    for code in range(0x110000):
        if not 0xD800 <= code < 0xE000:
            char = chr(code)
            assert fold(char) == char.translate(_FOLD).lower(), code


OPENINGS = [
    r"(?:new\s+|old\s+)?date\s*:\s*(\d+)",
    r"(?:\A|\n)\s*-\s*(\w+)",
    r"\b(?:in|into|to)\s+(\w+)",
    r"(?:x)?(?:y)?z(\d)",
    r"\A(\w+)",
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["new ", "date: 4", "\n- a", "into b", "xz1", "yz2", " "]))
       .map("".join))  # fmt: skip
def test_an_optional_or_text_start_opening_finds_what_a_full_scan_finds(text):
    for source in OPENINGS:
        pattern = re.compile(source, re.IGNORECASE)
        lead = leading_literals(pattern)
        after = word_char if word_bounded(pattern, lead) else None
        full = [m.span() for m in pattern.finditer(text)]
        assert [m.span() for m in anchored_finditer(pattern, text, fold(text), lead, after)] == full


def test_a_slot_gate_holds_for_every_pattern_of_the_slot():
    for schema in SCHEMAS:
        for slot in schema.slots:
            gate = shared_clauses(slot.needs)
            for needs in slot.needs:
                for clause in gate:
                    # each gate clause is one of the pattern's own, or names its best literals
                    assert clause in needs or any(c <= clause for c in needs)


def _starts_at_every_position(folded, literals, text, before, after) -> list[int]:
    """Every position tried against every literal: one starting before ``before``, not
    just after a character ``after`` holds for; ``TEXT_START`` at 0 whatever ``before``."""
    starts = []
    for at in range(len(folded) + 1):
        for literal in literals:
            if literal == TEXT_START:
                found = at == 0
            else:
                found = (before is None or at < before) and folded.startswith(literal, at)
                found = found and (after is None or at == 0 or not after(text[at - 1]))
            if found:
                starts.append(at)
                break
    return starts


@settings(max_examples=300, deadline=None)
@given(TEXTS, st.sampled_from([None, 0, 5, 30]))
def test_candidate_starts_are_every_position_a_literal_starts_at(text, before):
    folded = fold(text)
    for literals in ({"to"}, {"to", "in", "is"}, {"", ":", "\n"}, {"it's", "i"}, {"economy"}):
        for after in (None, word_char):
            got = candidate_starts(folded, frozenset(literals), text, before, after)
            assert got == _starts_at_every_position(folded, literals, text, before, after)


@settings(max_examples=300, deadline=None)
@given(TEXTS)
def test_every_match_of_a_schema_pattern_starts_with_one_of_its_leading_literals(text):
    folded = fold(text)
    for schema in SCHEMAS:
        for slot in schema.slots:
            for pattern, lead in zip(slot.patterns, slot.leads, strict=True):
                if lead is None:
                    continue
                for match in pattern.finditer(text):
                    start = match.start()
                    assert any(
                        (literal == TEXT_START and start == 0)
                        or (literal and folded.startswith(literal, start))
                        for literal in lead
                    ), (pattern.pattern, text, start)


def test_a_literal_run_goes_on_with_what_follows_it():
    pattern = re.compile(r"\b(?:is|it's|it is)\s+an?\s+(\w+)", re.IGNORECASE)
    assert leading_literals(pattern) == frozenset({"is", "it's", "it is"})
    assert leading_literals(re.compile(r"ab(?:\w+)")) == frozenset({"ab"})
    assert leading_literals(re.compile(r"ab\Z")) == frozenset({"ab"})


@settings(max_examples=300, deadline=None)
@given(TEXTS)
def test_clauses_in_checking_order_admit_what_the_clauses_admit(text):
    folded = fold(text)
    clause_sets = [slot.gate for schema in SCHEMAS for slot in schema.slots]
    clause_sets += [need for schema in SCHEMAS for slot in schema.slots for need in slot.needs]
    clause_sets.append((frozenset({"street", "st", "ave", "avenue"}), frozenset("0123456789")))
    for clauses in clause_sets:
        assert admits(checking_order(clauses), folded) == admits(clauses, folded)


READ_PIECES = st.sampled_from(
    ["in", "to", "book", "bin", "_in", "é", "İn", "ſ", " ", "\n", "into", "x", "Book", "2to"]
)


READ_TEXTS = st.lists(READ_PIECES, max_size=30).map("".join)


LITERAL_SETS = st.sampled_from(
    [
        frozenset({"in"}),
        frozenset({"in", "to", "book"}),
        frozenset({TEXT_START}),
        frozenset({TEXT_START, "in", "\n"}),
        frozenset({"to"}),
    ]
)


def _not_x(char: str) -> bool:
    return char == "x"


@settings(max_examples=1000, deadline=None)
@given(READ_TEXTS, LITERAL_SETS, st.one_of(st.none(), st.integers(0, 80)))
def test_starts_of_is_candidate_starts_before_the_bound(text, literals, before):
    folded = fold(text)
    for after in (None, word_char, _not_x):
        every = candidate_starts(folded, literals, text, before, after)
        expected = [at for at in every if before is None or at < before]
        assert starts_of(folded, literals, text, before, after) == expected

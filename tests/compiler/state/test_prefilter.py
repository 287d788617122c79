"""The literal prefilter may only skip text a pattern could never match."""

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from compiler import list_schemas, load_schema
from compiler.state.prefilter import (
    _FOLD,
    admits,
    fold,
    required_literals,
)
from compiler.state.starts import (
    anchored_finditer,
    leading_literals,
)

PATTERNS = [p for name in list_schemas() for slot in load_schema(name).slots for p in slot.patterns]
WORDS = st.sampled_from(
    [
        "economy",
        "Business",
        "reservation",
        "ID",
        "is",
        "flight",
        "HAT123",
        "from",
        "JFK",
        "to",
        "SEA",
        "open",
        "EDIT",
        "src/app.py",
        "test_x.py",
        "Street",
        "12",
        "my",
        "credit",
        "card",
        "Pay",
        "with",
        "user",
        "mia_li_3668",
        "May 5",
        "2024-05-20",
        "İ",
        "ſ",
        "K",
        " ",
        ", ",
        ".",
        "\n",
        "`",
        "the",
        "on",
        "cabin",
        "class",
        "Avenue",
        "Suite",
        "paypal",
    ]
)


def test_the_fold_table_holds_every_non_ascii_match_for_an_ascii_letter():
    ascii_alnum = re.compile(r"[a-z0-9]", re.IGNORECASE)
    found = {i for i in range(0x80, 0x110000) if ascii_alnum.fullmatch(chr(i))}
    assert found == set(_FOLD)


def test_it_derives_the_literals_a_pattern_needs():
    pattern = re.compile(r"\b(?:fly|book)\s+(?:in\s+)?(basic economy|economy|business)", re.I)
    assert required_literals(pattern) == (
        frozenset({"basic economy", "economy", "business"}),
        frozenset({"fly", "book"}),
    )


def test_it_asks_for_nothing_where_it_cannot_be_sure():
    assert required_literals(re.compile(r"(?:foo)?(\w+)")) == ()
    assert required_literals(re.compile(r"([a-z]+)@")) == (frozenset({"@"}),)


@settings(max_examples=400, deadline=None)
@given(st.lists(WORDS, max_size=30).map("".join))
def test_a_shipped_pattern_never_matches_text_its_prefilter_skips(text):
    folded = fold(text)
    for pattern in PATTERNS:
        if pattern.search(text):
            assert admits(required_literals(pattern), folded), pattern.pattern


def test_folding_keeps_every_character_in_place():
    assert all(len(fold(chr(i))) == 1 for i in range(0x110000) if not 0xD800 <= i < 0xE000)


@settings(max_examples=400, deadline=None)
@given(st.lists(WORDS, max_size=30).map("".join))
def test_anchored_search_finds_exactly_what_a_full_scan_finds(text):
    folded = fold(text)
    for pattern in PATTERNS:
        full = [m.span() for m in pattern.finditer(text)]
        anchored = [
            m.span() for m in anchored_finditer(pattern, text, folded, leading_literals(pattern))
        ]
        assert anchored == full, pattern.pattern

"""The per-message fold's shortcuts give what the plain computations they replace give.

Each test holds a shortcut against the straightforward version, written out here as it
was before the shortcut: a regex over every position, a count over the whole text.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from compiler.protocol.declare import _MARK, marked
from compiler.state.classify import (
    _MENU_MARKERS,
    _NUMBERED_LINE,
    _mostly_numbered,
    _two_markers,
)
from compiler.state.prefilter import (
    TEXT_START,
    candidate_starts,
    fold,
    starts_of,
    word_char,
)

MENU_PIECES = st.sampled_from(
    [
        "Option 1:", "option 22 :", "**Flight 3**", "**Flight 4:**", "Flight 5 :", "FLIGHT 6:",
        "Available Seats:", "available  seats :", "Option", "Flight", "1.", "- ", "* ", "**",
        "\n", "\n\n", " ", "x", "_", "é", "K", "ſ", "İ", "ı", "\t", "\r\n", "$12", "(", "a", "o",
    ]
)  # fmt: skip
MENU_TEXTS = st.lists(MENU_PIECES, max_size=30).map("".join)


@settings(max_examples=1000, deadline=None)
@given(MENU_TEXTS)
def test_two_markers_is_findall_finding_two(text):
    assert _two_markers(text) == (len(_MENU_MARKERS.findall(text)) >= 2)


def _mostly_numbered_by_split(stripped: str) -> bool:
    """The listing test as it was: count every newline, split, match each line."""
    if stripped.count("\n") < 7:
        return False
    lines = stripped.split("\n", 20)[:20]
    return sum(1 for line in lines if _NUMBERED_LINE.match(line)) * 2 >= len(lines)


LISTING_LINES = st.sampled_from(
    ["1:x", " 12| y", "3:", "text", "", "  ", "4 :", "٣:a", "5|", "x1:", "\t7:z", "8"]
)
LISTINGS = st.lists(LISTING_LINES, max_size=45).map("\n".join)


@settings(max_examples=1000, deadline=None)
@given(LISTINGS)
def test_mostly_numbered_reads_the_first_twenty_lines_as_a_split_does(text):
    assert _mostly_numbered(text) == _mostly_numbered_by_split(text)


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


def test_only_ascii_letters_lower_case_to_a_letter_of_the_mark():
    letters = set(_MARK)
    for code in range(0x110000):
        char = chr(code)
        if not 0xD800 <= code < 0xE000 and letters & set(char.lower()):
            assert char.lower() in letters and char.isascii(), code


MARK_PIECES = st.sampled_from(
    ["contextgc", "CONTEXTGC", "ContextGC", "-", "state", "STATE", "State", "ſtate", "conteXtgc",
     "K", "İ", "ı", "<", ">", " ", "\n", "-state", "gc-", "x", "s"]
)  # fmt: skip


@settings(max_examples=1000, deadline=None)
@given(st.lists(MARK_PIECES, max_size=12).map("".join))
def test_marked_is_the_mark_in_the_lowered_text(text):
    assert marked(text) == (_MARK in text.lower())

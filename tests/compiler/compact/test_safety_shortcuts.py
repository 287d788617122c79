"""Shortcut tests for the safety scan: it tries a term only where a word a term can begin
with stands whole, and an SSN, card, address or telephone number only where its shape is,
and must find exactly what a plain scan of the whole text finds, on any text."""

from __future__ import annotations

import re
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler.compact.safety import (
    _LETTERS,
    _SAFETY,
    _TERM_WORDS,
    _WORDS,
    _letter,
    _term_starts,
    has_safety_signal,
    safety_spans,
)
from compiler.compact.safety_numbers import (
    EMAIL,
    ID_NUMBER,
    OTHER_DIGIT,
    SHAPE,
    as_bytes,
    cards,
    emails,
    id_shaped,
    local_char,
    may_hold_card,
)
from compiler.state.prefilter import (
    ascii_letters,
    fold,
)
from compiler.state.starts import (
    word_char,
)
from tests.safety_scan import full_scan

pytestmark = pytest.mark.shortcut


def _spellings() -> list[str]:
    """Every spelling of every term: one-word terms, and phrases with their words apart."""
    words = [word.decode() for word in sorted(_WORDS.words)]
    phrases = [pattern.pattern for _, pattern, _ in _WORDS.phrases]  # b" date +of +birth "
    return words + [p.decode().strip().replace(" +", " ") for p in phrases]


SPELLINGS = _spellings()
# what stands next to a term: letters that extend it (ASCII or not), the four non-ASCII
# characters IGNORECASE matches with an ASCII letter, separators a phrase allows (Unicode
# spaces too), digits (ASCII or not), JSON escapes, and the shapes of the other signals
AROUND = [
    *("x", "s", "S", "é", "ß", "Σ", "İ", "ı", "ſ", "\u212a", "ﬀ", "_", "-", " ", "  ", "\t"),
    *("\n", "\xa0", "\u2003", "\\n", "\\t", "\\", ".", ",", ":", '"', "'", "(", ")", "@", "+"),
    *("0", "7", "٣", "12", "555", "4111 1111 1111 1111", "123-45-6789", "(555) 123-4567"),
    *("a@b.co", "+1 555.123.4567", "2024-05-12", "v1.555.1234", "555-123-4567", "555.123-4567"),
    *("555-123.4567", "(555)123-4567", "+1-555-123-4567", "ORD-555-123-4567", "1.555.123.4567"),
    *("000-00-0000", "2024-05-12T10:00:00", "12:30:00", "4111-1111-1111-1111"),
]


def _respelled(spelling: str, case: int) -> str:
    """A spelling in one of several casings, and with a letter IGNORECASE also reads as
    its ASCII letter where one can stand."""
    if case == 1:
        spelling = spelling.upper()
    elif case == 2:
        spelling = spelling.title()
    elif case == 3:
        spelling = spelling.replace("s", "ſ").replace("k", "\u212a").replace("i", "ı")
    return spelling


TERMS = st.builds(_respelled, st.sampled_from(SPELLINGS), st.integers(0, 3))
PIECES = st.one_of(TERMS, st.sampled_from(AROUND), st.text(max_size=2))
TEXTS = st.lists(PIECES, max_size=14).map("".join)


@settings(max_examples=1000, deadline=None)
@given(TEXTS)
def test_it_finds_what_a_full_scan_of_the_text_finds(text):
    assert sorted(safety_spans(text)) == full_scan(text)
    assert has_safety_signal(text) == bool(full_scan(text))


@settings(max_examples=1000, deadline=None)
@given(TEXTS)
def test_every_term_match_starts_where_a_term_word_stands_whole(text):
    starts = set(_term_starts(as_bytes(text).translate(_LETTERS)))
    for match in _SAFETY.finditer(text):
        assert match.start() in starts


@settings(max_examples=500, deadline=None)
@given(st.text(max_size=30))
def test_any_text_is_read_one_byte_per_character_as_fold_reads_it(text):
    assert as_bytes(text).lower() == fold(text).encode("ascii", "replace")


def test_a_term_is_looked_for_by_every_word_a_spelling_starts_with():
    firsts = {spelling.split()[0].lower().encode() for spelling in SPELLINGS}
    assert firsts == set(_TERM_WORDS)


def test_the_text_is_written_with_the_letters_ignorecase_reads_as_ascii():
    assert ascii_letters("ſoy, \u212aale, İ, ı, é") == "soy, kale, i, i, é"
    assert as_bytes("ſoy é") == b"soy ?"


ID_PIECES = st.sampled_from(["0", "5", "٣", "-", ".", " ", "(", ")", "+1", "x", "_", "\n"])


@settings(max_examples=1000, deadline=None)
@given(st.lists(ID_PIECES, max_size=24).map("".join))
def test_no_ssn_or_telephone_number_is_missed_by_its_shape(text):
    if ID_NUMBER.search(text) is not None and text.isascii():
        assert id_shaped(text.encode().translate(SHAPE))
    assert sorted(safety_spans(text)) == full_scan(text)


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=0x3FF), max_size=30))
def test_a_latin_1_text_is_folded_as_its_characters_are_lowered(text):
    # Latin-1 text is lowered through a byte table, any other through str.lower
    assert fold(text) == ascii_letters(text).lower()


def test_the_character_tests_are_the_regex_classes_they_stand_for():
    word, letter, local = re.compile(r"\w"), re.compile(r"[^\W\d_]"), re.compile(r"[\w.+-]")
    for code in range(0x110000):
        char = chr(code)
        assert word_char(char) == bool(word.match(char)), code
        assert _letter(char) == bool(letter.match(char)), code
        assert local_char(char) == bool(local.match(char)), code


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet="ab.@-+_ é1\n", max_size=30))
def test_addresses_are_found_as_a_full_scan_finds_them(text):
    assert [m.span() for m in emails(text)] == [m.span() for m in EMAIL.finditer(text)]


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet="0123456789 -x\n٣", max_size=40))
def test_no_card_number_is_missed_by_the_digit_check(text):
    if next(cards(text), None) is not None:
        assert may_hold_card(text)


LINE_WORDS = ["use by", "date of", "birth", "a@b.co", "x", "PEANUT", "4111 1111 1111 1111", "_"]


LINES = st.lists(st.sampled_from(LINE_WORDS), max_size=6).map(" ".join)


@settings(max_examples=300, deadline=None)
@given(st.lists(LINES, max_size=6))
def test_a_line_with_a_signal_gives_its_text_one(lines):
    if any(has_safety_signal(line) for line in lines):
        assert has_safety_signal("\n".join(lines))


def test_the_other_digit_check_is_a_decimal_digit_outside_ascii():
    chars = "".join(map(chr, range(128, sys.maxunicode + 1)))
    expected = {char for char in chars if char.isdecimal()}
    assert set(OTHER_DIGIT.findall(chars)) == expected


PHRASE_PIECES = [
    *("date", "of", "birth", "Date", "OF", "dates", "do", "not", "Do", "dont", "use", "by"),
    *("best", "before", "social", "security", "_", "-", " ", "  ", "\n", ":", '"', "x", "1"),
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(PHRASE_PIECES), max_size=16).map("".join))
def test_a_phrase_is_read_from_the_words_as_a_full_scan_reads_it(text):
    phrases = [pattern for _, _, pattern in _WORDS.phrases]
    full = any(re.search(rf"(?<![^\W\d_]){p.pattern}(?![^\W\d_])", text, re.I) for p in phrases)
    if full:  # a one-word term, an address or a card number only adds to a signal
        assert has_safety_signal(text)


def test_the_word_index_the_ascii_scan_reads_terms_by_is_built():
    # without the word index every check falls back to scanning at each leading literal
    assert _WORDS is not None

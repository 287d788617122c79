"""Shortcut tests for the classifier: each of its quick checks gives what the plain
regular expression or split it stands in for gives."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler.state.classify import (
    _FOOTER,
    _MENU_MARKERS,
    _NUMBERED_LINE,
    _SPLIT_CHARS,
    _START_CHARS,
    _START_MARKERS,
    _TAIL_CHARS,
    _ends_in_footer,
    _mostly_numbered,
    _starts_like_output,
    _two_markers,
)

pytestmark = pytest.mark.shortcut

try:  # the parser behind ``re`` (named ``sre_parse`` before 3.11)
    from re import _constants as _c
    from re import _parser as _parser
except ImportError:  # pragma: no cover - older layouts
    import sre_constants as _c
    import sre_parse as _parser


def _first_chars(items) -> set[str]:
    """The characters a match of the parsed items can open with (a literal, a group, an
    alternation or a repeat of at least one); anything else fails the test."""
    op, arg = items[0]
    if op is _c.LITERAL:
        return {chr(arg)}
    if op is _c.SUBPATTERN:
        return _first_chars(list(arg[-1]))
    if op is _c.BRANCH:
        return set().union(*(_first_chars(list(branch)) for branch in arg[1]))
    if op is _c.MAX_REPEAT and arg[0] >= 1:
        return _first_chars(list(arg[2]))
    raise AssertionError(f"cannot tell what {op} opens with")


def test_start_chars_are_what_a_marker_opens_with():
    items = list(_parser.parse(_START_MARKERS.pattern, _START_MARKERS.flags))
    assert items[0][0] is _c.MAX_REPEAT and items[0][1][0] == 0  # the leading ``\s*``
    assert _first_chars(items[1:]) == set(_START_CHARS)


PIECES = st.sampled_from(
    [
        "[File: a.py (3 lines total)]", "Found 2 matches for", "No matches found for",
        "More than 9 files matched for", "Your proposed edit has introduced", "Exit code: 1",
        "TOOL_OUTPUT", "== test session starts ==", "PASSED a/b.py::t", "FAILED x::y",
        "ERROR a::b", "diff --git a/x", "Usage: tool", "Traceback (most recent call last):",
        " ", "\n", "\t", "\u00a0", "\u2028", "x", "[1]", "{}", '{"a": 1}', "Found it",
    ]
)  # fmt: skip


def _starts_like_output_plainly(stripped: str) -> bool:
    """The check as it was: the whole alternation tried on every text."""
    from compiler.state.classify import _is_json

    stripped = stripped.lstrip()
    if stripped[:1] in ("[", "{") and _is_json(stripped):
        return True
    return bool(_START_MARKERS.match(stripped))


@settings(max_examples=1000, deadline=None)
@given(st.lists(PIECES, max_size=6).map("".join))
def test_starts_like_output_agrees_with_the_whole_alternation(text):
    assert _starts_like_output(text) == _starts_like_output_plainly(text)


def _mostly_numbered_by_split(stripped: str) -> bool:
    """The listing test as it was: count every newline, split, match each line."""
    if stripped.count("\n") < 7:
        return False
    lines = stripped.split("\n", 20)[:20]
    return sum(1 for line in lines if _NUMBERED_LINE.match(line)) * 2 >= len(lines)


LISTING_LINES = st.sampled_from(["1:x", " 12| y", "3:", "text", "", "  ", "4 :", "5|", "\t7:z"])
LONG_LINE = "x" * (_SPLIT_CHARS + 1)


@settings(max_examples=500, deadline=None)
@given(st.lists(LISTING_LINES, max_size=45), st.integers(0, 45))
def test_mostly_numbered_reads_a_long_text_as_a_short_one(lines, at):
    """Past _SPLIT_CHARS the lines are found by walking, not splitting: the same answer."""
    lines = [*lines[:at], LONG_LINE, *lines[at:]]
    text = "\n".join(lines)
    assert len(text) > _SPLIT_CHARS
    assert _mostly_numbered(text) == _mostly_numbered_by_split(text)


FOOTER_PIECES = st.sampled_from(
    [
        "(Open file: /a.py)", "(Open file: n/a)", "(Current directory: /repo)", "bash-$",
        "\n", " ", "\t", "\u00a0", "\u2028", "x", ")", "$", "(", "ok", "\n\n",
    ]
)  # fmt: skip


@settings(max_examples=1000, deadline=None)
@given(st.lists(FOOTER_PIECES, max_size=12).map("".join))
def test_ends_in_footer_agrees_with_a_search_of_the_tail(text):
    stripped = text.strip()
    if stripped:
        plainly = _FOOTER.search(stripped[-_TAIL_CHARS:]) is not None
        assert _ends_in_footer(stripped) == plainly


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


LISTING_LINES_WITH_DIGITS = st.sampled_from(
    ["1:x", " 12| y", "3:", "text", "", "  ", "4 :", "٣:a", "5|", "x1:", "\t7:z", "8"]
)


LISTINGS = st.lists(LISTING_LINES_WITH_DIGITS, max_size=45).map("\n".join)


@settings(max_examples=1000, deadline=None)
@given(LISTINGS)
def test_mostly_numbered_reads_the_first_twenty_lines_as_a_split_does(text):
    assert _mostly_numbered(text) == _mostly_numbered_by_split(text)

"""Numbers and addresses a compaction must keep: e-mail addresses, Luhn-valid card
numbers, and numbers written as a US social security number or a North American telephone
number is written. Each scan is tried only where its match can be: addresses where an
``@`` is, card numbers inside runs of digits, the other numbers where their shape is.
``compiler.compact.safety`` joins them with the safety terms.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from compiler.state import ascii_letters

EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]++@[\w-]+(?:\.[\w-]+)+")
CARD = re.compile(r"(?<!\d)(?:\d[ -]?){12,18}\d(?!\d)")
DIGIT_RUN = re.compile(r"\d[\d -]{11,}\d")
# an SSN, or a telephone number with an area code, standing alone: not inside a longer
# number, a date (2024-05-12), a version or an identifier (ORD-555-123-4567 is a code)
ID_NUMBER = re.compile(
    r"(?<![\w.+-])(?:\d{3}-\d{2}-\d{4}|(?:\+1[ .-]?)?(?:\(\d{3}\) ?|\d{3}[.-])\d{3}[.-]\d{4})"
    r"(?![\w-]|\.\d)"
)
OTHER_DIGIT = re.compile(r"[^\x00-\x7f\D]")  # a decimal digit outside ASCII (\d: isdecimal)

DIGITS = bytes(ord("0") if "0" <= ch <= "9" else ord("1") for ch in map(chr, range(256)))
CARD_DIGITS = b"0" * 13  # a card number holds 13 digits at least, with only " " or "-" between
SHAPE = bytes(ord("0") if "0" <= ch <= "9" else ord(ch) for ch in map(chr, range(256)))


def as_bytes(text: str) -> bytes:
    """``text`` as one byte per character, for the checks that run in C: an ASCII text as
    it is; in any other, the four characters that match an ASCII letter under IGNORECASE
    written as that letter (``prefilter.ascii_letters``), every other non-ASCII character
    a ``?``. (``_LETTERS`` lower-cases the letters, so the text is not lower-cased.)

    Example:
        >>> as_bytes("ſoy in Café")
        b'soy in Caf?'
    """
    if text.isascii():
        return text.encode("ascii")
    return ascii_letters(text).encode("ascii", "replace")


def may_hold_card(text: str) -> bool:
    r"""Whether ``text`` has 13 digits in a row once spaces and dashes are taken out, as a
    card number has. ``\d`` matches every decimal digit: a text whose digits are all ASCII
    is read as bytes (``as_bytes``: any other character a ``?``, which is no digit)."""
    return holds_other_digit(text) or card_shaped(as_bytes(text))


def holds_other_digit(text: str) -> bool:
    r"""Whether ``text`` holds a decimal digit outside ASCII, which ``\d`` matches too: such
    a text is searched for numbers whatever its bytes say."""
    return not text.isascii() and OTHER_DIGIT.search(text) is not None


def card_shaped(data: bytes) -> bool:
    # 13 digits in a row once spaces and dashes are taken out, in the text as as_bytes reads it
    return CARD_DIGITS in data.translate(DIGITS, b" -")


def id_shaped(shape: bytes) -> bool:
    # every match of ID_NUMBER holds one of these, its digits read as 0: a whole SSN
    # (000-00-0000), or the end of a telephone number (000-0000 or 000.0000). A date
    # (0000-00-00) holds neither, so a payload full of dates is not searched for one (a
    # search that tries the pattern at every character).
    return b"000-00-0000" in shape or b"000-000" in shape or b"000.000" in shape


def emails(text: str) -> Iterator[re.Match]:
    r"""``EMAIL.finditer(text)``, tried only where an address can start: each match holds
    one ``@``, and its local part is the whole run of ``[\w.+-]`` before it (the run may
    not go on before the match, and is taken whole), so that run's start is the one place
    to try for each ``@``."""
    resume, at = 0, text.find("@")
    while at >= 0:
        start = at
        while start and local_char(text[start - 1]):
            start -= 1
        if resume <= start < at:
            match = EMAIL.match(text, start)
            if match is not None:
                yield match
                resume = match.end()
        at = text.find("@", at + 1)


def local_char(char: str) -> bool:
    r"""Whether ``[\w.+-]`` matches ``char``."""
    return char.isalnum() or char in "_.+-"


def cards(text: str) -> Iterator[re.Match]:
    """Card numbers: each run of 13-19 digit groups, or where it fails the check, the
    longest stretch of its whole groups that passes (a card followed by its CVV,
    ``4111 1111 1111 1111 123``, or preceded by a short code).

    Example:
        >>> [m.group() for m in cards("card 4111 1111 1111 1111 123, exp 12/27")]
        ['4111 1111 1111 1111']
    """
    for run in DIGIT_RUN.finditer(text):
        for match in CARD.finditer(text, run.start(), run.end()):
            if luhn_valid(match.group()):
                yield match
                continue
            inner = _inner_card(text, match.start(), match.end())
            if inner is not None:
                yield inner


def _inner_card(text: str, start: int, end: int) -> re.Match | None:
    """The longest stretch of whole digit groups, each of four digits or more, between
    ``start`` and ``end`` that is a card number (groups part at a space or a dash)."""
    cuts = [i for i in range(start, end) if text[i] in " -"]
    firsts, lasts = [start, *(i + 1 for i in cuts)], [*cuts, end]
    spans = [(a, b) for a in firsts for b in lasts if a < b and (a, b) != (start, end)]
    for a, b in sorted(spans, key=lambda span: span[0] - span[1]):  # the longest first
        if any(len(group) < 4 for group in re.split("[ -]", text[a:b])):
            continue  # a card is written in groups of four or more
        match = CARD.fullmatch(text, a, b)
        if match is not None and luhn_valid(match.group()):
            return match
    return None


def luhn_valid(number: str) -> bool:
    """A card number: a card network's first digit (2-6) and a valid Luhn check digit.

    The first digit rules out epoch-millisecond timestamps and most plain counters.
    """
    digits = [int(ch) for ch in reversed(number) if ch.isdigit()]
    if not 2 <= digits[-1] <= 6:
        return False
    total = sum(d if i % 2 == 0 else (d * 2 - 9 if d > 4 else d * 2) for i, d in enumerate(digits))
    return total % 10 == 0

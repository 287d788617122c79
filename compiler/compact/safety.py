"""Safety signals: the rows a compaction must keep, wherever they stand.

A signal is a safety term (``SAFETY_TERMS``: allergens, warnings, expiry, personal data),
an email address, a Luhn-valid card number, or a number written as a US social security
number or a North American telephone number is written (``123-45-6789``,
``(555) 123-4567``, ``+1 555.123.4567``). Terms match on letter boundaries, so
``PEANUT_ALLERGEN`` and ``date_of_birth`` match (``_`` is not a letter) while
``DeprecationWarning`` or ``adobe`` do not.

``has_safety_signal`` answers whether a text has one; ``safety_spans`` says where, with
the matches a full scan of the text would find (``segments_touched``: which of its lines a
match overlaps, a phrase wrapped across lines included). Both are asked of every row, line
and payload a compaction weighs, so both skip what cannot match: text is read by its
words, a term is tried only where a word it can begin with stands whole, addresses only
where an ``@`` is, card numbers only inside runs of digits, and the other numbers only
where their shape is.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from compiler.compact.safety_numbers import (
    ID_NUMBER,
    SHAPE,
    as_bytes,
    card_shaped,
    cards,
    emails,
    holds_other_digit,
    id_shaped,
)
from compiler.state import anchored_finditer, fold, leading_literals

try:  # the parser behind ``re``, to spell out SAFETY_TERMS (``sre_parse`` before 3.11)
    from re import _constants as _c
    from re import _parser
except ImportError:  # pragma: no cover - older layouts
    import sre_constants as _c
    import sre_parse as _parser

SAFETY_TERMS = (
    r"allerg(?:en|ens|y|ies|ic)",
    r"anaphyla(?:xis|ctic)",
    r"peanuts?",
    r"tree[\s_-]+nuts?",
    r"shellfish",
    r"fish",
    r"crustaceans?",
    r"nuts",
    r"(?:wal|hazel)nuts?",
    r"almonds?",
    r"cashews?",
    r"pecans?",
    r"pistachios?",
    r"soy(?:a|beans?)?",
    r"sesame",
    r"milk",
    r"eggs?",
    r"wheat",
    r"gluten",
    r"lactose",
    r"dairy",
    r"sul(?:f|ph)ites?",
    r"sever(?:e|ity)",
    r"critical",
    r"warn(?:s|ed|ing|ings)?",
    r"danger(?:s|ous)?",
    r"hazard(?:s|ous)?",
    r"hazmat",
    r"unsafe",
    r"toxic",
    r"poison(?:s|ed|ous)?",
    r"quarantin(?:e|ed|es|ing)",
    r"contaminat(?:ed|es|ion|ions)",
    r"contaminants?",
    r"recall(?:s|ed)?",
    r"expir(?:e|y|es|ed|ation|ing)",
    r"best[\s_-]+before",
    r"best[\s_-]+by",
    r"sell[\s_-]+by",
    r"use[\s_-]+by",
    r"contraindicat(?:ed|ion|ions)",
    r"do[\s_-]+not",
    r"pii",
    r"passwords?",
    r"passcodes?",
    r"secrets?",
    r"api[\s_-]+keys?",
    r"ssn",
    r"social[\s_-]+security",
    r"passports?",
    r"date[\s_-]+of[\s_-]+birth",
    r"birthdates?",
    r"birth[\s_-]+dates?",
    r"dob",
    r"birthdays?",
    r"cvv",
    r"cvc",
    r"phones?",
    r"telephones?",
)
_SAFETY = re.compile(
    # the look-ahead on first letters lets the engine skip most positions quickly
    "(?=[" + "".join(sorted({term[0] for term in SAFETY_TERMS})) + "])"
    r"(?<![^\W\d_])(?:" + "|".join(SAFETY_TERMS) + r")(?![^\W\d_])",
    re.IGNORECASE,
)
_SAFETY_LEADS = leading_literals(_SAFETY)


def has_safety_signal(text: str) -> bool:
    """True if ``text`` carries a safety signal (a term, an email, a card number, an SSN or
    a telephone number).

    Example:
        >>> has_safety_signal('{"sku": 7, "tags": "PEANUT_ALLERGEN"}')
        True
        >>> has_safety_signal('{"id": 7, "contact": "(555) 123-4567"}')
        True
        >>> has_safety_signal("DeprecationWarning in adobe.py, 2024-05-12, v1.555.1234")
        False
    """
    if "\\" in text:  # read both ways: a JSON escape, or a backslash in a path
        return any(map(_signal, _readings(text)))
    return _signal(text)


def _signal(text: str) -> bool:
    if _WORDS is not None and text.isascii():
        return _ascii_signal(text, _WORDS)
    return next(_spans(text), None) is not None


def safety_spans(text: str) -> Iterator[tuple[int, int]]:
    """Where ``text`` carries a safety signal: every match of a full scan for a term, an
    email or a Luhn-valid card number, as (start, end) pairs.

    Example:
        >>> list(safety_spans("mail a@b.co, no gluten"))
        [(16, 22), (5, 11)]
    """
    if "\\" not in text:
        return _spans(text)
    return _union(_spans(reading) for reading in _readings(text))


def _union(scans) -> Iterator[tuple[int, int]]:
    seen = set()
    for scan in scans:
        for span in scan:
            if span not in seen:
                seen.add(span)
                yield span


_ESCAPED_SPACE = re.compile(r"\\[nrt]")


def _readings(text: str) -> tuple[str, str]:
    r"""The two ways a text with backslashes is read, each as long as ``text``, so offsets
    stay true: JSON's whitespace escapes (``\n``, ``\r``, ``\t``) as two spaces, since a
    row's compact JSON writes a wrapped "Do / not exceed" as ``Do\nnot exceed``; and
    every backslash as a space, since in a path (``C:\data\recalls``) or an escaped
    backslash the letter after it begins a word.

    Example:
        >>> _readings('Do\\nnot exceed')
        ('Do  not exceed', 'Do nnot exceed')
        >>> _readings('C:\\data\\nuts.csv')
        ('C:\\data  uts.csv', 'C: data nuts.csv')
    """
    return _ESCAPED_SPACE.sub("  ", text), text.replace("\\", " ")


def segments_touched(text: str, starts: Sequence[int]) -> list[bool]:
    """For each segment of ``text`` (segment i runs from ``starts[i]`` to the next start;
    ``starts`` ascending, the first 0), whether a safety match of a scan over the whole
    text overlaps it. A phrase wrapped across a line break flags every line it touches,
    which a check of each line on its own would miss.

    Example:
        >>> text = "One daily. Do\\nnot exceed.\\nok"
        >>> segments_touched(text, [0, 14, 26])
        [True, True, False]
        >>> [has_safety_signal(line) for line in text.split("\\n")]
        [False, False, False]
    """
    flags = [False] * len(starts)
    if not starts or not has_safety_signal(text):
        return flags
    for start, end in safety_spans(text):
        first = bisect_right(starts, start) - 1
        last = bisect_right(starts, max(start, end - 1)) - 1
        flags[first : last + 1] = [True] * (last + 1 - first)
    return flags


def _spans(text: str) -> Iterator[tuple[int, int]]:
    # Terms are tried only where a word they can begin with starts (``_term_starts``),
    # card numbers only inside runs of digits, and the other numbers only where their
    # shape is: the same matches as a full scan, at a fraction of the cost.
    data = as_bytes(text)
    if _TERM_WORDS:
        resume = 0
        for start in _term_starts(data.translate(_LETTERS)):
            if start < resume:
                continue  # inside the match found last, as a scan would skip it
            match = _SAFETY.match(text, start)
            if match is not None:
                yield match.span()
                resume = match.end()
    else:  # pragma: no cover - a term with no finite spelling: tried where a lead begins
        for match in anchored_finditer(_SAFETY, text, fold(text), _SAFETY_LEADS, _letter):
            yield match.span()
    for match in emails(text):
        yield match.span()
    other_digit = holds_other_digit(text)
    if other_digit or card_shaped(data):
        for match in cards(text):
            yield match.span()
    if other_digit or id_shaped(data.translate(SHAPE)):
        for match in ID_NUMBER.finditer(text):
            yield match.span()


def _term_starts(letters: bytes) -> list[int]:
    r"""Where a term may match in a text whose ``letters`` (``as_bytes`` mapped through
    ``_LETTERS``) are given, in order: where a word a term can begin with (a one-word
    spelling, or a phrase's first word) stands whole.

    A match begins with such a word: each of its characters is matched by a letter of a
    term, so it is that ASCII letter in ``letters``, and the characters either side of the
    word are no letter (``[^\W\d_]``) or a ``[\s_-]`` between words, so they are spaces
    there (a non-ASCII character is a ``?``, which is no letter either). A word that
    stands whole only for want of a non-ASCII letter beside it is tried and not matched.

    Example:
        >>> _term_starts(b"do  not   undo  peanut  do")
        [0, 16, 24]
    """
    found = _TERM_WORDS.intersection(letters.split())  # most texts have none
    if not found:
        return []
    spaced = b" " + letters + b" "
    starts = []
    for word in found:
        whole = b" " + word + b" "
        at = spaced.find(whole)
        while at >= 0:
            starts.append(at)  # the word starts one past the space, and spaced has one more
            at = spaced.find(whole, at + len(word) + 1)
    if len(found) > 1:
        starts.sort()
    return starts


def _letter(char: str) -> bool:
    r"""Whether ``[^\W\d_]`` matches ``char``: a term never starts right after one."""
    return char.isalnum() and not char.isdecimal()


# Whether ASCII text carries a signal at all is read from its words rather than from a
# regex tried at every letter: a term matches on letter boundaries, so it is a whole word
# (or a phrase of them). Splitting the text into words costs a few C-level passes; the
# scan in _spans costs one per leading literal, and the regex engine's per-position work.

_SEPARATOR = r"[\s_-]+"  # how SAFETY_TERMS join the words of a phrase
_LETTERS = bytes(  # an ASCII letter lower-cased (as _SAFETY sees letters); anything else a space
    ord(ch.lower()) if ch.isascii() and re.fullmatch(r"[^\W\d_]", ch) else ord(" ")
    for ch in map(chr, range(256))
)


@dataclass(frozen=True)
class _WordIndex:
    words: frozenset[bytes]  # every spelling of a one-word term
    # each spelling's first word, the spelling (b" w1 +w2 ": the words, any gap between
    # them, in the text as _ascii_signal reads it), and its term
    phrases: tuple[tuple[bytes, re.Pattern[bytes], re.Pattern[str]], ...]
    first_words: frozenset[bytes]  # the first word of every phrase
    either: frozenset[bytes]  # both: a text's words are looked up once, not twice


def _word_index(terms: tuple[str, ...]) -> _WordIndex | None:
    """None if a term is not a phrase of words with finitely many ASCII spellings."""
    words: set[bytes] = set()
    phrases = []
    for term in terms:
        spelled = [_spellings(list(_parser.parse(part))) for part in term.split(_SEPARATOR)]
        if not all(spelled) or any("" in spellings for spellings in spelled):
            return None
        phrase = {""}
        for spellings in spelled:
            phrase = {f"{head} {tail.lower()}" for head in phrase for tail in spellings}
        if len(spelled) == 1:
            words |= {spelling.strip().encode() for spelling in phrase}
        else:
            phrases += [_phrase(each, term) for each in sorted(phrase)]
    first_words = frozenset(first for first, _, _ in phrases)
    return _WordIndex(frozenset(words), tuple(phrases), first_words, first_words | words)


def _phrase(spelling: str, term: str) -> tuple[bytes, re.Pattern[bytes], re.Pattern[str]]:
    """A phrase's entry in ``_WordIndex.phrases``, from one spelling ("date of birth")."""
    words = [word.encode() for word in spelling.split()]
    return words[0], re.compile(b" " + b" +".join(map(re.escape, words)) + b" "), re.compile(term)


def _spellings(items: list) -> set[str] | None:
    """Every string a parsed word matches, or None unless finitely many ASCII words."""
    out = {""}
    for op, arg in items:
        if op is _c.LITERAL and chr(arg).isascii() and chr(arg).isalpha():
            options = {chr(arg)}
        elif op is _c.SUBPATTERN:
            options = _spellings(list(arg[-1]))
        elif op is _c.BRANCH:
            branches = [_spellings(list(branch)) for branch in arg[1]]
            options = None if None in branches else set().union(*branches)
        elif op is _c.MAX_REPEAT and arg[:2] == (0, 1):
            inner = _spellings(list(arg[2]))
            options = None if inner is None else {"", *inner}
        else:
            return None
        if options is None:
            return None
        out = {head + tail for head in out for tail in options}
    return out


_WORDS = _word_index(SAFETY_TERMS)


def _ascii_signal(text: str, index: _WordIndex) -> bool:
    data = text.encode("ascii")
    letters = data.translate(_LETTERS)
    found = index.either.intersection(letters.split())  # most texts have none
    if found and not index.words.isdisjoint(found):
        return True
    if found:  # the first word of a phrase, at least
        spaced = b" " + letters + b" "
        for first, spelled, phrase in index.phrases:
            # the words follow one another: look for what may stand between them
            if first in found and spelled.search(spaced) and _phrase_signal(text, phrase):
                return True
    if b"@" in data and next(emails(text), None) is not None:
        return True
    if card_shaped(data) and next(cards(text), None) is not None:
        return True
    return id_shaped(data.translate(SHAPE)) and ID_NUMBER.search(text) is not None


# every word a term match can begin with: a one-word spelling, or a phrase's first word
_TERM_WORDS = frozenset() if _WORDS is None else _WORDS.either


def _phrase_signal(text: str, phrase: re.Pattern) -> bool:
    lowered = text.lower()
    found = phrase.search(lowered)
    while found is not None:
        if _SAFETY.match(text, found.start()):  # the letter boundaries hold too
            return True
        found = phrase.search(lowered, found.start() + 1)
    return False

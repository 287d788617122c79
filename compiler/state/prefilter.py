"""Literal prefilters for schema patterns.

Python's regular expressions try an alternation at every position of a text,
so a pattern such as ``\\b(?:fly|book|cabin)\\s+(economy|business)`` costs a
full scan of every turn even when the turn never says "economy". This module
reads a compiled pattern and derives clauses of literal strings: in any text
the pattern can match, every clause has at least one of its literals
(lower-cased). A turn that misses a clause is skipped without running the
pattern.

The analysis is conservative: where it cannot be sure (classes, optional
parts, lookarounds, backreferences) it asks for nothing, so a prefilter can
only ever skip a turn the pattern could not have matched.
"""

from __future__ import annotations

import re

try:  # the parser behind ``re`` (named ``sre_parse`` before 3.11)
    from re import _constants as _c
    from re import _parser as _parser
except ImportError:  # pragma: no cover - older layouts
    import sre_constants as _c
    import sre_parse as _parser

MAX_ALTERNATIVES = 64
Clauses = tuple[frozenset[str], ...]  # each clause needs one literal; () needs nothing

# The only non-ASCII characters that ``re.IGNORECASE`` matches against an ASCII
# letter (tests/test_prefilter.py recomputes this set over all of Unicode).
_FOLD = str.maketrans({"\u0130": "i", "\u0131": "i", "\u017f": "s", "\u212a": "k"})
# the same table as (character, replacement) pairs: ``str.translate`` with a table looks
# every character of the text up in it, four ``str.replace`` calls cost a fraction of that
_FOLD_PAIRS = tuple((chr(code), plain) for code, plain in sorted(_FOLD.items()))
# Each Latin-1 character lower-cased, which is one Latin-1 character, and none of the four
# above: ``str.lower`` looks each character of a text that is not ASCII up in the Unicode
# tables, which costs many times this table (a code file with one "é" is such a text).
_LATIN_LOWER = bytes(ord(chr(code).lower()) for code in range(256))


def fold(text: str) -> str:
    """Lower-case ``text`` so that an ASCII literal occurs in it whenever a
    case-insensitive pattern could match that literal there.

    Example:
        >>> fold("Fİx the ſeat")
        'fix the seat'
    """
    if text.isascii():
        return text.lower()
    try:  # a text of Latin-1 characters (most that are not ASCII) is lower-cased as bytes
        latin = text.encode("latin-1")
    except UnicodeEncodeError:
        return ascii_letters(text).lower()
    return latin.translate(_LATIN_LOWER).decode("latin-1")


def ascii_letters(text: str) -> str:
    """``text`` with the four non-ASCII characters that ``re.IGNORECASE`` matches against
    an ASCII letter written as that letter, and nothing else changed: ``fold`` before it
    lower-cases, for a caller that lower-cases ASCII letters its own way.

    Example:
        >>> ascii_letters("Fİx the ſeat, Kelvin")
        'Fix the seat, kelvin'
    """
    for char, plain in _FOLD_PAIRS:
        if char in text:
            text = text.replace(char, plain)
    return text


def admits(clauses: Clauses | Checks, folded: str) -> bool:
    """Whether a folded text could hold a match of a pattern with these clauses (tried in
    their order, and each clause's literals in theirs: see ``checking_order``)."""
    for clause in clauses:
        for literal in clause:
            if literal in folded:
                break
        else:
            return False
    return True


def required_literals(pattern: re.Pattern) -> Clauses:
    r"""Clauses of literals (lower-cased): each clause needs one of its literals.

    Example:
        >>> [sorted(c) for c in required_literals(re.compile(r"\bfly\s+(economy|business)", re.I))]
        [['business', 'economy'], ['fly']]
        >>> [sorted(c)[:3] for c in required_literals(re.compile(r"(\d+) items?"))]
        [[' item'], ['0', '1', '2']]
        >>> required_literals(re.compile(r"(\w+)"))
        ()
    """
    try:
        parsed = _parser.parse(pattern.pattern, pattern.flags)
    except Exception:
        return ()
    clauses = {c for c in _clauses(list(parsed)) if c and all(c)}
    return tuple(sorted(clauses, key=lambda c: (-min(map(len, c)), sorted(c))))


Checks = tuple[tuple[str, ...], ...]  # clauses as ``admits`` tries them fastest


def checking_order(clauses: Clauses) -> Checks:
    """The clauses for ``admits``: each without the literals that hold another of its
    literals (a text holding "street" holds "st", so a clause with "st" is met whether or
    not "street" is asked), shortest first (a short literal is the likeliest to be in a
    text, and a met clause is left at its first literal found). A frozenset's order would
    also change with the hash seed, and the cost of a check with it.

    Example:
        >>> checking_order((frozenset({"street", "st", "in", "road"}), frozenset({"$"})))
        (('in', 'st', 'road'), ('$',))
    """
    ordered = (
        tuple(sorted(_reduced(clause), key=lambda literal: (len(literal), literal)))
        for clause in clauses
    )
    return tuple(dict.fromkeys(ordered))  # (two clauses may reduce to one)


def _reduced(clause: frozenset[str]) -> list[str]:
    """The clause's literals that hold none of its other literals."""
    return [a for a in clause if not any(b != a and b in a for b in clause)]


def _clauses(items: list) -> list[frozenset[str]]:
    """A concatenation: every part is required, and adjacent literals join up."""
    out: list[frozenset[str]] = []
    run: list[str] = []
    for op, arg in items:
        if op is _c.LITERAL:
            run.append(chr(arg))
            continue
        out.extend(_run(run))
        run = []
        out.extend(_node(op, arg))
    out.extend(_run(run))
    return out


def _run(chars: list[str]) -> list[frozenset[str]]:
    literal = "".join(chars)
    if not literal or not literal.isascii():
        return []  # non-ASCII case-folding is not worth the risk of a wrong skip
    return [frozenset({literal.lower()})]


def _node(op, arg) -> list[frozenset[str]]:
    if op is _c.SUBPATTERN:
        return _clauses(list(arg[-1]))
    if op is _c.BRANCH:
        alternatives = [_clauses(list(branch)) for branch in arg[1]]
        # a clause every alternative needs (the digits of "May 5" and of "2024-05-05"),
        # then one naming each alternative's most selective literals
        first, *others = alternatives
        shared = [c for c in dict.fromkeys(first) if all(c in other for other in others)]
        need = union_of(_best(clauses) for clauses in alternatives)
        return [*shared, need] if need and need not in shared else shared
    if op in (_c.MAX_REPEAT, _c.MIN_REPEAT, getattr(_c, "POSSESSIVE_REPEAT", None)):
        low, _high, body = arg
        return _clauses(list(body)) if low >= 1 else []
    if op is getattr(_c, "ATOMIC_GROUP", None):
        return _clauses(list(arg))
    if op is _c.IN:
        return class_literals(arg)
    return []


def class_literals(items) -> list[frozenset[str]]:
    if items == [(_c.CATEGORY, _c.CATEGORY_DIGIT)]:
        return [_DIGITS]
    if len(items) <= 3 and all(o is _c.LITERAL and a < 128 for o, a in items):
        return [frozenset(chr(a).lower() for _, a in items)]
    return []


_DIGITS = frozenset("0123456789")


def _best(clauses: list[frozenset[str]]) -> frozenset[str] | None:
    """The most selective clause: longest shortest literal, then fewest literals."""
    if not clauses:
        return None
    return max(clauses, key=lambda c: (min(map(len, c)), -len(c)))


def union_of(needs) -> frozenset[str] | None:
    out: set[str] = set()
    for need in needs:
        if need is None:
            return None
        out |= need
        if len(out) > MAX_ALTERNATIVES:
            return None
    return frozenset(out)


def shared_clauses(needs) -> Clauses:
    """Clauses a text must satisfy for any of several patterns to match, given each
    pattern's clauses: those they all hold, then one naming every pattern's most
    selective literals (none if a pattern needs nothing, or past MAX_ALTERNATIVES).

    Example:
        >>> money, fly, ship = frozenset({"$"}), frozenset({"fly"}), frozenset({"ship"})
        >>> [sorted(c) for c in shared_clauses([(money, fly), (money, ship)])]
        [['$'], ['fly', 'ship']]
    """
    if not needs:
        return ()
    first, *others = needs
    shared = [clause for clause in first if all(clause in other for other in others)]
    either = union_of(_best(list(need)) for need in needs)
    if either is not None and either not in shared:
        shared.append(either)
    return tuple(shared)

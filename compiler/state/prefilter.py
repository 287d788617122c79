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
from collections.abc import Callable

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
        need = _union(_best(clauses) for clauses in alternatives)
        return [*shared, need] if need and need not in shared else shared
    if op in (_c.MAX_REPEAT, _c.MIN_REPEAT, getattr(_c, "POSSESSIVE_REPEAT", None)):
        low, _high, body = arg
        return _clauses(list(body)) if low >= 1 else []
    if op is getattr(_c, "ATOMIC_GROUP", None):
        return _clauses(list(arg))
    if op is _c.IN:
        return _class(arg)
    return []


def _class(items) -> list[frozenset[str]]:
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


def _union(needs) -> frozenset[str] | None:
    out: set[str] = set()
    for need in needs:
        if need is None:
            return None
        out |= need
        if len(out) > MAX_ALTERNATIVES:
            return None
    return frozenset(out)


_ZERO_WIDTH = (_c.AT, _c.ASSERT, _c.ASSERT_NOT)


def leading_literals(pattern: re.Pattern) -> frozenset[str] | None:
    r"""Lower-cased literals one of which every match of ``pattern`` starts with (none
    that starts with another of them).

    None when the start is not a literal (a class, an optional part). Zero-width
    assertions before the first literal (``\b``, lookbehinds) are allowed: they
    are checked by ``pattern.match`` at the candidate position.

    Example:
        >>> sorted(leading_literals(re.compile(r"(?<!x)\b(?:fly|book)\s+(\w+)", re.I)))
        ['book', 'fly']
        >>> leading_literals(re.compile(r"(\w+) items")) is None
        True
        >>> sorted(leading_literals(re.compile(r"(?:\A|\n)-|(?:new )?date")))
        ['', '\n', 'date', 'new ']
    """
    try:
        parsed = _parser.parse(pattern.pattern, pattern.flags)
    except Exception:
        return None
    found = _prefix(list(parsed))
    if not found:
        return None
    # a position where "opened" begins is one where "open" begins: only the shortest count;
    # and "updating", "update" are both looked for as "updat" (one scan, not two)
    found = _merged(found)
    return frozenset(a for a in found if not any(b and b != a and a.startswith(b) for b in found))


SHARED_PREFIX = 4  # literals sharing this many first characters are looked for as one


def _merged(literals: frozenset[str]) -> frozenset[str]:
    """The literals, those sharing their first SHARED_PREFIX characters replaced by the
    prefix they share: every position one of them begins at, that prefix begins at."""
    groups: dict[str, str] = {}
    for literal in sorted(literals):
        key = literal[:SHARED_PREFIX]
        if len(key) < SHARED_PREFIX:
            groups[literal] = literal
        elif key in groups:
            groups[key] = _shared(groups[key], literal)
        else:
            groups[key] = literal
    return frozenset(groups.values())


def _shared(first: str, second: str) -> str:
    """The longest prefix of both."""
    size = 0
    while size < min(len(first), len(second)) and first[size] == second[size]:
        size += 1
    return first[:size]


TEXT_START = ""  # as a leading literal: a match that begins where the text begins (``\A``)


def _prefix(items: list) -> frozenset[str] | None:
    index = 0
    while index < len(items) and items[index][0] in _ZERO_WIDTH:
        index += 1
    if index == len(items):
        at_start = (_c.AT, _c.AT_BEGINNING_STRING) in items
        return frozenset({TEXT_START}) if at_start else None
    op, arg = items[index]
    if op is _c.LITERAL:
        run = []
        while index < len(items) and items[index][0] is _c.LITERAL:
            run.append(chr(items[index][1]))
            index += 1
        literal = "".join(run)
        if not literal.isascii():
            return None
        # the run goes on with what the rest starts with: ``i(?:s|t's)`` starts with "is" or
        # "it's", which a text holds at far fewer places than "i"
        tails = _prefix(items[index:]) if index < len(items) else None
        if not tails or TEXT_START in tails:
            return frozenset({literal.lower()})
        return frozenset((literal + tail).lower() for tail in tails)
    if op is _c.SUBPATTERN:
        return _prefix(list(arg[-1]))
    if op is _c.BRANCH:
        return _union(_prefix(list(branch)) for branch in arg[1])
    if op in (_c.MAX_REPEAT, _c.MIN_REPEAT):
        body = _prefix(list(arg[2]))
        # an optional start: the match starts with it or with what follows it
        return body if arg[0] >= 1 else _union((body, _prefix(items[index + 1 :])))
    if op is _c.IN:
        found = _class(arg)
        return found[0] if found else None
    return None


def starts_at_boundary(pattern: re.Pattern) -> bool:
    r"""Whether every match of ``pattern`` starts where a Unicode ``\b`` holds: the
    pattern opens with zero-width assertions, one of them ``\b``, under no ASCII or
    locale flag.

    Example:
        >>> starts_at_boundary(re.compile(r"(?<!x)\bfly")), starts_at_boundary(re.compile("fly"))
        (True, False)
    """
    if pattern.flags & (re.ASCII | re.LOCALE) or not pattern.flags & re.UNICODE:
        return False
    try:
        parsed = _parser.parse(pattern.pattern, pattern.flags)
    except Exception:
        return False
    for op, arg in parsed:
        if op not in _ZERO_WIDTH:
            return False
        if op is _c.AT and arg is _c.AT_BOUNDARY:
            return True
    return False


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
    either = _union(_best(list(need)) for need in needs)
    if either is not None and either not in shared:
        shared.append(either)
    return tuple(shared)


def word_char(char: str) -> bool:
    r"""Whether ``\w`` matches ``char`` (as Python's ``re`` reads it, under Unicode)."""
    return char.isalnum() or char == "_"


def candidate_starts(
    folded: str,
    literals: frozenset[str],
    text: str | None = None,
    before: int | None = None,
    after: Callable[[str], bool] | None = None,
) -> list[int]:
    r"""Every position of ``folded`` where one of ``literals`` begins, in order; with
    ``before``, only those before it.

    With ``after`` and ``text`` (the unfolded text), positions right after a character of
    ``text`` that ``after`` holds for are left out: the caller passes it for a pattern
    that no match of starts there (``word_char`` for one that starts at ```` with a
    word character).
    """
    if len(literals) == 1:  # one literal's starts come in order, each once: no set to sort
        return _literal_starts(folded, next(iter(literals)), text, before, after)
    starts = set()
    for literal in literals:  # (the loop of _literal_starts, into one set)
        if literal == TEXT_START:
            starts.add(0)
            continue
        stop = None if before is None else before + len(literal) - 1
        at = folded.find(literal, 0, stop)
        while at >= 0:
            if after is None or not at or not after(text[at - 1]):
                starts.add(at)
            at = folded.find(literal, at + 1, stop)
    return sorted(starts)


def _literal_starts(folded: str, literal: str, text, before, after) -> list[int]:
    """``candidate_starts`` for one literal."""
    if literal == TEXT_START:
        return [0]
    stop = None if before is None else before + len(literal) - 1
    found = []
    at = folded.find(literal, 0, stop)
    while at >= 0:
        if after is None or not at or not after(text[at - 1]):
            found.append(at)
        at = folded.find(literal, at + 1, stop)
    return found


def starts_of(
    folded: str,
    literals: frozenset[str],
    text: str,
    before: int | None = None,
    after: Callable[[str], bool] | None = None,
) -> list[int]:
    """``candidate_starts``, none at or past ``before`` (the text's start included), for
    the read path's inner loop: one frame per call, ``word_char`` tested in line.
    ``literals`` are leading literals (``leading_literals``): none starts with another,
    so no two begin at one position and their starts need sorting, not a set.

    Example:
        >>> starts_of("in bin to", frozenset({"in", "to"}), "in bin to", None, word_char)
        [0, 7]
    """
    found = []
    word = after is word_char
    at_start = False  # TEXT_START is asked: 0 is a start, whatever else begins there
    for literal in literals:
        if literal == TEXT_START:
            at_start = before is None or before > 0
            continue
        stop = None if before is None else before + len(literal) - 1
        at = folded.find(literal, 0, stop)
        while at >= 0:
            if after is None or not at:
                found.append(at)
            elif word:
                char = text[at - 1]
                if not (char.isalnum() or char == "_"):
                    found.append(at)
            elif not after(text[at - 1]):
                found.append(at)
            at = folded.find(literal, at + 1, stop)
    if len(literals) > 1:
        found.sort()
    if at_start and (not found or found[0]):
        found.insert(0, 0)
    return found


def anchored_finditer(
    pattern: re.Pattern, text: str, folded: str, literals, after=None, before=None
):
    r"""``pattern.finditer(text)``, trying only where a leading literal begins.

    ``folded`` must be ``fold(text)``, which keeps every character in place.
    ``after``: a test for a character that no match starts right after (see
    ``candidate_starts``). ``before``: the caller wants no match that starts there or
    later (at least those are not tried).
    """
    if literals is None:
        yield from pattern.finditer(text)
        return
    resume = 0
    for start in candidate_starts(folded, literals, text, before, after):
        if start < resume:
            continue
        match = pattern.match(text, start)
        if match is None:
            continue
        yield match
        resume = match.end() if match.end() > start else start + 1


def word_bounded(pattern: re.Pattern, literals: frozenset[str] | None) -> bool:
    r"""Whether a match of ``pattern`` can only start where a word starts: it starts at
    ``\b`` and each of its leading ``literals`` with a word character.

    Example:
        >>> word_bounded(re.compile(r"\b(?:in|to)\s"), frozenset({"in", "to"}))
        True
        >>> word_bounded(re.compile(r"\b(?:in|\$)"), frozenset({"in", "$"}))
        False
    """
    if not literals or not starts_at_boundary(pattern):
        return False
    return all(literal and word_char(literal[0]) for literal in literals)

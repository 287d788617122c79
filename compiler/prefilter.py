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


def fold(text: str) -> str:
    """Lower-case ``text`` so that an ASCII literal occurs in it whenever a
    case-insensitive pattern could match that literal there.

    Example:
        >>> fold("Fİx the ſeat")
        'fix the seat'
    """
    if text.isascii():
        return text.lower()
    return text.translate(_FOLD).lower()


def admits(clauses: Clauses, folded: str) -> bool:
    """Whether a folded text could hold a match of a pattern with these clauses."""
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
        need = _union(_best(_clauses(list(branch))) for branch in arg[1])
        return [need] if need else []
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
    r"""Lower-cased literals one of which every match of ``pattern`` starts with.

    None when the start is not a literal (a class, an optional part). Zero-width
    assertions before the first literal (``\b``, lookbehinds) are allowed: they
    are checked by ``pattern.match`` at the candidate position.

    Example:
        >>> sorted(leading_literals(re.compile(r"(?<!x)\b(?:fly|book)\s+(\w+)", re.I)))
        ['book', 'fly']
        >>> leading_literals(re.compile(r"(\w+) items")) is None
        True
    """
    try:
        parsed = _parser.parse(pattern.pattern, pattern.flags)
    except Exception:
        return None
    found = _prefix(list(parsed))
    return found if found and all(found) else None


def _prefix(items: list) -> frozenset[str] | None:
    index = 0
    while index < len(items) and items[index][0] in _ZERO_WIDTH:
        index += 1
    if index == len(items):
        return None
    op, arg = items[index]
    if op is _c.LITERAL:
        run = []
        while index < len(items) and items[index][0] is _c.LITERAL:
            run.append(chr(items[index][1]))
            index += 1
        literal = "".join(run)
        return frozenset({literal.lower()}) if literal.isascii() else None
    if op is _c.SUBPATTERN:
        return _prefix(list(arg[-1]))
    if op is _c.BRANCH:
        return _union(_prefix(list(branch)) for branch in arg[1])
    if op in (_c.MAX_REPEAT, _c.MIN_REPEAT) and arg[0] >= 1:
        return _prefix(list(arg[2]))
    if op is _c.IN:
        found = _class(arg)
        return found[0] if found else None
    return None


def candidate_starts(folded: str, literals: frozenset[str]) -> list[int]:
    """Every position of ``folded`` where one of ``literals`` begins, in order."""
    starts = set()
    for literal in literals:
        at = folded.find(literal)
        while at >= 0:
            starts.add(at)
            at = folded.find(literal, at + 1)
    return sorted(starts)


def anchored_finditer(pattern: re.Pattern, text: str, folded: str, literals):
    """``pattern.finditer(text)``, trying only where a leading literal begins.

    ``folded`` must be ``fold(text)``, which keeps every character in place.
    """
    if literals is None:
        yield from pattern.finditer(text)
        return
    resume = 0
    for start in candidate_starts(folded, literals):
        if start < resume:
            continue
        match = pattern.match(text, start)
        if match is None:
            continue
        yield match
        resume = match.end() if match.end() > start else start + 1

"""Where a schema pattern can start: the literals every match begins with, and the
positions of a text worth trying the pattern at.

``re.finditer`` tries a pattern at every position of a text; a pattern whose matches all
begin with one of a few literals (``leading_literals``) need only be tried where one of
them stands (``candidate_starts``, ``starts_of``, ``anchored_finditer``), with the
boundaries the pattern asserts checked before the regex runs. The analysis is
conservative, like the clauses of ``compiler.state.prefilter``: where it cannot be sure it
gives no literals, and the pattern is tried everywhere.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from compiler.state.prefilter import class_literals, union_of

try:  # the parser behind ``re`` (named ``sre_parse`` before 3.11)
    from re import _constants as _c
    from re import _parser as _parser
except ImportError:  # pragma: no cover - older layouts
    import sre_constants as _c
    import sre_parse as _parser


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
        return union_of(_prefix(list(branch)) for branch in arg[1])
    if op in (_c.MAX_REPEAT, _c.MIN_REPEAT):
        body = _prefix(list(arg[2]))
        # an optional start: the match starts with it or with what follows it
        return body if arg[0] >= 1 else union_of((body, _prefix(items[index + 1 :])))
    if op is _c.IN:
        found = class_literals(arg)
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

"""A slot's patterns: compiled, each with its guard, and checked against its examples.

A pattern is a regex whose last group is the value it reads. It may have a guard
(``not_after``): a regex that voids its match where it is found earlier in the same
sentence. A lookbehind cannot say that, since Python's must have a fixed width: travel's
``destination_airport`` reads the second code of "from JFK to LAX", but not in a
sentence that searches for flights or asks to change them to something.

Decisions worth knowing:

- A sentence ends at ``.``, ``?`` or ``!`` and a space, or at a line break, and the
  guard looks back at most ``GUARD_REACH`` characters: a cue further back is another
  thought.
- A guard is compiled with the pattern's flags and needs no group; it is part of the
  schema's digest only where a slot has one, so schemas without guards keep theirs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from compiler.errors import SchemaError

PATTERN_FLAGS = re.IGNORECASE
# what a pattern may hold in the expanded (plain) form, beside being a bare string
PLAIN_PATTERN_KEYS = frozenset({"regex", "not_after"})


@dataclass(frozen=True)
class PatternNote:
    """What the authored form says beside one pattern: why it is there, and the
    texts it must and must not match (``matches``: text and the value captured)."""

    slot: str
    index: int
    regex: str
    reason: str = ""
    matches: tuple[tuple[str, str], ...] = ()
    rejects: tuple[str, ...] = ()
    not_after: str = ""

    @property
    def plain(self) -> str | dict:
        """The pattern as the expanded form holds it (``plain_pattern``)."""
        return plain_pattern(self.regex, self.not_after)

    @property
    def label(self) -> str:
        return f"{self.slot} pattern {self.index}"


def plain_pattern(regex: str, not_after: str | None) -> str | dict:
    """A pattern as the expanded form holds it: its regex, or with a guard
    ``{"regex": ..., "not_after": ...}`` (what ``slot_patterns`` reads).

    Example:
        >>> plain_pattern("for (T-1)", None), plain_pattern("for (T-1)", "closed")
        ('for (T-1)', {'regex': 'for (T-1)', 'not_after': 'closed'})
    """
    return {"regex": regex, "not_after": not_after} if not_after else regex


def slot_patterns(slot: str, given: list) -> tuple[tuple[re.Pattern, ...], tuple]:
    """A slot's patterns compiled, and each one's guard (None: none). A pattern
    is a regex string or ``{"regex": ..., "not_after": ...}``: a match of the regex is
    void where ``not_after`` is found earlier in its sentence (``said_before``)."""
    patterns, guards = [], []
    for pattern in given:
        guard = None
        if isinstance(pattern, dict):
            unknown = sorted(set(pattern) - PLAIN_PATTERN_KEYS)
            if unknown or not isinstance(pattern.get("not_after"), str):
                raise SchemaError(
                    f"slot {slot!r}: a pattern object holds a 'regex' and a 'not_after' "
                    f"string (or, authored, a 'reason' and examples); got {pattern!r}"
                )
            guard = compile_pattern(slot, pattern["not_after"], groups=False)
            pattern = pattern.get("regex")
        patterns.append(compile_pattern(slot, pattern))
        guards.append(guard)
    return tuple(patterns), tuple(guards)


def compile_pattern(slot: str, pattern: Any, groups: bool = True) -> re.Pattern:
    if not isinstance(pattern, str):
        raise SchemaError(f"slot {slot!r}: a pattern must be a string, got {pattern!r}")
    try:
        compiled = re.compile(pattern, PATTERN_FLAGS)
    except re.error as exc:
        raise SchemaError(f"slot {slot!r}: pattern {pattern!r} does not compile: {exc}") from exc
    if groups and compiled.groups < 1:
        raise SchemaError(f"slot {slot!r}: pattern {pattern!r} needs a capture group")
    return compiled


def example_failures(note: PatternNote, flags: int) -> list[str]:
    """Each example of ``note`` its pattern gets wrong, said in a sentence.

    Example:
        >>> note = PatternNote("ticket", 0, r"ticket (T-\\d+)", "r",
        ...                    (("ticket T-1", "T-1"),), ("ticket T-",))
        >>> example_failures(note, 0)
        []
        >>> example_failures(PatternNote("ticket", 0, r"(T-\\d)", "r", (("T-12", "T-12"),)), 0)
        ["ticket pattern 0: in 'T-12' it captures 'T-1', not 'T-12'"]
    """
    compiled = re.compile(note.regex, flags)
    guard = re.compile(note.not_after, flags) if note.not_after else None
    failures = []
    for text, value in note.matches:
        found = first_kept(compiled, guard, text)
        if found is None:
            failures.append(f"{note.label}: does not match {text!r}")
        elif found.group(1) != value:
            failures.append(
                f"{note.label}: in {text!r} it captures {found.group(1)!r}, not {value!r}"
            )
    for text in note.rejects:
        found = first_kept(compiled, guard, text)
        if found is not None:
            failures.append(f"{note.label}: matches {text!r}, reading {found.group(1)!r}")
    return failures


def first_kept(pattern: re.Pattern, guard: re.Pattern | None, text: str) -> re.Match | None:
    """The first match of ``pattern`` in ``text`` that ``guard`` does not void."""
    for match in pattern.finditer(text):
        if guard is None or not said_before(guard, text, match.start()):
            return match
    return None


def said_before(guard: re.Pattern, text: str, start: int) -> bool:
    """Whether ``guard`` is found earlier in the sentence of ``text`` that reaches
    ``start``: after the last sentence end (``.``, ``?`` or ``!`` and a space, or a line
    break) before it, within ``GUARD_REACH`` characters.

    Example:
        >>> guard = re.compile(r"\\bsearch")
        >>> text = "I'll search for flights from BOS to SEA."
        >>> said_before(guard, text, text.index("from"))
        True
        >>> text = "I searched. Your flight from BOS to SEA leaves at 9."
        >>> said_before(guard, text, text.index("from"))
        False
    """
    window = text[max(0, start - GUARD_REACH) : start]
    cut = _SENTENCE_END.search(window[::-1])  # the last end, read from the back
    if cut is not None:
        window = window[len(window) - cut.start() :]
    return guard.search(window) is not None


GUARD_REACH = 200
_SENTENCE_END = re.compile(r"\s[.?!]|\n")  # (reversed: a space before the mark)

"""What ``compiler.compact.safety.safety_spans`` must find, written as a plain scan of the whole
text with each pattern: the oracle the fast scan's property tests hold it to."""

from __future__ import annotations

import re

from compiler.compact.safety import (
    _SAFETY,
)
from compiler.compact.safety_numbers import (
    CARD,
    EMAIL,
    ID_NUMBER,
    luhn_valid,
)


def full_scan(text: str) -> list[tuple[int, int]]:
    """Every match of a plain scan, over each way a text with backslashes is read (its
    JSON escapes as spaces; each backslash as a space), each span once."""
    readings = [text]
    if "\\" in text:
        readings = [re.sub(r"\\[nrt]", "  ", text), text.replace("\\", " ")]
    spans = set()
    for reading in readings:
        spans.update(m.span() for m in _SAFETY.finditer(reading))
        spans.update(m.span() for m in EMAIL.finditer(reading))
        spans.update(card for m in CARD.finditer(reading) if (card := card_in(m)) is not None)
        spans.update(m.span() for m in ID_NUMBER.finditer(reading))
    return sorted(spans)


def card_in(match: re.Match) -> tuple[int, int] | None:
    """The run itself if it passes the check, else its longest stretch of whole groups of
    four digits or more that does (earliest first): every stretch is tried."""
    if luhn_valid(match.group()):
        return match.span()
    tokens = re.split(r"([ -])", match.group())  # digit groups and the marks between them
    found = []
    for i in range(0, len(tokens), 2):
        for j in range(i, len(tokens), 2):
            groups = tokens[i : j + 1 : 2]
            stretch = "".join(tokens[i : j + 1])
            if len(stretch) == len(match.group()) or min(map(len, groups)) < 4:
                continue
            if 13 <= len("".join(groups)) <= 19 and luhn_valid(stretch):
                start = match.start() + len("".join(tokens[:i]))
                found.append((-len(stretch), start, start + len(stretch)))
    return min(found)[1:] if found else None

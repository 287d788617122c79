"""Value contracts, derived from a slot's own read-path patterns.

A declared value is checked for shape before it may enter the register. The
shape is not written by hand: it is the union of the capture groups of the
slot's patterns, so a contract admits exactly the values the read path could
have produced from speech (the patterns were fitted on a corpus, so their
alternations are that corpus's vocabulary). A contract checks shape, never
truth: "basic economy" attributed to the wrong booking passes.

Contracts are stored in the schema file, where a reviewer can read them;
``tests/test_contracts.py`` fails when a pattern changes and the stored
contract was not re-derived (``python tests/bench/derive_contracts.py``).
"""

from __future__ import annotations

import re
from functools import lru_cache

FLAGS = re.IGNORECASE


def capture_group_source(pattern: str) -> str | None:
    """The source text of the first capturing group of ``pattern``.

    Example:
        >>> capture_group_source(r"\\bfly\\s+(?:in\\s+)?(economy|business)\\b")
        'economy|business'
        >>> capture_group_source(r"(?-i:([A-Z]{3}))")
        '[A-Z]{3}'
    """
    index, in_class = 0, False
    stack: list[tuple[int, bool]] = []
    while index < len(pattern):
        char = pattern[index]
        if char == "\\":
            index += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
            if pattern[index + 1 : index + 2] == "]" or pattern[index + 1 : index + 3] == "^]":
                index += 1 if pattern[index + 1] == "]" else 2
        elif char == "(":
            capturing = not pattern.startswith("(?", index) or pattern.startswith("(?P<", index)
            stack.append((index, capturing))
        elif char == ")" and stack:
            start, capturing = stack.pop()
            if capturing:
                body_start = (
                    pattern.index(">", start) + 1 if pattern[start + 1] == "?" else start + 1
                )
                return pattern[body_start:index]
        index += 1
    return None


def derive_contract(patterns: list[str]) -> str | None:
    """One contract for a slot: any of its patterns' capture groups, whole value.

    Case-sensitive scopes that enclose a group (``(?-i:( … ))``) are kept.

    Example:
        >>> derive_contract([r"fly (economy|business)", r"cabin: (basic economy)"])
        '(?:economy|business)|(?:basic economy)'
    """
    parts: list[str] = []
    for pattern in patterns:
        source = capture_group_source(pattern)
        if source is None:
            continue
        if _inside_case_sensitive_scope(pattern, source):
            source = f"(?-i:{source})"
        part = f"(?:{source})"
        if part not in parts:
            parts.append(part)
    return "|".join(parts) if parts else None


def _inside_case_sensitive_scope(pattern: str, source: str) -> bool:
    """Whether the capture group sits inside a ``(?-i:`` scope of the pattern."""
    at = pattern.find(source)
    opened = pattern.rfind("(?-i:", 0, at)
    if opened < 0:
        return False
    depth = 0
    for char_index in range(opened, at):
        char = pattern[char_index]
        if char == "(" and pattern[char_index - 1 : char_index] != "\\":
            depth += 1
        elif char == ")" and pattern[char_index - 1 : char_index] != "\\":
            depth -= 1
    return depth > 0


@lru_cache(maxsize=256)
def _compiled(contract: str) -> re.Pattern | None:
    try:
        return re.compile(contract, FLAGS)
    except re.error:
        return None


def satisfies(contract: str | None, value: str) -> bool:
    """Whether ``value`` has the shape the contract describes (whole value, any case).

    A slot without a contract is not gated; a contract that does not compile
    gates nothing either, and the schema tests refuse such a schema.

    Example:
        >>> satisfies("(?:economy|business)", "Business"), satisfies("(?:economy)", "first")
        (True, False)
    """
    if contract is None:
        return True
    compiled = _compiled(contract)
    if compiled is None:
        return True
    return compiled.fullmatch(" ".join(value.split())) is not None

"""Shortcut tests for the repeat rules: the values a payload shows and the status values
of a block, each against a plain reading of every level or every text."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler.compact.repeats import (
    REPEAT_DEPTH,
    _status_start,
    inner_values,
    status_values,
)
from tests.payload_strategies import KEYS, payload_objects

pytestmark = pytest.mark.shortcut

OBJECTS = payload_objects(max_rows=30)


def _plain_inner_values(value, without=frozenset()) -> list:
    """``inner_values`` the plain way: each level's children listed, the last one's too."""
    level = [f for key, f in value.items() if key not in without] if without else [value]
    found: list = []
    for _ in range(REPEAT_DEPTH + (not without)):
        level = [node for node in level if isinstance(node, dict | list) and node]
        found.extend(level)
        level = [c for node in level for c in (node.values() if isinstance(node, dict) else node)]
    return found


@settings(max_examples=300, deadline=None)
@given(OBJECTS, st.frozensets(KEYS, max_size=3))
def test_the_values_a_payload_shows_are_those_a_walk_of_every_level_finds(value, without):
    found = [id(node) for node in inner_values(value, without)]
    assert found == [id(node) for node in _plain_inner_values(value, without)]


STATUS_PIECES = st.sampled_from(
    [
        "(Open file: /r/a.py)", "(Current directory: /r)", "bash-$", "bash-$ ", "\n", "\r\n",
        " ", "\t", "\u00a0", "\u2028", "ok", ")", "$", "(Open file: n/a)\r", "x)", "",
    ]
)  # fmt: skip


def _status_values_plainly(text: str) -> tuple[str | None, str | None]:
    """``status_values`` as it was: the status block looked for in every text."""
    found: dict[str, str] = {}
    _status_start(text, found)
    return found.get("Open file"), found.get("Current directory")


@settings(max_examples=1000, deadline=None)
@given(st.lists(STATUS_PIECES, max_size=8).map("".join))
def test_status_values_agree_with_reading_every_text_for_a_status_block(text):
    assert status_values(text) == _status_values_plainly(text)

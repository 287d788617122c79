"""Shortcut tests for finding a declaration's mark: the mark is looked for in the
lowered text as a case-insensitive search finds it."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler.protocol.declare import _MARK, marked

pytestmark = pytest.mark.shortcut


def test_only_ascii_letters_lower_case_to_a_letter_of_the_mark():
    letters = set(_MARK)
    for code in range(0x110000):
        char = chr(code)
        if not 0xD800 <= code < 0xE000 and letters & set(char.lower()):
            assert char.lower() in letters and char.isascii(), code


MARK_PIECES = st.sampled_from(
    ["contextgc", "CONTEXTGC", "ContextGC", "-", "state", "STATE", "State", "ſtate", "conteXtgc",
     "K", "İ", "ı", "<", ">", " ", "\n", "-state", "gc-", "x", "s"]
)  # fmt: skip


@settings(max_examples=1000, deadline=None)
@given(st.lists(MARK_PIECES, max_size=12).map("".join))
def test_marked_is_the_mark_in_the_lowered_text(text):
    assert marked(text) == (_MARK in text.lower())

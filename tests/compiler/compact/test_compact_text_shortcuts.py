"""Shortcut tests for text payload compaction: a failure line is found as the whole
pattern finds it."""

from __future__ import annotations

import random

import pytest

from compiler.compact.compact_text import _FAILURE_LINE, _is_failure_line

pytestmark = pytest.mark.shortcut


def test_a_failure_line_is_found_as_the_whole_pattern_finds_it():
    rnd = random.Random(11)
    words = ["... FAILED", "panicked at", "FAIL", "Error", "error:", "x", " ", "\t", "ok"]
    words += ["--- FAIL", "a_test.go:1:", "Exception", "\n", "FAILED", "Caused by:", "●", "."]
    for _ in range(20000):
        piece = "".join(rnd.choice(words) for _ in range(rnd.randint(0, 8)))
        assert _is_failure_line(piece) == (_FAILURE_LINE.match(piece) is not None)

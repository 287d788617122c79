"""Shortcut tests for JSON input and output: the test for text that may be JSON and the
check that every number is exact, each against decoding or reading every literal."""

from __future__ import annotations

import json
import math
import random
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler.compact.compact import compact
from compiler.read.jsonio import _FLOAT, exact_numbers, may_be_json

pytestmark = pytest.mark.shortcut

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=3), children, max_size=3)
    ),
    max_leaves=10,
)


@settings(max_examples=500, deadline=None)
@given(JSON, st.sampled_from([None, 0, 2]), st.text(alphabet=" \t\n\r", max_size=2))
def test_no_json_text_is_taken_for_text(value, indent, space):
    assert may_be_json(space + json.dumps(value, indent=indent))


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=' \t\n[]{}"a1-tfnNI:,', max_size=10))
def test_a_text_judged_not_json_does_not_decode(text):
    if not may_be_json(text):
        try:
            json.loads(text)
        except (ValueError, RecursionError):
            return
        raise AssertionError(f"{text!r} decodes")


def _exact_by_reading_every_literal(text: str) -> bool:
    """``exact_numbers`` the plain way: every float literal of the text read."""
    for match in _FLOAT.finditer(text):
        literal = match.group()
        if literal.lstrip("-").isdigit() or (len(literal) <= 16 and "e" not in literal.lower()):
            continue
        number = float(literal)
        try:
            if not math.isfinite(number) or Decimal(repr(number)) != Decimal(literal):
                return False
        except ArithmeticError:  # 0e99999999999999999999: past Decimal's range, not exact
            return False
    return True


def test_it_finds_an_inexact_number_among_ids_that_look_like_exponents():
    text = '{"ids": ["9J3E5I", "3EMQJ"], "n": 4, "pi": 3.14159265358979323846}'
    assert exact_numbers(text) is False


def test_it_keeps_numbers_exact_when_only_ids_look_like_exponents():
    assert exact_numbers('{"ids": ["9J3E5I", "N1EBKX"], "price": 10.50, "n": 7}') is True


def test_it_reads_the_offsets_of_a_text_with_other_scripts_as_characters():
    assert exact_numbers('{"é": "ü€", "x": 12345678901234567.89}') is False
    assert exact_numbers('{"é": "ü€\ud800", "x": 1.5e3}') is True


def test_it_answers_as_reading_every_literal_on_random_texts():
    rnd = random.Random(7)
    alphabet = "0123456789" * 3 + '.eE-+ x",é'
    for _ in range(20000):
        text = "".join(rnd.choice(alphabet) for _ in range(rnd.randint(1, 60)))
        assert exact_numbers(text) == _exact_by_reading_every_literal(text)


@pytest.mark.parametrize("literal", ["0e99999999999999999999", "1.5e-99999999999999999999"])
def test_a_number_past_decimals_range_is_not_exact_and_its_payload_compacts(literal):
    # Decimal raised InvalidOperation comparing it, out of compact()
    assert exact_numbers(f'{{"n": {literal}}}') is False
    rows = ",".join(f'{{"id": {i}, "n": {literal}}}' for i in range(30))
    assert compact(f'{{"rows": [{rows}]}}', tool_name=None).text

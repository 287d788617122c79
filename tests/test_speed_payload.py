"""Shortcuts in payload compaction and the safety scan, each against the plain version."""

from __future__ import annotations

import re
import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from compiler.compact.compact_json import (
    _NESTED,
    EXEMPT_KEYS,
    _Collection,
    _collection_kind,
    _largest_collection,
)
from compiler.compact.safety import _OTHER_DIGIT, _WORDS, has_safety_signal
from compiler.read.jsonio import dumps

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=6),
    lambda inner: (
        st.lists(inner, max_size=5)
        | st.dictionaries(st.sampled_from(["a", "b", "id", "arguments", "x.y"]), inner)
    ),
    max_leaves=40,
)


def _every_collection(node, path, found):
    """The walk without skipping leaves: every dict and list is looked at."""
    kind = _collection_kind(node)
    if kind is not None:
        found.append(_Collection(path, kind, node, dumps(node)))
    elif isinstance(node, dict):
        for key, child in node.items():
            if isinstance(child, _NESTED) and key not in EXEMPT_KEYS:
                _every_collection(child, (*path, key), found)
    else:
        for index, child in enumerate(node):
            if isinstance(child, _NESTED):
                _every_collection(child, (*path, index), found)


@settings(max_examples=300, deadline=None)
@given(JSON_VALUES)
def test_the_largest_collection_is_the_one_a_walk_of_every_node_finds(value):
    found = []
    if isinstance(value, _NESTED):
        _every_collection(value, (), found)
    expected = max(found, key=lambda collection: len(collection.text), default=None)
    assert _largest_collection(value) == expected


def test_the_other_digit_check_is_a_decimal_digit_outside_ascii():
    chars = "".join(map(chr, range(128, sys.maxunicode + 1)))
    expected = {char for char in chars if char.isdecimal()}
    assert set(_OTHER_DIGIT.findall(chars)) == expected


PHRASE_PIECES = [
    *("date", "of", "birth", "Date", "OF", "dates", "do", "not", "Do", "dont", "use", "by"),
    *("best", "before", "social", "security", "_", "-", " ", "  ", "\n", ":", '"', "x", "1"),
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(PHRASE_PIECES), max_size=16).map("".join))
def test_a_phrase_is_read_from_the_words_as_a_full_scan_reads_it(text):
    phrases = [pattern for _, _, pattern in _WORDS.phrases]
    full = any(re.search(rf"(?<![^\W\d_]){p.pattern}(?![^\W\d_])", text, re.I) for p in phrases)
    if full:  # a one-word term, an address or a card number only adds to a signal
        assert has_safety_signal(text)

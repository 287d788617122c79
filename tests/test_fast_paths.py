"""The shortcuts the compiler takes for speed give what the plain computation gives.

Each test holds a shortcut against the straightforward version it replaces: a regex
scan of every position, a check of every line, a decode that raises.
"""

from __future__ import annotations

import json
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from compiler import list_schemas, load_schema
from compiler.compact_json import may_be_json
from compiler.extract import clean_value, extract_turn, is_negated
from compiler.prefilter import (
    _FOLD,
    anchored_finditer,
    fold,
    leading_literals,
    shared_clauses,
    word_bounded,
    word_char,
)
from compiler.safety import (
    _EMAIL,
    _cards,
    _emails,
    _letter,
    _local_char,
    _may_hold_card,
    has_safety_signal,
)
from compiler.stale import elide, elide_record, record_rows

SCHEMAS = [load_schema(name) for name in list_schemas()]
WORDS = st.sampled_from(
    [
        "economy", "Business", "reservation", "ID", "is", "it's", "flight", "HAT123", "from",
        "JFK", "to", "SEA", "open", "EDIT", "created", "`src/app.py`", "test_x.py", "the",
        "failing test", "12", "Street", "Ave", "my", "credit", "card", "PayPal", "Pay",
        "with", "user", "mia_li_3668", "May 5", "2024-05-20", "not", "date:", "I am", " ",
        "\n", ".", ",", ":", "**", "-", "İ", "ſ", "K", "é", "2", "x", "_", "```\n", "<command>",
        "in", "book", "new", "return",
    ]
)  # fmt: skip
TEXTS = st.lists(WORDS, max_size=40).map("".join)


def test_the_character_tests_are_the_regex_classes_they_stand_for():
    word, letter, local = re.compile(r"\w"), re.compile(r"[^\W\d_]"), re.compile(r"[\w.+-]")
    for code in range(0x110000):
        char = chr(code)
        assert word_char(char) == bool(word.match(char)), code
        assert _letter(char) == bool(letter.match(char)), code
        assert _local_char(char) == bool(local.match(char)), code


def test_folding_replaces_what_the_table_translates():
    for code in range(0x110000):
        if not 0xD800 <= code < 0xE000:
            char = chr(code)
            assert fold(char) == char.translate(_FOLD).lower(), code


def _first_match_by_full_scan(text: str, slot) -> tuple[str, int, int] | None:
    """The read path without any prefilter: every pattern scanned over the whole turn."""
    best = None
    for pattern in slot.patterns:
        for match in pattern.finditer(text):
            if best is not None and match.start() >= best[1]:
                break
            value = clean_value(match.group(match.lastindex or 1) or "")
            if not value or is_negated(text, match.start()):
                continue
            best = (value, match.start(), match.end())
            break
    return best


@settings(max_examples=500, deadline=None)
@given(TEXTS)
def test_reading_a_turn_finds_what_a_full_scan_finds(text):
    for schema in SCHEMAS:
        found = {o.slot: (o.value, o.start, o.end) for o in extract_turn(text, 0, schema)}
        for slot in schema.slots:
            assert found.get(slot.name) == _first_match_by_full_scan(text, slot), slot.name


OPENINGS = [
    r"(?:new\s+|old\s+)?date\s*:\s*(\d+)",
    r"(?:\A|\n)\s*-\s*(\w+)",
    r"\b(?:in|into|to)\s+(\w+)",
    r"(?:x)?(?:y)?z(\d)",
    r"\A(\w+)",
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["new ", "date: 4", "\n- a", "into b", "xz1", "yz2", " "]))
       .map("".join))  # fmt: skip
def test_an_optional_or_text_start_opening_finds_what_a_full_scan_finds(text):
    for source in OPENINGS:
        pattern = re.compile(source, re.IGNORECASE)
        lead = leading_literals(pattern)
        after = word_char if word_bounded(pattern, lead) else None
        full = [m.span() for m in pattern.finditer(text)]
        assert [m.span() for m in anchored_finditer(pattern, text, fold(text), lead, after)] == full


def test_a_slot_gate_holds_for_every_pattern_of_the_slot():
    for schema in SCHEMAS:
        for slot in schema.slots:
            gate = shared_clauses(slot.needs)
            for needs in slot.needs:
                for clause in gate:
                    # each gate clause is one of the pattern's own, or names its best literals
                    assert clause in needs or any(c <= clause for c in needs)


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet="ab.@-+_ é1\n", max_size=30))
def test_addresses_are_found_as_a_full_scan_finds_them(text):
    assert [m.span() for m in _emails(text)] == [m.span() for m in _EMAIL.finditer(text)]


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet="0123456789 -x\n٣", max_size=40))
def test_no_card_number_is_missed_by_the_digit_check(text):
    if next(_cards(text), None) is not None:
        assert _may_hold_card(text)


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


LINE_WORDS = ["use by", "date of", "birth", "a@b.co", "x", "PEANUT", "4111 1111 1111 1111", "_"]
LINES = st.lists(st.sampled_from(LINE_WORDS), max_size=6).map(" ".join)


@settings(max_examples=300, deadline=None)
@given(st.lists(LINES, max_size=6))
def test_a_line_with_a_signal_gives_its_text_one(lines):
    if any(has_safety_signal(line) for line in lines):
        assert has_safety_signal("\n".join(lines))


def _elide_record_by_every_row(text: str, later_text: str, replaced_by: int, key: str):
    """``elide_record`` as it was: every row of both records written and checked."""
    old, new = json.loads(text), json.loads(later_text)
    rows, repeated = record_rows(old), set(record_rows(new))
    safety = [row for row in rows if row not in repeated and has_safety_signal(row)]
    what = f"{len(rows)} rows, {len(text)} chars, truncated=true"
    head = f"[stale read: {key[:160]} was shown again at turn {replaced_by}; "
    head += f"this older output is omitted ({what})"
    head += "; safety rows it does not repeat kept:]" if safety else "]"
    return "\n".join([head, *safety])


RECORDS = st.dictionaries(
    st.sampled_from(["id", "pax", "note", "dob", "pay"]),
    st.sampled_from(["R1", "peanut allergy", "ok", 4, [{"dob": "1990"}], {"c1": {"n": 4}}]),
    min_size=1,
)


@settings(max_examples=300, deadline=None)
@given(RECORDS, RECORDS, st.text(max_size=300))
def test_a_stale_record_keeps_the_rows_it_kept_when_every_row_was_checked(old, new, pad):
    text = json.dumps({**old, "zz": pad})
    later = json.dumps(new)
    result = elide_record(text, later, replaced_by=3, key="record id")
    expected = _elide_record_by_every_row(text, later, 3, "record id")
    if len(expected) < len(text):
        assert result.text == expected
    else:
        assert not result.changed and result.text == text
    assert elide(text, replaced_by=3, key="k").original_chars == len(text)

"""Shortcut tests for extraction: the read and action paths find what a full scan of every
pattern and every mapping finds, and a turn is checked once for a correction."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler import list_schemas, load_schema
from compiler.facts import PROVENANCE_RANK, Provenance
from compiler.read.messages import Message, ToolCall
from compiler.state import extract
from compiler.state.classify import Kind
from compiler.state.extract import (
    _CORRECTION_NEEDS,
    _has_correction,
    argument_at,
    clean_value,
    extract_message,
    extract_turn,
    is_negated,
)
from compiler.state.prefilter import (
    admits,
    fold,
)
from compiler.state.schema import Effect

pytestmark = pytest.mark.shortcut

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


def _actions_by_every_mapping(calls, turn: int, schema) -> list[tuple[str, str]]:
    """The action path as it was: each call's arguments decoded with ``json.loads``, every
    mapping of the tool walked, the path split and matched step by step."""
    found = []
    for call in calls:
        mappings = schema.actions_by_tool.get(call.name)
        if not mappings:
            continue
        try:
            arguments = json.loads(call.arguments) if call.arguments else None
        except (ValueError, RecursionError):
            arguments = None
        for slot, mapping in mappings:
            if not mapping.commits:
                continue
            if mapping.effect is Effect.STARTS:  # it begins an entity: no argument is read
                found.append((slot, ""))
                continue
            node = _walk(arguments, mapping.argument)
            if isinstance(node, bool | int | float) and not isinstance(node, str):
                node = json.dumps(node)
            value = clean_value(node) if isinstance(node, str) else ""
            if value:
                found.append((slot, value))
    return found


def _walk(node, path: str):
    """The value at a dotted argument path, one step at a time (the straightforward way)."""
    for step in path.split("."):
        if isinstance(node, dict):
            node = node.get(step)
        elif isinstance(node, list) and re.fullmatch(r"-?\d+", step):
            index = int(step)
            node = node[index] if -len(node) <= index < len(node) else None
        else:
            return None
    return node


ARGUMENTS = st.sampled_from(
    [
        "", "{}", "not json", "\ufeff{}", "[" * 5000 + "]" * 5000, '{"cabin": "business"}',
        '{"reservation_id": "ABC123", "cabin": " economy ", "flights": [{"date": "2024-05-01",'
        ' "flight_number": "HAT001"}]}',
        '{"flights": [], "cabin": 3, "user_id": true}', '{"flights": {"0": {"date": "x"}}}',
        '{"origin": NaN, "destination": 1.5e3, "user_id": "mia_li_3668"}',
        '{"reservation_id": null, "flights": [{"flight_number": ["HAT1"]}]}',
    ]
)  # fmt: skip


TOOLS = st.sampled_from(
    ["book_reservation", "update_reservation_flights", "get_reservation_details",
     "search_direct_flight", "get_user_details", "cancel_reservation", "unknown_tool"]
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(TOOLS, ARGUMENTS), max_size=3))
def test_the_action_path_reads_only_committing_calls_and_finds_what_every_mapping_finds(calls):
    tool_calls = tuple(
        ToolCall(name, arguments, f"c{i}") for i, (name, arguments) in enumerate(calls)
    )
    message = Message("assistant", None, tool_calls=tool_calls)
    memo: dict = {}
    for schema in SCHEMAS:
        found = extract_message(message, Kind.TOOL_CALL, 4, schema, memo=memo)
        assert [(o.slot, o.value) for o in found] == _actions_by_every_mapping(
            tool_calls, 4, schema
        )
        assert all(o.provenance is Provenance.ACTED and o.turn == 4 for o in found)


@pytest.mark.parametrize(
    "path", ["flights.0.date", "flights.-1.n", "a.b", "a.١", "a.-", "a.+1", "a.01", "x"]
)
def test_a_split_path_finds_what_matching_each_step_finds(path):
    documents = [
        {"flights": [{"date": "d0", "n": 1}, {"date": "d1", "n": 2.5}], "a": {"b": True}},
        {"a": ["zero", "one"], "x": None}, {"a": {"١": "arabic one"}}, [1, 2], "text",
    ]  # fmt: skip
    for document in documents:
        node = _walk(document, path)
        expected = node if isinstance(node, str) else None
        if isinstance(node, bool | int | float) and not isinstance(node, str):
            expected = json.dumps(node)
        assert argument_at(document, path) == expected


def test_the_read_path_lists_its_observations_before_the_action_path():
    # the fold applies a turn's observations in provenance order; without declarations the
    # compile takes this order as it comes (compiler.fold)
    call = ToolCall("book_reservation", '{"cabin": "business", "user_id": "mia_li_3668"}', "c1")
    message = Message(
        "assistant", "Booked you in economy on HAT001 from JFK to SEA.", tool_calls=(call,)
    )
    for schema in SCHEMAS:
        found = extract_message(message, Kind.SPEECH, 2, schema)
        ranks = [PROVENANCE_RANK[o.provenance] for o in found]
        assert ranks == sorted(ranks)


READ_PIECES = st.sampled_from(
    [
        "Ship it to 12 Oak Street", "45 Elm Road", "sorry, my mistake: ", "my mistake ",
        "Correction: ", "scratch that, ", "I meant ", "make that ", "change it to ",
        "pay with PayPal", "my credit card", "economy", "business", "book in ", "HAT001",
        "open src/app.py", "not ", ". ", "\n", " ", "Make ", "meant", "sorry",
    ]
)  # fmt: skip


def _corrects_by_literals(folded: str) -> bool:
    """The turn's correction check as it was: the cue's literals, the cue looked for after
    each slot's match."""
    return admits(_CORRECTION_NEEDS, folded)


@settings(max_examples=1000, deadline=None)
@given(st.lists(READ_PIECES, max_size=10).map("".join))
def test_a_turn_checked_once_for_a_correction_reads_what_a_check_per_match_reads(text):
    expected = []
    saved = extract._has_correction
    extract._has_correction = _corrects_by_literals
    try:
        for schema in SCHEMAS:
            expected.append(extract_turn(text, 0, schema))
    finally:
        extract._has_correction = saved
    assert [extract_turn(text, 0, schema) for schema in SCHEMAS] == expected


def test_a_turn_without_a_cue_has_none_after_any_match():
    folded = fold("Ship it to 12 Oak Street. Make it quick, it meant well.")
    assert admits(_CORRECTION_NEEDS, folded) and not _has_correction(folded)


def test_reading_corrections_reads_only_a_short_stretch_after_each_cue(monkeypatch):
    # re-reading the rest of the turn after each cue took 11 s for a 120 KB turn
    import compiler.state.extract as extract

    read = []
    first_match = extract._first_match

    def counting(text, folded, slot):
        read.append(len(text))
        return first_match(text, folded, slot)

    monkeypatch.setattr(extract, "_first_match", counting)
    turn = "Pay with Visa. Correction: pay with PayPal. Ship it to 1 Oak Street. " * 1600
    extract.extract_turn(turn, 0, load_schema("logistics"))
    whole = [n for n in read if n == len(turn)]
    assert len(whole) <= 2  # once per slot over the whole turn, then short stretches
    assert max(n for n in read if n != len(turn)) <= extract.CORRECTION_REACH + extract._VALUE_REACH

"""The shortcuts the compiler takes for speed give what the plain computation gives.

Each test holds a shortcut against the straightforward version it replaces: a regex
scan of every position, a check of every line, a decode that raises.
"""

from __future__ import annotations

import json
import re
from collections import OrderedDict
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler import list_schemas, load_schema
from compiler.compact.compact import _TRAILER_LINE, _split_trailer
from compiler.compact.safety import (
    _EMAIL,
    _cards,
    _emails,
    _letter,
    _local_char,
    _may_hold_card,
    has_safety_signal,
    safety_spans,
)
from compiler.compact.stale import _canonical, elide, elide_record, record_rows, safety_lines
from compiler.facts import PROVENANCE_RANK, Provenance
from compiler.layout.emit import _quote
from compiler.read.items import _plain_item, _read_item
from compiler.read.jsonio import may_be_json
from compiler.read.messages import Message, ToolCall
from compiler.state.classify import Kind
from compiler.state.extract import (
    argument_at,
    clean_value,
    extract_message,
    extract_turn,
    is_negated,
)
from compiler.state.prefilter import (
    _FOLD,
    TEXT_START,
    admits,
    anchored_finditer,
    candidate_starts,
    checking_order,
    fold,
    leading_literals,
    shared_clauses,
    word_bounded,
    word_char,
)
from compiler.state.register import Entry, _ended

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


# -- the action path and the read keys decode tool-call arguments once -------------------


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


CALL_ARGUMENTS = ["", "{}", "oops", "\ufeff{}", '{"b": 1, "a": [1.5, "é"]}',
                  "[" * 5000 + "]" * 5000, '{"a": NaN}', "  [1, 2]  "]  # fmt: skip


@pytest.mark.parametrize("arguments", CALL_ARGUMENTS)
def test_a_canonical_call_key_from_a_shared_decode_is_the_one_json_loads_gives(arguments):
    try:
        expected = json.dumps(json.loads(arguments), ensure_ascii=True, sort_keys=True,
                              separators=(",", ":"))  # fmt: skip
    except (ValueError, RecursionError):
        expected = arguments
    memo: dict = {}
    assert _canonical(arguments, memo) == expected
    assert _canonical(arguments, memo) == expected  # the second time, from the memo
    assert _canonical(arguments) == expected


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


# -- the register fold -------------------------------------------------------------------


def test_an_ended_entry_is_the_entry_with_its_end_set():
    entry = Entry("cabin", "economy", 2, Provenance.ACTED, (2, 5), None, None, True, True)
    assert _ended(entry, superseded_by=7) == Entry(
        "cabin", "economy", 2, Provenance.ACTED, (2, 5), 7, None, True, True
    )
    assert _ended(entry, revoked_at=9) == replace(entry, revoked_at=9)


# -- reading message items ---------------------------------------------------------------

ITEM_VALUES = st.sampled_from([None, "", "hi", "é\u2028x", 3, ["a"], {"a": 1}, True])
ITEMS = st.builds(
    lambda role, content, name, call_id, extra: {
        **({"role": role} if role != "-" else {}),
        **({"content": content} if content != "-" else {}),
        **({"name": name} if name != "-" else {}),
        **({"tool_call_id": call_id} if call_id != "-" else {}),
        **extra,
    },
    st.sampled_from(["user", "assistant", "tool", "system", "human", "USER", "odd", 3, None, "-"]),
    st.one_of(ITEM_VALUES, st.just("-")),
    st.one_of(ITEM_VALUES, st.just("-")),
    st.one_of(ITEM_VALUES, st.just("-")),
    st.sampled_from([{}, {"tool_call_ids": ["x"]}, {"function_call": {"name": "f"}}]),
)


@settings(max_examples=500, deadline=None)
@given(ITEMS)
def test_a_plain_item_is_read_as_the_general_reader_reads_it(item):
    message = _plain_item(item, 7)
    if message is not None:
        expected, notes = _read_item(item, 7, 0, lambda index: f"messages[{index}]")
        assert notes == []
        assert message == expected and message.source == expected.source
        assert message.line == expected.line == 7
    # a dict subclass takes the general reader, to the same message
    if isinstance(item, dict):
        special = _read_item(OrderedDict(item), 7, 0, str)[0]
        plain = _read_item(item, 7, 0, str)[0]
        assert special == plain


# -- stale reads ---------------------------------------------------------------------------

SAFETY_TEXTS = st.lists(
    st.sampled_from(
        # "Do" and "not" make a phrase a line break can split
        "ok|\n|PEANUT| |phone|a@b.co|4111 1111 1111 1111|é|\r|Do|not".split("|")
    ),
    max_size=12,
).map("".join)


def _safety_lines_by_splitting(text: str) -> list[str]:
    """``safety_lines`` the plain way: the text split into lines, and every line from
    the one a signal starts on to the one it ends on, found by counting line breaks."""
    lines, found = text.split("\n"), set()
    for start, end in safety_spans(text):
        first = text.count("\n", 0, start)
        found.update(range(first, first + text.count("\n", start, max(start, end - 1)) + 1))
    return [lines[i] for i in sorted(found)]


@settings(max_examples=500, deadline=None)
@given(SAFETY_TEXTS)
def test_safety_lines_are_the_lines_splitting_the_text_finds(text):
    assert safety_lines(text) == _safety_lines_by_splitting(text)
    for payload in (text, text + "x" * 400, text + "\nx" * 200):
        notice = elide(payload, replaced_by=3, key="k")
        lines, safety = payload.split("\n"), _safety_lines_by_splitting(payload)
        head = "[stale read: k was shown again at turn 3; this older output is omitted "
        head += f"({len(lines)} lines, {len(payload)} chars, truncated=true)"
        expected = "\n".join([head + ("; safety lines kept:]" if safety else "]"), *safety])
        if len(expected) < len(payload):
            assert (notice.text, notice.rows_total) == (expected, len(lines))
        else:
            assert not notice.changed and notice.text == payload


# -- prefilters ----------------------------------------------------------------------------


def _starts_at_every_position(folded, literals, text, before, after) -> list[int]:
    """Every position tried against every literal: one starting before ``before``, not
    just after a character ``after`` holds for; ``TEXT_START`` at 0 whatever ``before``."""
    starts = []
    for at in range(len(folded) + 1):
        for literal in literals:
            if literal == TEXT_START:
                found = at == 0
            else:
                found = (before is None or at < before) and folded.startswith(literal, at)
                found = found and (after is None or at == 0 or not after(text[at - 1]))
            if found:
                starts.append(at)
                break
    return starts


@settings(max_examples=300, deadline=None)
@given(TEXTS, st.sampled_from([None, 0, 5, 30]))
def test_candidate_starts_are_every_position_a_literal_starts_at(text, before):
    folded = fold(text)
    for literals in ({"to"}, {"to", "in", "is"}, {"", ":", "\n"}, {"it's", "i"}, {"economy"}):
        for after in (None, word_char):
            got = candidate_starts(folded, frozenset(literals), text, before, after)
            assert got == _starts_at_every_position(folded, literals, text, before, after)


@settings(max_examples=300, deadline=None)
@given(TEXTS)
def test_every_match_of_a_schema_pattern_starts_with_one_of_its_leading_literals(text):
    folded = fold(text)
    for schema in SCHEMAS:
        for slot in schema.slots:
            for pattern, lead in zip(slot.patterns, slot.leads, strict=True):
                if lead is None:
                    continue
                for match in pattern.finditer(text):
                    start = match.start()
                    assert any(
                        (literal == TEXT_START and start == 0)
                        or (literal and folded.startswith(literal, start))
                        for literal in lead
                    ), (pattern.pattern, text, start)


def test_a_literal_run_goes_on_with_what_follows_it():
    pattern = re.compile(r"\b(?:is|it's|it is)\s+an?\s+(\w+)", re.IGNORECASE)
    assert leading_literals(pattern) == frozenset({"is", "it's", "it is"})
    assert leading_literals(re.compile(r"ab(?:\w+)")) == frozenset({"ab"})
    assert leading_literals(re.compile(r"ab\Z")) == frozenset({"ab"})


@settings(max_examples=300, deadline=None)
@given(TEXTS)
def test_clauses_in_checking_order_admit_what_the_clauses_admit(text):
    folded = fold(text)
    clause_sets = [slot.gate for schema in SCHEMAS for slot in schema.slots]
    clause_sets += [need for schema in SCHEMAS for slot in schema.slots for need in slot.needs]
    clause_sets.append((frozenset({"street", "st", "ave", "avenue"}), frozenset("0123456789")))
    for clauses in clause_sets:
        assert admits(checking_order(clauses), folded) == admits(clauses, folded)


# -- compaction ----------------------------------------------------------------------------


def _split_trailer_line_by_line(text: str) -> tuple[str, str]:
    """The trailing lines that are footer lines, the first line never among them."""
    lines = text.split("\n")
    kept = len(lines)
    while kept > 1 and _TRAILER_LINE.fullmatch(lines[kept - 1].rstrip("\r")):
        kept -= 1
    trailer = "\n" + "\n".join(lines[kept:]) if kept < len(lines) else ""
    return "\n".join(lines[:kept]), trailer


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(
    ['{"a": 1}', "\n", "\r", " ", "(Open file: /a.py)", "(Current directory: /r)", "bash-$",
     "x", ")", "$", "]"]), max_size=8).map("".join))  # fmt: skip
def test_the_footer_split_finds_what_a_look_at_every_line_finds(text):
    assert _split_trailer(text) == _split_trailer_line_by_line(text)


@pytest.mark.parametrize("value", ["", "a", 'say "hi"', "<b>é</b>\n", "\ud800 lone", "\x00\x1f"])
def test_a_state_value_is_quoted_as_json_dumps_quotes_it(value):
    expected = json.dumps(value, ensure_ascii=False).replace("<", "\\u003c").replace(">", "\\u003e")
    assert _quote(value) == expected


def test_a_file_window_walks_back_to_the_same_last_line_findall_gives():
    import re

    from compiler.compact.stale import _window

    numbered = re.compile(r"^(\d+):", re.MULTILINE)
    texts = [
        "",
        "no numbers here\n(3 more lines below)",
        "[File: a (9 lines total)]\n4:x",
        "[File: a (9 lines total)]\r\n(3 more lines above)\r\n4:x\r\n5:y\r\n"
        "(4 more lines below)\r\n",
        "7:only\nfooter\n12: not at the end\n(Open file: a)\nbash-$",
        "\n".join(f"{n}:line {n}" for n in range(1, 200)) + "\n\n(Current directory: /r)\n",
        "x\n10:a\n11:b\n12:c",
    ]
    for text in texts:
        found = numbered.findall(text)
        expected = (int(found[0]), int(found[-1])) if found else (0, 0)
        assert _window(text, 0, len(text)) == expected, text

"""The write path's text layer: blocks found, parsed, merged and stripped."""

import json
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compiler import compile_messages, load_schema
from compiler.protocol.block_body import EMPTY, Declaration, normalise_key
from compiler.protocol.instruction import INSTRUCTION_END, INSTRUCTION_START, render_instruction
from compiler.protocol.protocol import escape_value, protocol, strip_blocks

CAPTURES = Path(__file__).parents[2] / "fixtures" / "captures"
PROPERTY = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def block(body) -> str:
    """A block around ``body``: a string is used as is, anything else as JSON."""
    text = body if isinstance(body, str) else json.dumps(body)
    return f"<contextgc-state>{text}</contextgc-state>"


def declared(text: str) -> Declaration:
    return protocol(text)[1]


# --- merging -----------------------------------------------------------------


def test_it_merges_several_blocks_in_one_turn_later_values_win():
    text = block({"assert": {"a": "1", "b": "2"}, "pin": {"p": "x"}}) + block(
        {"assert": {"a": "3"}, "pin": {"p": "y"}, "unsure": {"u": "maybe"}}
    )
    assert declared(text) == Declaration(
        asserts=(("a", "3"), ("b", "2")),
        pins=(("p", "y"),),
        unsure=(("u", "maybe"),),
        blocks=2,
    )


def test_it_unions_revokes_in_order_of_appearance():
    text = block({"revoke": ["b", "a"]}) + block({"revoke": "c"}) + block({"revoke": ["a", "d"]})
    assert declared(text).revokes == ("b", "a", "c", "d")


def test_key_variants_in_one_block_merge_into_one_slot_later_wins():
    text = block({"assert": {"DestinationAddress": "Gate 1", "destination-address": "Gate 2"}})
    assert declared(text).asserts == (("destination_address", "Gate 2"),)


def test_a_malformed_block_does_not_spoil_a_good_one_in_the_same_turn():
    d = declared(block("{not json") + block({"assert": {"a": "1"}}))
    assert (d.asserts, d.blocks, d.malformed) == ((("a", "1"),), 2, 1)
    assert d.problems[0].startswith("block 1: invalid JSON")


# --- malformed blocks ----------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ('{"assert": {"a": "1"}', "block 1: invalid JSON: Expecting ',' delimiter"),
        ('{"assert": {"a": "1"}}}', "block 1: invalid JSON: Extra data"),
        ('{"assert": {"a": "1"}}{"pin": {"b": "2"}}', "block 1: invalid JSON: Extra data"),
        ("", "block 1: empty block"),
        ('{"assert": {"a": NaN}}', "block 1: invalid JSON: 'NaN is not JSON'"),
    ],
)
def test_it_counts_invalid_json_as_malformed_and_applies_nothing(body, reason):
    d = declared(block(body))
    assert (d.blocks, d.malformed, d.asserts, d.pins) == (1, 1, (), ())
    assert d.problems[0].startswith(reason)


@pytest.mark.parametrize(
    "body",
    [
        '{"assert": {"a": "1"}, "assert": {"b": "2"}}',
        '{"assert": {"a": "1", "a": "2"}}',
        '{"pin": {"a": "1"}, "unsure": {"b": "1", "b": "1"}}',
    ],
)
def test_it_rejects_a_duplicate_key_anywhere_in_the_body(body):
    d = declared(block(body))
    assert (d.malformed, d.asserts, d.pins, d.unsure) == (1, (), (), ())
    assert "duplicate key" in d.problems[0]


@pytest.mark.parametrize(
    ("body", "kind"), [([1, 2], "a list"), ('"x"', "a string"), (3, "a number")]
)
def test_it_rejects_a_body_that_is_not_an_object(body, kind):
    assert declared(block(body)).problems == (f"block 1: body is {kind}, not an object",)


def test_it_rejects_a_bare_slot_body_and_says_to_wrap_it_in_an_op():
    d = declared(block({"current_file": "x.py"}))
    assert (d.malformed, d.asserts) == (1, ())
    assert d.problems == (
        "block 1: no known op in {'current_file'}; put slots under assert, pin, unsure or revoke",
    )


def test_it_rejects_an_unknown_op_beside_known_ones():
    d = declared(block({"current_file": "x.py", "revoke": ["failing_test"]}))
    assert (d.malformed, d.revokes) == (1, ())
    assert d.problems == (
        "block 1: unknown op 'current_file'; the ops are assert, pin, revoke, unsure",
    )


def test_it_rejects_an_empty_object_that_declares_nothing():
    assert declared(block({})).problems == ("block 1: empty object declares nothing",)


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ({"assert": "src:__main__.py"}, "assert must be an object of slot: value, not a string"),
        ({"pin": ["a"]}, "pin must be an object of slot: value, not a list"),
        ({"unsure": None}, "unsure must be an object of slot: value, not null"),
        ({"revoke": {"a": "1"}}, "revoke must be a slot name or a list of them, not an object"),
        ({"revoke": 5}, "revoke must be a slot name or a list of them, not a number"),
        ({"revoke": ["a", None]}, "revoke must list slot names as strings, not null"),
        ({"revoke": ["a", 1]}, "revoke must list slot names as strings, not a number"),
    ],
)
def test_it_rejects_an_op_of_the_wrong_type(body, reason):
    d = declared(block(body))
    assert (d.malformed, d.problems) == (1, (f"block 1: {reason}",))


@pytest.mark.parametrize(("value", "kind"), [({"x": 1}, "an object"), (["a"], "a list")])
def test_it_rejects_an_object_or_list_as_a_slot_value(value, kind):
    d = declared(block({"assert": {"ok": "1", "bad": value}}))
    assert (d.malformed, d.asserts) == (1, ())
    assert d.problems == (f"block 1: assert.'bad' is {kind}; values must be plain strings",)


# --- scalars ---------------------------------------------------------------------


def test_it_keeps_strings_and_spells_numbers_and_booleans_as_json():
    body = '{"assert": {"s": "text", "i": 138, "f": 1.10, "e": 1e400, "t": true, "n": false}}'
    assert declared(block(body)).asserts == (
        ("s", "text"),
        ("i", "138"),
        ("f", "1.10"),  # as written: a version 1.10 must not become 1.1
        ("e", "1e400"),  # as written: not Infinity
        ("t", "true"),
        ("n", "false"),
    )


def test_it_drops_a_null_entry_and_reports_it_not_the_whole_block():
    d = declared(block({"unsure": {"failing_test": None, "current_file": "a.py"}}))
    assert (d.unsure, d.malformed) == ((("current_file", "a.py"),), 0)
    assert d.problems == ("block 1: unsure.'failing_test' is null; dropped",)


def test_it_drops_an_empty_value_and_reports_it():
    d = declared(block({"assert": {"a": "   ", "b": "1"}}))
    assert (d.asserts, d.problems) == ((("b", "1"),), ("block 1: assert.'a' is empty; dropped",))


def test_it_accepts_a_line_break_typed_inside_a_value_and_collapses_it():
    assert declared(block('{"assert": {"a": "two\n   lines"}}')).asserts == (("a", "two lines"),)


# --- keys and values ---------------------------------------------------------------


@pytest.mark.parametrize(
    "key",
    ["DestinationAddress", "destinationAddress", "destination-address", " destination address ",
     "DESTINATION_ADDRESS", "destination__address", "__destination.address__"],
)  # fmt: skip
def test_it_normalises_key_variants_to_one_slot(key):
    assert normalise_key(key) == "destination_address"


@pytest.mark.parametrize(
    ("key", "expected"),
    [("HTTPError", "http_error"), ("line144Code", "line144_code"), (" TOOL_ERROR", "tool_error"),
     ("current_file(pin)", "current_file_pin"), ("café", "caf"), ("日本", "")],
)  # fmt: skip
def test_it_normalises_keys_to_ascii_snake_case(key, expected):
    assert normalise_key(key) == expected


def test_it_caps_keys_at_64_chars_without_a_trailing_underscore():
    assert normalise_key("a" * 63 + "_b" + "c" * 10) == "a" * 63


def test_it_drops_a_key_that_normalises_to_nothing_and_reports_it():
    d = declared(block({"assert": {"!!": "x", "ok": "y"}, "revoke": ["--"]}))
    assert (d.asserts, d.revokes) == ((("ok", "y"),), ())
    assert d.problems == (
        "block 1: assert.'!!': key is empty once normalised; dropped",
        "block 1: revoke '--': key is empty once normalised; dropped",
    )


def test_it_collapses_whitespace_in_values():
    assert declared(block({"assert": {"a": "  12 Oak\tStreet\n Apt 3 "}})).asserts == (
        ("a", "12 Oak Street Apt 3"),
    )


def test_it_keeps_a_long_value_whole_and_cuts_only_an_outsized_one_saying_so():
    # the register caps what the model reads at 512 characters; the value itself is kept,
    # so two values that differ after 512 characters are told apart
    assert declared(block({"assert": {"a": "x" * 600}})).asserts == (("a", "x" * 600),)
    d = declared(block({"assert": {"a": "x" * 9000}}))
    assert d.asserts == (("a", "x" * 8192),)
    assert d.problems == ("block 1: assert.'a' cut from 9000 to 8192 characters",)


def test_a_declared_value_differing_after_512_characters_supersedes_and_is_shown_capped():
    def said(value: str) -> dict:
        return {"role": "assistant", "content": "ok " + block({"assert": {"note": value}})}

    old, new = "x" * 520 + " OLD", "x" * 520 + " NEW"
    messages = [{"role": "user", "content": "go"}, said(old), {"role": "user", "content": "ok"}]
    messages += [said(new), {"role": "user", "content": "thanks"}]
    messages.append({"role": "assistant", "content": "bye"})
    compiled, tel = compile_messages(messages, cache=False)
    assert tel["state"]["note"]["turn"] == 3
    assert tel["reaffirmations"] == 0
    assert [h["superseded_by"] for h in tel["state_history"]["note"]] == [3, None]
    assert tel["state_values_truncated"] == ["note"]
    assert tel["declarations"]["problems"] == []
    assert '…" (turn 3 [declared])' in compiled[0]["content"]


# --- nested, fenced, unterminated, broken ---------------------------------------------


def test_it_applies_only_the_innermost_of_nested_blocks_and_strips_the_wrapper():
    text = "before <contextgc-state>a" + block({"assert": {"x": "1"}}) + "b</contextgc-state> after"
    assert protocol(text) == ("before after", Declaration(asserts=(("x", "1"),), blocks=1))


def test_it_strips_a_block_fenced_as_json_and_removes_the_emptied_fence():
    text = "Intro.\n\n```json\n" + block({"assert": {"x": "1"}}) + "\n```\n\nAfter."
    assert protocol(text) == ("Intro.\n\nAfter.", Declaration(asserts=(("x", "1"),), blocks=1))


def test_it_keeps_a_fence_that_still_holds_code():
    text = "```python\nprint(1)\n" + block({"assert": {"x": "1"}}) + "\n```"
    assert strip_blocks(text) == ("```python\nprint(1)\n```", 1)


def test_it_leaves_fences_of_other_code_blocks_alone():
    text = "```\ncode\n```\n" + block({"assert": {"x": "1"}}) + "\n```\nmore\n```"
    assert strip_blocks(text) == ("```\ncode\n```\n```\nmore\n```", 1)


def test_it_reads_a_fenced_body_inside_the_tags():
    text = '<contextgc-state>\n```json\n{"assert": {"x": "1"}}\n```\n</contextgc-state>'
    assert protocol(text) == ("", Declaration(asserts=(("x", "1"),), blocks=1))


def test_it_removes_a_fence_whose_partner_was_inside_the_block():
    text = '```json\n<contextgc-state>{"assert": {"x": "1"}}\n```</contextgc-state>\nDone.'
    assert protocol(text) == ("Done.", Declaration(asserts=(("x", "1"),), blocks=1))


def test_it_strips_an_unterminated_tag_and_its_json_but_keeps_the_prose():
    text = 'Edited. <contextgc-state>{"assert": {"x": "1"}} and then ran the tests.'
    assert protocol(text) == (
        "Edited. and then ran the tests.",
        Declaration(
            blocks=1,
            malformed=1,
            problems=("block 1: opening tag without a closing tag; not applied",),
        ),
    )


def test_it_treats_a_second_opening_tag_as_a_mistyped_close():
    text = '<contextgc-state>{"assert": {"x": "1"}}<contextgc-state>\nNext.'
    stripped, d = protocol(text)
    assert (stripped, d.blocks, d.malformed, d.asserts) == ("Next.", 1, 1, ())


@pytest.mark.parametrize(
    "opening",
    ['"contextgc-state>', '"contextgc-state":', '"contextgc-state', "<contextgc-state "],
)
def test_it_strips_a_broken_opening_tag_real_models_emit_and_applies_nothing(opening):
    stripped, d = protocol(f'Ok. {opening}{{"assert": {{"x": "1"}}}}</contextgc-state> Next.')
    assert (stripped, d.blocks, d.malformed, d.asserts) == ("Ok. Next.", 1, 1, ())
    assert d.problems[0].startswith("block 1: broken opening tag")


def test_it_leaves_the_tag_name_in_prose_alone():
    text = "Wrap state in a contextgc-state block, e.g. contextgc-state: see docs."
    assert protocol(text) == (text, EMPTY)


def test_it_leaves_the_bare_tag_name_before_an_object_in_prose_alone():
    text = 'The contextgc-state {"assert": {"x": "1"}} form is what the docs show.'
    assert protocol(text) == (text, EMPTY)
    # closed by a tag, the same words are a block with its "<" forgotten: stripped, unapplied
    stripped, d = protocol('Ok. contextgc-state {"assert": {"x": "1"}}</contextgc-state> Next.')
    assert (stripped, d.blocks, d.malformed, d.asserts) == ("Ok. Next.", 1, 1, ())


def test_a_closing_tag_inside_a_value_does_not_end_the_block_and_its_entry_is_dropped():
    value = "wrap it in </contextgc-state> tags"
    text = "Noted. " + block({"assert": {"note": value, "seat": "12A"}}) + " Next."
    stripped, d = protocol(text)
    assert (stripped, d.asserts, d.blocks, d.malformed) == (
        "Noted. Next.",
        (("seat", "12A"),),
        1,
        0,
    )
    assert d.problems == ("block 1: assert.'note' holds a contextgc-state tag; dropped",)


def test_it_strips_a_stray_closing_tag_without_counting_a_block():
    assert strip_blocks("Done.</contextgc-state>") == ("Done.", 0)


def test_it_strips_a_self_closing_tag_without_counting_a_block():
    assert strip_blocks(block({"revoke": "a"}) + "Done. <contextgc-state/>") == ("Done.", 1)


@pytest.mark.parametrize(
    ("opening", "closing"),
    [("<CONTEXTGC-STATE>", "</ContextGC-State>"), ("< contextgc-state >", "< / contextgc-state >"),
     ("<contextgc-state\n>", "</contextgc-state\t>")],
)  # fmt: skip
def test_tags_are_case_insensitive_and_may_hold_whitespace(opening, closing):
    text = f'{opening}{{"assert": {{"x": "1"}}}}{closing}'
    assert protocol(text) == ("", Declaration(asserts=(("x", "1"),), blocks=1))


def test_stripping_that_joins_a_new_tag_strips_that_too():
    text = "<context" + block({"revoke": "a"}) + 'gc-state>{"assert": {"x": "1"}}'
    stripped, d = protocol(text)
    assert (stripped, d.blocks, d.malformed, d.revokes) == ("", 2, 1, ("a",))


def test_nesting_built_to_outlast_the_passes_is_defused():
    text = block({})
    for _ in range(12):  # each pass strips one tag and so joins the next
        text = "<context" + text + "gc-state>"
    stripped, _ = strip_blocks("Kept. " + text)
    assert stripped.startswith("Kept.")
    assert "contextgc-state" not in stripped.lower()
    assert strip_blocks(stripped) == (stripped, 0)


def test_a_tag_inside_a_value_cannot_survive_stripping():
    text = block({"assert": {"x": "<contextgc-state>"}}) + " tail"
    stripped, d = protocol(text)
    assert "contextgc-state" not in stripped
    assert d.asserts == ()


# --- the text the model receives ------------------------------------------------------


def test_a_turn_that_was_only_a_block_becomes_empty():
    assert strip_blocks("  \n" + block({"assert": {"x": "1"}}) + "\n\n") == ("", 1)


def test_it_joins_the_text_around_a_block_without_holes_or_glued_words():
    assert strip_blocks("Hello " + block({}) + " world")[0] == "Hello world"
    assert strip_blocks("Para one." + block({}) + "\n\n" + block({}) + "Para two.")[0] == (
        "Para one.\n\nPara two."
    )
    assert strip_blocks("Answer.\n\n" + block({}) + "\n")[0] == "Answer."


def test_it_keeps_the_indentation_and_line_endings_around_a_block():
    text = "def f():\r\n    " + block({}) + "\r\n    return 1"
    assert strip_blocks(text)[0] == "def f():\r\n    return 1"


def test_text_without_a_block_is_returned_as_is():
    text = "  keeps <b>tags</b>, ```fences``` and trailing space  \n"
    stripped, d = protocol(text)
    assert stripped is text
    assert d is EMPTY


def test_a_turn_without_the_tag_name_returns_at_once():
    text = "x" * 2_000_000
    started = time.perf_counter()
    for _ in range(10):
        protocol(text)
    assert (time.perf_counter() - started) / 10 < 0.02


# --- escaping ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "marker",
    ["[ACTIVE_AGENT_STATE]", "[STATE_REGISTER]", "[STATE_PROTOCOL]", "[/STATE_PROTOCOL]",
     "[DECLARED_INVARIANTS]", "[TOMBSTONE: x]", "[RETIRED_TURN_RECALL turn=1 role=user]",
     "<contextgc-state>", "</contextgc-state>"],
)  # fmt: skip
def test_an_escaped_value_cannot_forge_our_delimiters(marker):
    assert marker not in escape_value(f"ok {marker} ok\n{marker}")


def test_an_escaped_block_is_no_longer_a_block():
    assert strip_blocks(escape_value(block({"assert": {"x": "1"}})))[1] == 0


def test_escape_value_maps_brackets_and_angle_brackets():
    assert escape_value("[a] <b>") == "(a) &lt;b&gt;"


def test_escape_value_turns_every_line_break_into_a_space():
    assert escape_value("a\nb\r\nc\u2028d\x85e") == "a b  c d e"


def test_escape_value_caps_at_512_chars():
    assert len(escape_value("<" * 600)) == 512


# --- the instruction -----------------------------------------------------------------

SHIPPED = ["coding", "travel", "logistics"]


@pytest.mark.parametrize("schema", SHIPPED)
def test_the_instruction_names_every_schema_slot_when_nothing_is_in_state(schema):
    slots = load_schema(schema).slot_names
    text = render_instruction(slots)
    assert all(slot in text for slot in slots)


@pytest.mark.parametrize("schema", SHIPPED)
def test_the_instruction_example_uses_a_real_slot_never_a_placeholder(schema):
    slots = load_schema(schema).slot_names
    example = declared(render_instruction(slots))
    assert example.blocks == 1 and example.malformed == 0
    assert [key for key, _ in example.asserts] == [slots[0]]
    assert '"key"' not in render_instruction(slots)
    assert '"value"' not in render_instruction(slots)


def test_the_instruction_is_wrapped_in_markers_on_their_own_lines():
    lines = render_instruction(["current_file"]).split("\n")
    assert (lines[0], lines[-1]) == (INSTRUCTION_START, INSTRUCTION_END)


def test_the_instruction_covers_the_four_ops_and_the_rules():
    text = render_instruction(["current_file", "failing_test"])
    for phrase in ('"assert"', '"pin"', '"unsure"', '"revoke"', "void", "plain strings",
                   "ONE block", "only what changed"):  # fmt: skip
        assert phrase in text


@pytest.mark.parametrize(
    ("schema", "chars"), [("coding", 616), ("travel", 706), ("logistics", 653)]
)
def test_the_instruction_stays_under_900_chars(schema, chars):
    text = render_instruction(load_schema(schema).slot_names)
    assert (len(text), len(text) // 4) == (chars, chars // 4)  # ~154-176 tokens at chars/4
    assert len(text) < 900


def test_the_instruction_is_deterministic():
    assert render_instruction(["b", "a"]) == render_instruction(("b", "a"))


def test_the_instruction_for_no_slots_is_empty_rather_than_placeholder_keys():
    assert render_instruction([]) == ""
    assert render_instruction(["!!"]) == ""


def test_the_instruction_lists_at_most_max_slots_normalised_and_once_each():
    text = render_instruction(["CabinClass", "cabin_class", "seat", "meal"], max_slots=2)
    assert "(the only keys to use): cabin_class, seat (+1 more)." in text


# --- properties ------------------------------------------------------------------------

FRAGMENTS = st.sampled_from(
    ["<contextgc-state>", "</contextgc-state>", "< CONTEXTGC-STATE >", "<contextgc-state/>",
     "<", ">", "/", "contextgc",
     "-state", "contextgc-state", '"contextgc-state":', '"', "{", "}", "[", "]", ":", ",", "null",
     '{"assert": {"a": "b"}}', '{"revoke": "a"}', '{"a": 1}', "```", "```json", "\n", "\r\n",
     " ", "  ", "x", "text"]
)  # fmt: skip
TAGGY = st.lists(FRAGMENTS | st.text(max_size=5), max_size=40).map("".join)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=10),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=15,
)
OPS = st.dictionaries(
    st.sampled_from(["assert", "pin", "unsure", "revoke", "other"]), JSON, max_size=4
)


@PROPERTY
@given(TAGGY | st.text())
def test_it_never_raises_and_agrees_with_strip_blocks(text):
    stripped, d = protocol(text)
    assert strip_blocks(text) == (stripped, d.blocks)
    assert d.malformed <= d.blocks
    assert protocol(text) == (stripped, d)


@PROPERTY
@given(TAGGY)
def test_stripping_is_idempotent_and_leaves_nothing_a_later_compile_would_parse(text):
    stripped, _ = strip_blocks(text)
    assert strip_blocks(stripped) == (stripped, 0)
    assert protocol(stripped) == (stripped, EMPTY)


@PROPERTY
@given(JSON | OPS, st.text(max_size=10), st.text(max_size=10))
def test_it_never_raises_on_any_json_inside_tags(body, before, after):
    text = before + block(json.dumps(body, allow_nan=True)) + after
    stripped, d = protocol(text)
    assert d.blocks >= 1
    assert strip_blocks(stripped)[1] == 0


@PROPERTY
@given(st.dictionaries(st.text(max_size=10), st.text(max_size=20), max_size=5))
def test_a_well_typed_assert_is_never_malformed(table):
    d = declared(block({"assert": table}))
    assert d.malformed == 0
    assert all(k and len(k) <= 64 and len(v) <= 512 for k, v in d.asserts)


@PROPERTY
@given(st.text())
def test_normalise_key_is_idempotent_bounded_and_snake_case(key):
    once = normalise_key(key)
    assert normalise_key(once) == once
    assert len(once) <= 64
    assert not once or (once[0] != "_" != once[-1] and "__" not in once)
    assert set(once) <= set("abcdefghijklmnopqrstuvwxyz0123456789_")


@PROPERTY
@given(st.text())
def test_an_escaped_value_never_holds_markup_or_a_line_break(value):
    escaped = escape_value(value)
    assert len(escaped) <= 512
    assert not set(escaped) & set("[]<>\n\r\u2028\u2029\x85")
    assert escape_value(escaped) == escaped


# --- real captures ----------------------------------------------------------------------

# Computed by this module over tests/fixtures/captures/ and checked by reading the
# blocks (see PROVENANCE.md). `declared` counts kept key entries (assert, pin and
# unsure entries and revokes) after nulls and malformed blocks are dropped; `off` counts
# those naming no slot of the capture's schema (coding: current_file, failing_test).
CAPTURE_FIGURES = {
    "14b.json": dict(
        turns=42, turns_with_block=42, blocks=42, malformed=1, declared=47, off=2,
        off_keys={"auth_token", "credentials"},
    ),
    "7b-after-vocab-fix.json": dict(
        turns=42, turns_with_block=40, blocks=40, malformed=17, declared=44, off=6,
        off_keys={"asserting_base_provider", "auth_token", "line_144_action", "line_to_check",
                  "line_to_inspect", "turn"},
    ),
    "7b-before-vocab-fix.json": dict(
        turns=42, turns_with_block=42, blocks=42, malformed=17, declared=35, off=24,
        off_keys={"assert_main_py", "asserted_file", "auth_token", "auth_token_in_header",
                  "auth_token_in_request", "auth_token_value", "credentials", "current_file_lines",
                  "full_path_to_main_py", "headers_set", "key", "line_142_auth_token_printed",
                  "line_144_code", "main_py", "search_dir", "src", "tool_command", "tool_error",
                  "unsure", "unsure_current_file", "value"},
    ),
}  # fmt: skip
CAPTURE_FIGURES["run1.json"] = CAPTURE_FIGURES["7b-before-vocab-fix.json"]  # the same 42 turns


def load_capture(name: str) -> dict:
    return json.loads((CAPTURES / name).read_text())


def capture_figures(capture: dict) -> dict:
    slots = set(load_schema(capture["schema"]).slot_names)
    figures = dict(turns=0, turns_with_block=0, blocks=0, malformed=0, declared=0, off=0)
    off_keys = set()
    for turn in capture["turns"]:
        d = declared(turn["content"])
        keys = [k for k, _ in (*d.asserts, *d.pins, *d.unsure)] + list(d.revokes)
        figures["turns"] += 1
        figures["turns_with_block"] += d.blocks > 0
        figures["blocks"] += d.blocks
        figures["malformed"] += d.malformed
        figures["declared"] += len(keys)
        figures["off"] += sum(k not in slots for k in keys)
        off_keys |= {k for k in keys if k not in slots}
    return {**figures, "off_keys": off_keys}


def test_every_capture_in_the_fixtures_has_expected_figures():
    assert sorted(p.name for p in CAPTURES.glob("*.json")) == sorted(CAPTURE_FIGURES)


@pytest.mark.parametrize("name", sorted(CAPTURE_FIGURES))
def test_the_write_path_survives_each_real_capture(name):
    capture = load_capture(name)
    assert capture["schema"] == "coding"
    assert capture_figures(capture) == CAPTURE_FIGURES[name]


@pytest.mark.parametrize("name", sorted(CAPTURE_FIGURES))
def test_no_capture_turn_leaves_our_markup_for_the_model(name):
    for turn in load_capture(name)["turns"]:
        stripped, _ = protocol(turn["content"])
        assert "contextgc-state" not in stripped.lower()
        assert strip_blocks(stripped) == (stripped, 0)


def test_the_14b_capture_drops_nulls_instead_of_storing_the_string_none():
    problems, values = [], []
    for turn in load_capture("14b.json")["turns"]:
        d = declared(turn["content"])
        problems += [p for p in d.problems if p.endswith("is null; dropped")]
        values += [v for _, v in (*d.asserts, *d.pins, *d.unsure)]
    assert len(problems) == 8
    assert "None" not in values and "null" not in values


@pytest.mark.parametrize(
    ("name", "transcript", "index", "expected"),
    [
        ("14b.json", 0, 11, ((), 1, "no known op in {'current_file'}")),
        ("7b-after-vocab-fix.json", 0, 9,
         ((("current_file", "lexicon/lexicon/providers/memset.py"), ("turn", "12")), 0, "")),
        ("7b-after-vocab-fix.json", 3, 5, ((), 1, "assert must be an object")),
        ("7b-after-vocab-fix.json", 5, 3, ((), 1, "broken opening tag")),
        ("7b-before-vocab-fix.json", 0, 9, ((), 1, "invalid JSON: Extra data")),
        ("7b-before-vocab-fix.json", 2, 5, ((), 1, "assert.'revoke' is a list")),
        ("7b-before-vocab-fix.json", 5, 5, ((), 1, "opening tag without a closing tag")),
    ],
)  # fmt: skip
def test_real_capture_turns_read_as_expected(name, transcript, index, expected):
    turns = load_capture(name)["turns"]
    turn = next(
        t for t in turns if t["transcript"].endswith(f":{transcript}") and t["index"] == index
    )
    d = declared(turn["content"])
    asserts, malformed, problem = expected
    assert (d.asserts, d.malformed) == (asserts, malformed)
    assert problem in " ".join(d.problems)


@pytest.mark.parametrize(
    "value",
    ["use <contextgc-state> tags", "use </contextgc-state> tags", "<contextgc-state>" * 3],
)
def test_a_tag_inside_a_value_neither_cuts_the_block_nor_reaches_the_state(value):
    body = json.dumps({"assert": {"note": value, "seat": "12A"}})
    closed = protocol("Noted. <contextgc-state>" + body + "</contextgc-state> Next.")
    unclosed = protocol("Noted. <contextgc-state>" + body + " Next.")
    assert (closed[0], closed[1].asserts, closed[1].malformed) == (
        "Noted. Next.",
        (("seat", "12A"),),
        0,
    )
    assert (unclosed[0], unclosed[1].blocks, unclosed[1].malformed) == ("Noted. Next.", 1, 1)

"""Reading transcripts in every shape: golden files over real slices, then behaviours.

Golden files: ``tests/fixtures/formats/<name>`` beside ``<name>.expected.json``.
Run with ``CONTEXTGC_UPDATE_GOLDEN=1`` to rewrite them after a deliberate change,
then read the diff.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compiler.errors import TranscriptError
from compiler.read.formats import Parsed, formats, formats_many, read_message_list
from compiler.read.messages import ROLES, Message, ToolCall

FIXTURES = Path(__file__).parents[2] / "fixtures" / "formats"
GOLDEN = (
    "nebius-two-blocks.txt",
    "swe-agent-function-calling.traj",
    "swe-agent-humanevalfix.traj",
    "tau-airline-two-records.json",
    "few-shot-airline.jsonl",
)


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def view(found: tuple[tuple[str, Parsed], ...]) -> list[dict]:
    """What a golden file records of ``formats_many`` output."""
    return [
        {
            "id": ident,
            "format": str(parsed.format),
            "meta": dict(parsed.meta),
            "warnings": [str(w) for w in parsed.warnings],
            "messages": [message_view(m) for m in parsed.messages],
        }
        for ident, parsed in found
    ]


def message_view(message: Message) -> dict:
    out = {"line": message.line, "role": message.role, "content": message.content}
    if message.name is not None:
        out["name"] = message.name
    if message.tool_call_id is not None:
        out["tool_call_id"] = message.tool_call_id
    if message.tool_calls:
        out["tool_calls"] = [[c.name, c.arguments, c.id] for c in message.tool_calls]
    return out


def roles(parsed: Parsed) -> list[str]:
    return [m.role for m in parsed.messages]


def notes(parsed: Parsed) -> list[str]:
    return [str(w) for w in parsed.warnings]


# -- golden files over real slices ---------------------------------------------


@pytest.mark.parametrize("name", GOLDEN)
def test_it_reads_each_real_slice_as_its_golden_file(name):
    got = view(formats_many(fixture(name)))
    golden = FIXTURES / f"{name}.expected.json"
    if os.environ.get("CONTEXTGC_UPDATE_GOLDEN"):
        text = json.dumps(got, indent=1, ensure_ascii=False) + "\n"
        golden.write_text(text, encoding="utf-8")
    assert got == json.loads(golden.read_text(encoding="utf-8"))


def test_it_reads_every_role_line_of_the_nebius_slice_as_one_turn():
    text = fixture("nebius-two-blocks.txt")
    role_lines = [line for line in text.split("\n") if line.startswith(("user: ", "assistant: "))]
    found = formats_many(text)
    assert [ident for ident, _ in found] == ["AnalogJ__lexicon-336#3", "AnalogJ__lexicon-336#4"]
    assert sum(len(p.messages) for _, p in found) == len(role_lines) == 28


def test_it_reads_a_single_nebius_block_pasted_alone():
    block = fixture("nebius-two-blocks.txt").split("\n---\n")[1].strip()
    parsed = formats(block)
    assert dict(parsed.meta) == {"id": "AnalogJ__lexicon-336#4", "model": "swe-agent-llama-70b"}
    assert len(parsed.messages) == 14
    assert parsed.warnings == ()


def test_it_reads_every_swe_agent_history_entry_with_its_content():
    text = fixture("swe-agent-humanevalfix.traj")
    history = json.loads(text)["history"]
    parsed = formats(text)
    assert [(m.role, m.content) for m in parsed.messages] == [
        (h["role"], h["content"]) for h in history
    ]
    assert parsed.format == "swe-agent"


def test_it_reads_every_tau_bench_message_with_its_calls():
    text = fixture("tau-airline-two-records.json")
    records = json.loads(text)
    found = formats_many(text)
    for (_, parsed), record in zip(found, records, strict=True):
        assert [(m.role, m.content) for m in parsed.messages] == [
            (t["role"], t["content"]) for t in record["traj"]
        ]
        assert parsed.record is record or parsed.record == record


# -- plain text ----------------------------------------------------------------


def test_it_reads_role_lines_as_turns():
    parsed = formats("user: hi\nassistant: hello\nsystem: be brief")
    assert [(m.role, m.content, m.line) for m in parsed.messages] == [
        ("user", "hi", 1),
        ("assistant", "hello", 2),
        ("system", "be brief", 3),
    ]


@pytest.mark.parametrize(
    ("word", "role"),
    [
        ("Human", "user"),
        ("you", "user"),
        ("Customer", "user"),
        ("AI", "assistant"),
        ("bot", "assistant"),
        ("model", "assistant"),
        ("Agent", "assistant"),
        ("function", "tool"),
        ("tool_output", "tool"),
        ("Observation", "tool"),
    ],
)
def test_it_maps_role_words_to_roles(word, role):
    assert roles(formats(f"{word}: x")) == [role]


def test_it_strips_the_two_space_continuation_indent():
    parsed = formats("user: look\n  def f():\n      return 1\n  \n  done")
    assert parsed.messages[0].content == "look\ndef f():\n    return 1\n\ndone"


def test_it_keeps_indentation_when_not_every_continuation_line_has_it():
    parsed = formats("user: look\n  indented\nnot indented")
    assert parsed.messages[0].content == "look\n  indented\nnot indented"


def test_it_keeps_blank_lines_inside_a_turn_and_trims_them_at_the_ends():
    parsed = formats("user:\n\nfirst\n\n\nsecond\n\nassistant: ok")
    assert parsed.messages[0].content == "first\n\n\nsecond"


def test_it_reads_markdown_bold_role_labels():
    parsed = formats("**User:** hi\n**Assistant**: hello")
    assert [(m.role, m.content) for m in parsed.messages] == [
        ("user", "hi"),
        ("assistant", "hello"),
    ]


def test_it_reads_decorated_role_lines_when_no_turn_starts_at_column_zero():
    parsed = formats("> user: hi\n> assistant: hello\n- user: bye")
    assert [(m.role, m.content) for m in parsed.messages] == [
        ("user", "hi"),
        ("assistant", "hello"),
        ("user", "bye"),
    ]


def test_it_does_not_split_a_turn_at_an_indented_role_word():
    parsed = formats("user: config\n  model: gpt-4\n- agent: x\nassistant: ok")
    assert [(m.role, m.content) for m in parsed.messages] == [
        ("user", "config\n  model: gpt-4\n- agent: x"),
        ("assistant", "ok"),
    ]


def test_it_sets_the_name_from_a_bracketed_label():
    parsed = formats('assistant: checking\ntool [inventory]: {"left": 3}')
    expected = Message("tool", '{"left": 3}', name="inventory", tool_call_id="call_2", line=2)
    assert parsed.messages[1] == expected


def test_it_warns_once_about_text_before_the_first_turn():
    parsed = formats("Exported chat\nby someone\n\nmore\nuser: hi")
    assert notes(parsed) == ["line 1: text before the first turn ignored (lines 1-4)"]


def test_it_does_not_warn_about_comment_lines_before_the_first_turn():
    assert formats("# a header\n# another\n\nuser: hi").warnings == ()


def test_it_drops_an_empty_turn_with_a_warning():
    parsed = formats("user: hi\nassistant:\n\nuser: still there?")
    assert roles(parsed) == ["user", "user"]
    assert notes(parsed) == ["line 2: empty assistant turn dropped"]


def test_it_keeps_an_empty_tool_turn_so_its_call_keeps_an_answer():
    parsed = formats("assistant: None\ntool: \nassistant: done")
    assert [(m.role, m.content) for m in parsed.messages] == [
        ("assistant", None),
        ("tool", ""),
        ("assistant", "done"),
    ]
    assert parsed.warnings == ()


def test_it_keeps_a_markdown_rule_inside_a_turn():
    parsed = formats("assistant: part one\n---\npart two")
    assert parsed.messages[0].content == "part one\n---\npart two"


def test_a_rule_and_a_heading_inside_a_headed_transcript_split_nothing():
    # "# Plan (v2)" has the shape of a transcript header, but no turn follows it
    text = "# repo-1#0 (gpt-4o)\nuser: fix it\nassistant: My plan.\n---\n# Plan (v2)\n1. edit"
    text += "\nuser: go ahead\nassistant: done"
    [(ident, parsed)] = formats_many(text)
    assert ident == "repo-1#0" and parsed.warnings == ()
    assert [m.line for m in parsed.messages] == [2, 3, 7, 8]
    assert parsed.messages[1].content == "My plan.\n---\n# Plan (v2)\n1. edit"


@pytest.mark.parametrize("newline", ["\r\n", "\r"])
def test_it_reads_crlf_and_cr_line_endings(newline):
    parsed = formats(newline.join(["user: hi", "  there", "assistant: ok"]))
    assert [(m.content, m.line) for m in parsed.messages] == [("hi\nthere", 1), ("ok", 3)]


def test_it_reads_the_first_of_several_transcripts_and_warns_about_the_rest():
    parsed = formats(fixture("nebius-two-blocks.txt"))
    assert dict(parsed.meta)["id"] == "AnalogJ__lexicon-336#3"
    assert [w.message for w in parsed.warnings] == [
        "1 further transcript(s) ignored (next: AnalogJ__lexicon-336#4);"
        " read them with formats_many"
    ]


def test_a_malformed_record_after_the_second_is_named_though_its_transcript_is_ignored():
    record = {"task_id": 1, "traj": [{"role": "user", "content": "a"}]}
    lines = [json.dumps(record), json.dumps({**record, "task_id": 2}), '{"task_id": 3, "traj": [']
    parsed = formats("\n".join(lines))
    assert [m.content for m in parsed.messages] == ["a"]
    assert [(w.line, w.message.split(" (")[0]) for w in parsed.warnings] == [
        (2, "1 further transcript(s) ignored"),
        (3, "not valid JSON"),
    ]


# -- display text --------------------------------------------------------------


def test_it_reads_assistant_none_as_a_call_to_an_unrecorded_tool():
    parsed = formats(json.dumps({"messages_display": "user: hi\nassistant: None\ntool: ok"}))
    assert parsed.messages[1] == Message(
        "assistant", None, tool_calls=(ToolCall(name="", arguments="", id="call_3"),), line=1
    )
    assert (parsed.messages[2].role, parsed.messages[2].tool_call_id) == ("tool", "call_3")
    assert parsed.format == "display"


def test_it_gives_an_assistant_one_call_per_following_tool_turn():
    parsed = formats("assistant: Let me check.\ntool [a]: 1\ntool: 2\nassistant: done")
    assert parsed.messages[0].tool_calls == (
        ToolCall("a", "", "call_2"),
        ToolCall("", "", "call_3"),
    )
    assert [m.tool_call_id for m in parsed.messages[1:3]] == ["call_2", "call_3"]
    assert parsed.messages[3].tool_calls == ()
    assert parsed.warnings == ()


def test_it_warns_of_a_call_no_turn_answers_and_an_answer_to_no_call():
    # the chat API refuses both; the specification's own example has the second
    text = "user: deliver ORD-1\ntool [inventory]: {}\nassistant: None\nuser: ?"
    parsed = formats(text)
    assert parsed.messages[1].tool_call_id is None
    assert parsed.messages[2].tool_calls == (ToolCall("", "", "call_3"),)
    assert notes(parsed) == [
        "line 2: a tool turn that follows no assistant turn answers no call",
        "line 3: assistant: None with no tool turn after it: its call is unanswered",
    ]


def test_it_names_the_display_line_in_warnings_from_inside_a_record():
    text = '{"messages_display": "user: hi\\nuser:\\nassistant: ok"}'
    assert notes(formats(text)) == ["line 1: messages_display line 2: empty user turn dropped"]


# -- JSON ----------------------------------------------------------------------


def test_it_reads_a_json_array_of_messages():
    parsed = formats('[{"role": "user", "content": "hi"}, {"role": "assistant", "content": null}]')
    assert [(m.role, m.content) for m in parsed.messages] == [("user", "hi"), ("assistant", None)]
    assert parsed.format == "messages"


def test_it_reads_the_real_line_of_each_element_in_pretty_printed_json():
    items = [{"role": "user", "content": "a\nb"}, {"role": "assistant", "content": "c"}]
    parsed = formats("\n" + json.dumps({"messages": items}, indent=2))
    assert [m.line for m in parsed.messages] == [4, 8]


def test_it_names_the_index_in_warnings_for_one_line_json():
    parsed = formats('[{"role": "user", "content": "hi"}, 3, {"role": "critic", "content": "x"}]')
    assert notes(parsed) == [
        "line 1: messages[1] is a number, not a message object; skipped",
        "line 1: messages[2]: unknown role 'critic' read as user",
    ]


def test_it_reads_a_single_message_object():
    assert roles(formats('{"role": "developer", "content": "rules"}')) == ["system"]


def test_it_keeps_swe_agent_tool_output_under_user():
    assert roles(formats(fixture("swe-agent-humanevalfix.traj")))[:4] == [
        "system",
        "user",
        "assistant",
        "user",
    ]


def test_it_links_a_swe_agent_tool_answer_to_its_call():
    parsed = formats(fixture("swe-agent-function-calling.traj"))
    call, answer = parsed.messages[2], parsed.messages[3]
    assert answer.tool_call_id == call.tool_calls[0].id == "call_PbWErNIge3YTrli3fiVvmIid"


def test_it_reads_a_tau_bench_record_with_its_meta_and_raw_record():
    traj = [{"role": "user", "content": "hi"}]
    record = {"task_id": 7, "trial": 2, "reward": 1.0, "info": {"k": 1}, "traj": traj}
    parsed = formats(json.dumps(record))
    assert dict(parsed.meta) == {"task_id": "7", "trial": "2", "reward": "1.0"}
    assert parsed.record["info"] == {"k": 1}
    assert parsed.format == "tau-bench"


def test_it_falls_back_to_text_on_invalid_json_with_a_positioned_warning():
    parsed = formats('{"messages": [\nuser: hi')
    assert roles(parsed) == ["user"]
    assert notes(parsed)[0].startswith("line 2: not valid JSON (Expecting value, column 1)")


def test_it_raises_at_the_json_error_position_when_broken_json_has_no_turn():
    with pytest.raises(TranscriptError) as caught:
        formats('[{"role": "user",\n  "content": }]')
    assert (caught.value.line, caught.value.column) == (2, 14)
    assert "not valid JSON" in str(caught.value.warnings[0])


def test_it_raises_for_a_json_object_without_messages():
    with pytest.raises(TranscriptError) as caught:
        formats('{"HAT001": {"origin": "PHL"}}')
    assert "none of the keys" in caught.value.warnings[0].message


# -- JSONL ---------------------------------------------------------------------


def test_it_reads_jsonl_messages_and_skips_bad_lines_by_number():
    text = '{"role": "user", "content": "hi"}\n{"role": \n\n{"role": "ai", "content": "yo"}\n'
    parsed = formats(text)
    assert [(m.role, m.line) for m in parsed.messages] == [("user", 1), ("assistant", 4)]
    assert notes(parsed) == [
        "line 2: not valid JSON (Expecting value, column 10); line skipped",
        "line 4: this line: role 'ai' is written out as 'assistant'",
    ]
    assert parsed.format == "jsonl"


def test_it_reads_jsonl_records_as_separate_transcripts():
    found = formats_many(fixture("few-shot-airline.jsonl"))
    assert [ident for ident, _ in found] == ["line1", "line2"]
    assert {str(p.format) for _, p in found} == {"display"}


# -- read_message_list ---------------------------------------------------------


def test_it_maps_role_aliases_in_message_lists():
    items = [{"role": r, "content": "x"} for r in ("function", "developer", "human", "ai", "bot")]
    assert roles(read_message_list(items)) == ["tool", "system", "user", "assistant", "assistant"]


def test_it_reads_unknown_and_missing_roles_as_user_with_a_warning():
    parsed = read_message_list([{"role": "narrator", "content": "x"}, {"content": "y"}])
    assert roles(parsed) == ["user", "user"]
    assert notes(parsed) == [
        "line 1: messages[0]: unknown role 'narrator' read as user",
        "line 2: messages[1]: no role; read as user",
    ]


def test_it_skips_non_dict_items_naming_their_index():
    parsed = read_message_list(["hi", None, {"role": "user", "content": "ok"}])
    assert notes(parsed) == [
        "line 1: messages[0] is a string, not a message object; skipped",
        "line 2: messages[1] is null, not a message object; skipped",
    ]
    assert [m.line for m in parsed.messages] == [3]


def test_it_keeps_null_content_tool_calls_tool_call_id_and_name():
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    parsed = read_message_list(
        [
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c1", "name": "f", "content": "1"},
        ]
    )
    assert parsed.messages == (
        Message("assistant", None, tool_calls=(ToolCall("f", "{}", "c1"),), line=1),
        Message("tool", "1", name="f", tool_call_id="c1", line=2),
    )


def test_it_numbers_list_items_from_base_line():
    parsed = read_message_list([{"role": "user", "content": "a"}] * 2, base_line=10)
    assert [m.line for m in parsed.messages] == [10, 11]


def test_it_reads_an_old_style_function_call():
    item = {"role": "assistant", "content": None, "function_call": {"name": "f", "arguments": {}}}
    assert read_message_list([item]).messages[0].tool_calls == (ToolCall("f", "{}"),)


def test_it_keeps_a_message_whose_content_json_cannot_hold():
    parsed = read_message_list([{"role": "user", "content": {1: "a", "b": 2}}])
    assert parsed.messages[0].content is None
    assert "unreadable" in notes(parsed)[0]


# -- formats_many ----------------------------------------------------------------


def test_it_ids_tau_records_by_task_and_trial():
    found = formats_many(fixture("tau-airline-two-records.json"))
    assert [ident for ident, _ in found] == ["task0-trial0", "task1-trial0"]
    assert found[0][1].record["info"]["task"]["actions"][0]["name"] == "book_reservation"


def test_it_moves_the_warning_of_a_skipped_record_to_the_transcript_before_it():
    text = json.dumps([{"traj": [{"role": "user", "content": "a"}]}, 5, {"traj": []}])
    found = formats_many(text)
    assert [ident for ident, _ in found] == ["record0"]
    assert [w.message for w in found[0][1].warnings] == [
        "[1] is not a transcript record (no messages, traj or history); skipped",
        "record2: no message",
    ]


def test_it_makes_repeated_ids_distinct():
    text = "# a#1 (m)\nuser: x\n---\n# a#1 (m)\nuser: y\n"
    assert [ident for ident, _ in formats_many(text)] == ["a#1", "a#1~2"]


@pytest.mark.parametrize("text", ["", "   \n\t\n", "Just some prose.\nNo turns here."])
def test_it_raises_at_line_one_column_one_when_text_holds_no_turn(text):
    with pytest.raises(TranscriptError) as caught:
        formats(text)
    assert (caught.value.line, caught.value.column) == (1, 1)


# -- properties ------------------------------------------------------------------

FRAGMENTS = st.sampled_from(
    [
        "user: hi",
        "assistant: None",
        "tool [x]: ",
        "---",
        "# a#1 (m)",
        "  model: x",
        "**User:** yo",
        "{",
        "[",
        "]",
        '{"role": "user", "content": "x"}',
        '{"messages_display": "user: a"}',
        "\r\n",
        "\r",
        "\n",
        "\x00",
        "\ufeff",
        "ſystem: x",
    ]
)
ANY_TEXT = st.one_of(st.text(), st.lists(st.one_of(FRAGMENTS, st.text())).map("".join))
LINE = st.text(st.characters(blacklist_characters="\r\n"))
KEYS = (
    *("role", "content", "messages", "traj", "history", "messages_display"),
    *("tool_calls", "function", "name", "arguments", "tool_call_id", "task_id"),
)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=5), inner, max_size=5)
    ),
    max_leaves=20,
)
PROPERTY = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPERTY
@given(ANY_TEXT)
def test_it_raises_nothing_but_transcript_error_and_reads_the_same_text_the_same_way(text):
    try:
        first = formats(text)
    except TranscriptError:
        with pytest.raises(TranscriptError):
            formats(text)
        return
    assert first.messages
    assert formats(text) == first


@PROPERTY
@given(st.lists(JSON_VALUES, max_size=4), st.sampled_from(["array", "pretty", "jsonl"]))
def test_it_reads_json_and_jsonl_documents_into_known_roles_or_raises_transcript_error(
    values, layout
):
    if layout == "jsonl":
        text = "\n".join(json.dumps(value) for value in values)
    else:
        text = json.dumps(values, indent=2 if layout == "pretty" else None)
    try:
        found = formats_many(text)
    except TranscriptError:
        return
    assert all(m.role in ROLES for _, parsed in found for m in parsed.messages)


@PROPERTY
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["user", "Assistant", "tool", "system", "AI", "tool [x]"]),
            LINE,
            st.lists(LINE.map(lambda line: "  " + line), max_size=3),
        ),
        min_size=1,
    )
)
def test_it_accounts_for_every_turn(turns):
    text = "\n".join(
        f"{role}: {first}" + "".join("\n" + c for c in more) for role, first, more in turns
    )
    # a turn line is read as a message, dropped as empty, or read as text of the turn
    # above (another word for a role already speaking); each of the last two is warned of
    told = ("turn dropped", "read as text of the turn above")
    try:
        parsed = formats(text)
    except TranscriptError as error:
        dropped = sum(any(t in w.message for t in told) for w in error.warnings)
        assert dropped == len(turns)
        return
    dropped = sum(any(t in w.message for t in told) for w in parsed.warnings)
    assert len(parsed.messages) + dropped == len(turns)


@PROPERTY
@given(st.lists(JSON_VALUES | st.dictionaries(st.just("role"), JSON_VALUES)))
def test_it_reads_any_list_without_raising_and_accounts_for_every_item(items):
    parsed = read_message_list(items)
    skips = ("not a message object", "no role, content or tool call; skipped")
    skipped = sum(any(skip in w.message for skip in skips) for w in parsed.warnings)
    assert len(parsed.messages) + skipped == len(items)
    assert read_message_list(items) == parsed


def test_brackets_nested_deeper_than_the_json_parser_goes_are_speech_not_a_crash():
    from compiler import compile_messages, compile_transcript

    out, _, warnings = compile_transcript("user: " + "[" * 5000 + "\nassistant: ok")
    assert [m["role"] for m in out] == ["user", "assistant"] and warnings == []
    deep = "[" * 5000 + "]" * 5000
    out, tel = compile_messages([{"role": "user", "content": deep}, {"role": "assistant"}])
    assert out[0]["content"] == deep and tel["tool_payloads_compacted"] == 0


def test_turn_lines_with_pasted_message_lines_are_read_as_text_losing_no_line():
    pasted = '{"role": "user", "content": "c"}\n{"role": "assistant", "content": "d"}\n' * 2
    pasted = pasted.rstrip("\n")  # more lines open an object than not
    parsed = formats(f"user: a\nassistant: b\n{pasted}")
    assert [(m.role, m.content) for m in parsed.messages] == [
        ("user", "a"),
        ("assistant", f"b\n{pasted}"),
    ]
    assert parsed.warnings == ()


def test_jsonl_with_a_line_that_is_not_an_object_skips_that_line_with_its_number():
    text = (
        "# export v1\n"
        '{"role": "user", "content": "hi"}\n'
        "not json either\n"
        '{"role": "assistant", "content": "ok"}\n'
        '{"role": "user", "content": "bye"}\n'
    )
    parsed = formats(text)
    assert [m.role for m in parsed.messages] == ["user", "assistant", "user"]
    assert [w.line for w in parsed.warnings] == [1, 3]
    assert all("line skipped" in w.message for w in parsed.warnings)


def test_a_text_transcript_whose_tool_output_is_json_rows_stays_a_text_transcript():
    rows = "\n".join(json.dumps({"id": i, "status": "ok"}) for i in range(6))
    text = (
        "user: check the orders\nassistant: calling the db\ntool [db]:\n"
        f"{rows}\nassistant: all six are ok\nuser: thanks"
    )
    parsed = formats(text)
    assert [m.role for m in parsed.messages] == ["user", "assistant", "tool", "assistant", "user"]
    assert parsed.messages[2].content == rows
    assert parsed.warnings == ()


def test_a_text_transcript_with_a_json_line_stays_a_text_transcript():
    parsed = formats('user: look\n{"a": 1}\nassistant: ok')
    assert [m.role for m in parsed.messages] == ["user", "assistant"]


def test_it_reports_a_record_key_held_twice_since_only_the_last_value_is_read():
    first = '{"role": "user", "content": "book it"}'
    later = '{"role": "user", "content": "cancel it"}'
    text = f'[{{"traj": [{first}],\n  "reward": 1,\n  "traj": [{later}]}},\n {{"traj": [{first}]}}]'
    found = formats_many(text)
    assert [m.content for m in found[0][1].messages] == ["cancel it"]
    assert [(w.line, w.message) for w in found[0][1].warnings] == [
        (1, "[0] holds the key 'traj' 2 times; only the last was read")
    ]
    assert found[1][1].warnings == ()  # a record with the key once says nothing


def test_a_record_with_two_transcript_keys_says_which_one_went_unread():
    a, b = '{"role": "user", "content": "a"}', '{"role": "user", "content": "b"}'
    parsed = formats(f'{{"messages": [{a}],\n "traj": [{b}, {b}]}}')
    assert [m.content for m in parsed.messages] == ["a"]
    assert [(w.line, w.message) for w in parsed.warnings] == [
        (1, "the object also holds 'traj', another transcript key; only 'messages' was read")
    ]


def test_it_reports_a_repeated_key_even_when_the_last_value_holds_no_turn():
    text = '{"messages": [{"role": "user", "content": "a"}], "messages": []}'
    with pytest.raises(TranscriptError) as caught:
        formats(text)
    assert "the object holds the key 'messages' 2 times; only the last was read" in [
        w.message for w in caught.value.warnings
    ]


def test_the_error_for_text_without_a_turn_names_the_first_warning_and_keeps_the_reason_bare():
    with pytest.raises(TranscriptError) as caught:
        formats('[{"role": "user", "content": "hi",]')
    error = caught.value
    first = "line 1: not valid JSON (Expecting property name enclosed in double quotes, column 35)"
    assert (
        str(error)
        == f"no recognisable turn (line 1, column 35); first warning: {first}; read as text"
    )
    assert error.reason == "no recognisable turn"  # the site shows the warnings beside it
    assert str(error.warnings[0]) == f"{first}; read as text"


def test_another_word_for_a_role_already_speaking_is_text_of_the_turn_above():
    # a quoted form, not two new speakers: "Customer:" had become a user turn
    text = (
        "user: who is on the ticket?\nassistant: The ticket lists:\nCustomer: John Smith\n"
        "Agent: Mary Jones\nuser: thanks"
    )
    parsed = formats(text)
    assert [(m.role, m.content) for m in parsed.messages] == [
        ("user", "who is on the ticket?"),
        ("assistant", "The ticket lists:\nCustomer: John Smith\nAgent: Mary Jones"),
        ("user", "thanks"),
    ]
    assert notes(parsed) == [
        "line 3: 'Customer:' read as text of the turn above; this transcript's turns use 'user:'",
        "line 4: 'Agent:' read as text of the turn above; this transcript's turns use 'assistant:'",
    ]


def test_a_transcript_written_with_other_words_for_its_roles_reads_them_as_turns():
    parsed = formats("Customer: my order?\nAgent: shipped\nModel: Model 3")
    assert [(m.role, m.content) for m in parsed.messages] == [
        ("user", "my order?"),
        ("assistant", "shipped\nModel: Model 3"),
    ]
    assert notes(parsed) == [
        "line 3: 'Model:' read as text of the turn above; this transcript's turns use 'agent:'"
    ]
    assert formats("Human: hi\nAI: hello\nHuman: bye").warnings == ()


def test_bytes_are_read_as_utf8_and_anything_else_is_refused_with_a_reason():
    assert [m.content for m in formats("user: café".encode()).messages] == ["café"]
    with pytest.raises(TranscriptError) as caught:
        formats(b"user: ok\nassistant: \xff")
    assert (caught.value.reason, caught.value.line, caught.value.column) == (
        "not UTF-8 text (byte 20: invalid start byte)",
        2,
        12,
    )
    for value in (None, 5, ["user: hi"]):
        with pytest.raises(TranscriptError, match="a transcript is text"):
            formats(value)


@pytest.mark.parametrize("newline", [b"\n", b"\r\n", b"\r"])
def test_a_bad_byte_is_placed_by_lines_as_the_text_is_read_and_columns_in_characters(newline):
    with pytest.raises(TranscriptError) as caught:
        formats(newline.join([b"user: hi", b"assistant: caf\xc3\xa9 \xff"]))
    assert (caught.value.line, caught.value.column) == (2, 17)


def test_a_message_the_chat_api_would_refuse_is_kept_and_warned_of():
    call = {"role": "assistant", "content": None, "tool_calls": [{"id": "a"}, 5]}
    parsed = read_message_list(
        [{"role": "user"}, {"role": "assistant", "content": None, "tool_calls": "ls"}, call]
    )
    assert [m.role for m in parsed.messages] == ["user", "assistant", "assistant"]
    assert notes(parsed) == [
        "line 1: messages[0]: no content and no tool call",
        "line 2: messages[1]: tool_calls is a string, not an array of calls; none read",
        "line 2: messages[1]: no content and no tool call",
        "line 3: messages[2]: tool_calls[0] names no function",
        "line 3: messages[2]: tool_calls[1] is a number, not a call; skipped",
    ]
    fine = {"role": "assistant", "content": None, "tool_calls": [{"function": {"name": "ls"}}]}
    assert read_message_list([fine]).warnings == ()


def test_a_key_holding_the_wrong_type_is_named_in_the_warning():
    with pytest.raises(TranscriptError) as caught:
        formats('{"messages": null}')
    assert [w.message for w in caught.value.warnings] == [
        "the object's 'messages' is null, not an array; no messages"
    ]


@pytest.mark.parametrize("mark", ["\ufeff", "\u200b", "\u2060"])
def test_an_invisible_mark_before_a_role_word_does_not_hide_the_turn(mark):
    # two files saved with a byte-order mark and joined with cat: the second file's first
    # turn is a turn of its own, not text of the turn above
    text = f"{mark}user: Deliver to 402 Oak Street.\n{mark}assistant: Rerouted.\nuser: thanks"
    parsed = formats(text)
    assert [(m.role, m.content, m.line) for m in parsed.messages] == [
        ("user", "Deliver to 402 Oak Street.", 1),
        ("assistant", "Rerouted.", 2),
        ("user", "thanks", 3),
    ]
    assert parsed.warnings == ()


def test_a_jsonl_line_opening_with_a_byte_order_mark_is_read():
    text = '\ufeff{"role":"user","content":"a"}\n\ufeff{"role":"assistant","content":"b"}'
    parsed = formats(text)
    assert [(m.role, m.content) for m in parsed.messages] == [("user", "a"), ("assistant", "b")]
    assert parsed.warnings == ()


def test_a_markdown_rule_before_a_heading_with_parentheses_does_not_split_the_transcript():
    # '# Summary (draft)' is shaped like a nebius header, yet the rule above it does not
    # end the transcript nor make the turns after it another one
    text = "user: plan it\nassistant: Plan below.\n---\n# Summary (draft)\n- ship v2\n"
    text += "user: Thanks. Deliver to 900 Pine Avenue.\nassistant: Will do."
    found = formats_many(text)
    assert len(found) == 1
    assert [m.role for m in found[0][1].messages] == ["user", "assistant", "user", "assistant"]
    assert found[0][1].messages[1].content == "Plan below.\n---\n# Summary (draft)\n- ship v2"


def test_a_rule_between_two_headed_transcripts_still_splits_them():
    # control: the nebius layout, each transcript under its own header
    text = "# a#0 (m1)\nuser: hi\n---\n# Summary (draft)\nuser: yo\n"
    assert [i for i, _ in formats_many(text)] == ["a#0", "Summary"]


def test_a_heading_inside_a_turn_does_not_make_a_later_rule_split_the_transcript():
    # a header-shaped line splits a transcript only before the block's first turn, not
    # anywhere in the block
    text = "user: write the summary\nassistant: Here it is:\n# Summary (draft)\nThe build passes.\n"
    text += "---\n# Details (v2)\nThe cache is warm.\nuser: thanks\nassistant: welcome"
    found = formats_many(text)
    assert len(found) == 1
    assert [m.role for m in found[0][1].messages] == ["user", "assistant", "user", "assistant"]


@pytest.mark.parametrize("glued", ["assistant:b", "Assistant :b", "system:—x"])
def test_a_role_line_without_a_space_after_its_colon_is_text_and_said_to_be(glued):
    parsed = formats(f"user: a\n{glued}\nuser: c")
    assert [m.content for m in parsed.messages] == [f"a\n{glued}", "c"]
    assert [(w.line, w.message.split(";")[0]) for w in parsed.warnings] == [
        (2, f"'{glued}' read as text of the turn above")
    ]


def test_a_tool_turn_quoting_such_a_line_is_not_warned_of():
    parsed = formats("user: log in\nassistant: None\ntool: user:admin\nassistant: done")
    assert parsed.warnings == ()


def test_json_messages_above_role_lines_are_named_as_messages_in_the_warning():
    first = json.dumps({"role": "user", "content": "a"})
    parsed = formats(f"{first}\n{first}\nuser: c")
    assert [m.content for m in parsed.messages] == ["c"]
    assert (1, "text before the first turn ignored (lines 1-2; 2 lines hold JSON messages") in [
        (w.line, w.message.split(":")[0]) for w in parsed.warnings
    ]


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ('[{"role": "user", "content": "first", "content": "second"}]', "messages[0]"),
        ('{"role": "user", "content": "first", "content": "second"}', "the object"),
        (
            '{"task_id": 1, "traj": [{"role": "user", "content": "first", "content": "second"}]}',
            "traj[0]",
        ),
        (
            '{"role": "user", "content": "first", "content": "second"}\n'
            '{"role": "assistant", "content": "ok"}',
            "this line",
        ),
    ],
)
def test_a_key_a_message_gives_twice_is_warned_of_with_its_line(text, where):
    parsed = formats(text)
    assert parsed.messages[0].content == "second"  # json keeps the last
    assert (1, f"{where} holds the key 'content' 2 times; only the last was read") in [
        (w.line, w.message) for w in parsed.warnings
    ]


def test_a_key_named_inside_a_message_is_not_a_repeat():
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"role": 1}'}}
    messages = [
        {"role": "user", "content": "a"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": '{"content": "x"}'},
    ]
    assert formats(json.dumps(messages)).warnings == ()


@pytest.mark.parametrize(
    ("literal", "why"),
    [
        ("1e999", "1e999 is too large to read: it would be Infinity"),
        ("-1e999", "-1e999 is too large to read: it would be -Infinity"),
        ("NaN", "NaN is not a JSON number"),
        ("-Infinity", "-Infinity is not a JSON number"),
    ],
)
def test_a_json_transcript_holding_a_number_json_cannot_hold_is_refused_at_its_line(literal, why):
    """Read, the number would become Infinity or NaN and come back out as null."""
    text = '[{"role": "user", "content": "hi"},\n{"role": "user", "content": "x", "n": '
    text += literal + "}]"
    with pytest.raises(TranscriptError) as raised:
        formats(text)
    assert (raised.value.line, raised.value.column) == (2, 39)
    assert f"line 2: not valid JSON ({why}, column 39); read as text" in str(raised.value)

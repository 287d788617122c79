"""Compiled output the chat API accepts: every tool message answers a call of the
assistant turn before it, and every call is answered, whatever shape the input came in."""

from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler import compile_messages, compile_transcript, load_schema
from compiler.read.formats import formats_many
from compiler.read.messages import Message, ToolCall, message_to_dict
from compiler.read.pairing import unpaired
from tests.invariants import unpaired_calls

FORMATS = Path(__file__).parents[2] / "fixtures" / "formats"
SLICES = sorted(
    p.name for p in FORMATS.iterdir() if p.suffix in {".traj", ".jsonl", ".json", ".txt"}
)
SLICES = [name for name in SLICES if not name.endswith(".expected.json")]


def test_the_check_finds_what_the_api_refuses():
    call = {"role": "assistant", "content": None, "tool_calls": [{"id": "a"}, {"id": "b"}]}
    a, b = {"role": "tool", "tool_call_id": "a"}, {"role": "tool", "tool_call_id": "b"}
    assert unpaired_calls([call, a]) == ["the history ends before an answer to ['b']"]
    assert unpaired_calls([call, a, {"role": "user"}, b]) == [
        "[2] comes before an answer to ['b']",
        "[3] answers no open call ('b')",
    ]
    assert unpaired_calls([{"role": "user"}, {"role": "tool"}]) == [
        "[1] answers no open call (None)"
    ]
    assert unpaired_calls([call, a, b]) == []
    nameless = {"role": "assistant", "content": None, "tool_calls": [{"id": None}]}
    assert unpaired_calls([nameless, {"role": "tool"}]) == [
        "[1] answers no open call (None)",
        "the history ends before an answer to [None]",
    ]


@pytest.mark.parametrize("mode", ["compact", "cache_friendly"])
@pytest.mark.parametrize("name", SLICES)
def test_every_real_slice_compiles_to_calls_and_answers_that_pair(name, mode):
    schema = load_schema("coding" if "swe" in name or "nebius" in name else "travel")
    text = (FORMATS / name).read_text(encoding="utf-8")
    out, _, _ = compile_transcript(text, schema=schema, mode=mode)
    assert unpaired_calls(out) == []
    for _, parsed in formats_many(text):  # every transcript the file holds, as a list
        items = [message_to_dict(m) for m in parsed.messages]
        out, _ = compile_messages(items, schema=schema, mode=mode, cache=False)
        assert unpaired_calls(out) == []


# -- what the reader warns of ------------------------------------------------------------


def test_json_calls_and_answers_that_do_not_pair_are_kept_and_warned_of_by_line():
    call = '{"role": "assistant", "content": null, "tool_calls": [\n'
    call += ' {"id": "c1", "function": {"name": "search", "arguments": "{}"}},\n'
    call += ' {"id": "c2", "function": {"name": "book", "arguments": "{}"}}]}'
    text = f'[{{"role": "user", "content": "go"}},\n{call},\n'
    text += '{"role": "tool", "tool_call_id": "c1", "content": "[]"},\n'
    text += '{"role": "user", "content": "and?"},\n'
    text += '{"role": "tool", "tool_call_id": "c2", "content": "ok"}]'
    out, _, warnings = compile_transcript(text)
    assert [m["role"] for m in out] == ["user", "assistant", "tool", "user", "tool"]
    assert warnings == [
        "line 2: the call 'c2' (book) is not answered before the next turn (the API refuses that)",
        "line 7: a tool turn answers 'c2', no open call of the assistant turn before it",
    ]


_IDS = st.sampled_from(["a", "b", "", None])
_CALLS = st.lists(st.builds(ToolCall, st.just("f"), st.just("{}"), _IDS), max_size=3)
_TURNS = st.one_of(
    st.builds(lambda: Message("user", "hi")),
    st.builds(
        lambda calls: Message("assistant", None if calls else "ok", tool_calls=tuple(calls)), _CALLS
    ),
    st.builds(lambda ident: Message("tool", "r", tool_call_id=ident), _IDS),
)


@settings(max_examples=400, deadline=None)
@given(st.lists(_TURNS, max_size=8))
def test_the_reader_warns_exactly_when_the_test_suite_finds_what_the_api_refuses(turns):
    turns = [replace(turn, line=number) for number, turn in enumerate(turns, start=1)]
    expected = unpaired_calls([message_to_dict(turn) for turn in turns])
    ids = [[call.id for call in turn.tool_calls if call.id] for turn in turns]
    if any(len(set(given)) < len(given) for given in ids):  # the reader warns of this too
        assert unpaired(turns)
    else:
        assert bool(unpaired(turns)) == bool(expected)


def test_compile_messages_warns_of_what_cannot_pair_over_the_whole_cached_history():
    call = {"role": "assistant", "content": None}
    call["tool_calls"] = [{"id": "c1", "type": "function", "function": {"name": "f"}}]
    history = [{"role": "user", "content": "look it up"}, call]
    _, telemetry = compile_messages(history)  # the call is not answered yet
    assert telemetry["parse_warnings"] == [
        "line 2: the call 'c1' (f) has no tool turn answering it (the API refuses that)"
    ]
    history += [{"role": "tool", "tool_call_id": "c1", "content": "[]"}]
    _, telemetry = compile_messages(history)  # resumed from the cache: answered now
    assert telemetry["parse_warnings"] == []
    history += [{"role": "tool", "tool_call_id": "c1", "content": "[]"}]
    _, telemetry = compile_messages(history, cache=False)
    assert telemetry["parse_warnings"] == [
        "line 4: a tool turn answers 'c1', no open call of the assistant turn before it"
    ]


def test_the_older_function_call_shape_pairs_by_name_without_ids():
    call = {"role": "assistant", "content": None, "function_call": {"name": "f", "arguments": "{}"}}
    history = [{"role": "user", "content": "go"}, call, {"role": "function", "name": "f"}]
    history[-1]["content"] = "ok"
    assert compile_messages(history, cache=False)[1]["parse_warnings"] == []
    unanswered = compile_messages([*history[:2], {"role": "user", "content": "and?"}])
    assert unanswered[1]["parse_warnings"] == [
        "line 2: a call (f) without an id is not answered before the next turn"
        " (the API refuses that)"
    ]


def test_one_answer_for_several_calls_and_two_calls_with_one_id_are_named_as_such():
    calls = [{"id": i, "type": "function", "function": {"name": "f"}} for i in ("a", "b")]
    asked = {"role": "assistant", "content": None, "tool_calls": calls}
    answer = {"role": "tool", "tool_call_ids": ["a", "b"], "content": "ok"}
    swe = [{"role": "user", "content": "go"}, asked, answer]
    assert compile_messages(swe, cache=False)[1]["parse_warnings"] == [
        "line 3: a tool turn answers 2 calls at once (tool_call_ids); the API wants one each"
    ]
    twice = {**asked, "tool_calls": [calls[0], calls[0]]}
    answers = [{"role": "tool", "tool_call_id": "a", "content": "ok"}] * 2
    warnings = compile_messages([swe[0], twice, *answers], cache=False)[1]["parse_warnings"]
    assert warnings == [
        "line 2: two calls of one turn share the id 'a': one answer ends both",
        "line 4: a tool turn answers 'a', no open call of the assistant turn before it",
    ]


def test_a_pairing_scan_read_on_in_parts_warns_as_one_scan_of_the_whole_history():
    # (a shortcut: the history cache reads only each call's new messages)
    from compiler.read.pairing import Pairing

    for name in SLICES:
        for _, parsed in formats_many((FORMATS / name).read_text(encoding="utf-8")):
            messages = parsed.messages
            for cut in range(len(messages) + 1):
                scan = Pairing().extend(messages[:cut])
                early = scan.copy().warnings()
                assert scan.extend(messages[cut:]).warnings() == unpaired(messages), name
                assert early == unpaired(messages[:cut]), name

"""cache_friendly's promise measured against what the caller sent, not what was read."""

import json
from pathlib import Path

from compiler import compile_messages
from compiler.read.formats import formats_many
from compiler.read.messages import message_to_dict

FIXTURES = Path(__file__).parents[2] / "fixtures" / "formats"


def test_a_role_written_out_in_another_spelling_ends_the_preserved_prefix_and_is_warned():
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "USER", "content": "hi"},
        {"role": "assistant", "content": "hello"},
    ]
    out, tel = compile_messages(messages, mode="cache_friendly", invariants=["no refunds"])
    assert out[1]["role"] == "user"  # the API's spelling goes out
    assert tel["kv_cache_prefix_messages_preserved"] == 1
    assert tel["kv_cache_prefix_intact"] is False
    assert tel["parse_warnings"] == ["line 2: messages[1]: role 'USER' is written out as 'user'"]


def test_messages_sent_as_the_api_spells_them_come_back_byte_identical():
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": [{"type": "text", "text": "hi"}], "name": "ann"},
        {"role": "assistant", "content": "hello"},
    ]
    out, tel = compile_messages(messages, mode="cache_friendly", invariants=["no refunds"])
    # the invariants go into a state note before the call point the assistant turn marks
    assert out[2] == {"role": "system", "content": "[DECLARED_INVARIANTS]\n  - no refunds"}
    assert json.dumps(out[:2] + out[3:]) == json.dumps(messages)
    assert tel["kv_cache_prefix_messages_preserved"] == 3 and tel["kv_cache_prefix_intact"]
    assert tel["parse_warnings"] == []


def test_a_key_no_chat_api_takes_is_dropped_and_does_not_end_the_prefix():
    # a key the API would refuse is never sent, so the prefix the provider caches is the
    # same with or without it
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "assistant", "content": "hello", "agent": "primary", "thought": "hm"},
    ]
    out, tel = compile_messages(messages, mode="cache_friendly", invariants=["no refunds"])
    # the state note (here: the invariants) stands before the assistant turn it is read by
    assert out[0] == messages[0] and out[-1] == {"role": "assistant", "content": "hello"}
    assert all(m.keys() <= {"role", "content"} for m in out)
    assert tel["kv_cache_prefix_messages_preserved"] == 2 and tel["kv_cache_prefix_intact"]
    assert tel["parse_warnings"] == []


def test_an_item_skipped_inside_the_list_ends_the_preserved_prefix():
    # the output is the caller's list without the stray item: from there on it differs
    messages = [
        {"role": "system", "content": "s"},
        "stray",
        {"role": "user", "content": "u"},
        {"role": "assistant", "content": "a"},
    ]
    for cache in (False, True):
        _, tel = compile_messages(messages, mode="cache_friendly", cache=cache)
        assert tel["kv_cache_prefix_messages_preserved"] == 1
        assert tel["kv_cache_prefix_intact"] is False


def test_an_item_skipped_at_the_end_leaves_the_prefix_whole_but_not_intact():
    # every message read comes back in place, but the caller's last item does not
    messages = [{"role": "user", "content": "u"}, {"role": "assistant", "content": "a"}]
    for cache in (False, True):
        _, tel = compile_messages([*messages, None], mode="cache_friendly", cache=cache)
        assert tel["kv_cache_prefix_messages_preserved"] == 2
        assert tel["kv_cache_prefix_intact"] is False
        warning = "line 3: messages[2] is null, not a message object; skipped"
        assert tel["parse_warnings"] == [warning]
        _, tel = compile_messages(messages, mode="cache_friendly", cache=cache)
        assert tel["kv_cache_prefix_intact"] is True  # the control: nothing skipped


def test_a_history_resumed_from_the_cache_counts_a_stray_item_it_adds_at_the_end():
    messages = [{"role": "user", "content": "resume me"}, {"role": "assistant", "content": "a"}]
    compile_messages(messages, mode="cache_friendly")  # cached: the next call resumes it
    _, tel = compile_messages([*messages, 42], mode="cache_friendly")
    assert tel["kv_cache_prefix_intact"] is False


def _real_histories():
    for name, schema in [
        ("tau-airline-two-records.json", "travel"),
        ("nebius-two-blocks.txt", "coding"),
        ("swe-agent-function-calling.traj", "coding"),
        ("few-shot-airline.jsonl", "travel"),
    ]:
        for _, parsed in formats_many((FIXTURES / name).read_text(encoding="utf-8")):
            yield [message_to_dict(m) for m in parsed.messages], schema


def test_each_call_of_a_replayed_loop_starts_with_the_exact_prompt_of_the_call_before():
    # the call points: the prompt before each assistant turn, as an agent loop sends it
    checked = 0
    for history, schema in _real_histories():
        for cache in (True, False):
            before = None
            for turn, message in enumerate(history):
                if not turn or message["role"] != "assistant":
                    continue
                prompt, _ = compile_messages(
                    history[:turn], schema=schema, mode="cache_friendly", cache=cache
                )
                if before is not None:
                    assert json.dumps(prompt[: len(before)]) == json.dumps(before), (schema, turn)
                    checked += 1
                before = prompt
    assert checked > 20

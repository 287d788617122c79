"""JSON nested as deep as ``json.loads`` reads it, anywhere in a message, compiles: the
copies, the history-cache key, the protocol strip and the compaction of long strings must
not recurse a level per level of nesting, which raises RecursionError at a depth of about
500."""

from __future__ import annotations

import json

import pytest

from compiler import compile_messages, compile_transcript, run
from compiler.read.formats import read_message_list
from tests.invariants import assert_invariants


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def call(arguments) -> dict:
    function = {"name": "f", "arguments": arguments}
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "c", "type": "function", "function": function}],
    }


def tail() -> list[dict]:
    # enough turns after the payload that it is no longer one the agent is about to act on
    roles = ["assistant", "user"] * 3
    return [{"role": role, "content": f"turn {i}"} for i, role in enumerate(roles)]


def placements(depth: int) -> dict[str, list[dict]]:
    deep = nested(depth)
    user = {"role": "user", "content": "hi"}
    answer = {"role": "tool", "tool_call_id": "c", "content": "ok"}
    long_json = '{"content": "' + "x" * 3000 + '", "meta": ' + deep + "}"
    return {
        "a key beside the content": [
            user,
            {"role": "assistant", "content": "ok", "audio": json.loads(deep)},
        ],
        "a content part": [
            {"role": "user", "content": [{"type": "text", "text": "hi", "x": json.loads(deep)}]},
            {"role": "assistant", "content": "ok"},
        ],
        "arguments beside a block": [
            user,
            call('{"contextgc-state": {"assert": {}}, "x": ' + deep + "}"),
            answer,
        ],
        "a tool payload with a long string": [
            user,
            call("{}"),
            {"role": "tool", "tool_call_id": "c", "content": long_json},
            *tail(),
        ],
    }


@pytest.mark.parametrize("depth", [400, 600, 900])
@pytest.mark.parametrize("where", list(placements(1)))
@pytest.mark.parametrize("options", [{}, {"cache": False}, {"mode": "cache_friendly"}])
def test_deeply_nested_json_in_a_message_compiles(depth, where, options):
    messages = placements(depth)[where]
    compiled, telemetry = compile_messages(messages, **options)
    assert telemetry["messages_in"] == len(messages)
    assert len(compiled) + telemetry["retired_turn_count"] >= len(messages)
    assert "contextgc-state" not in str([m.get("tool_calls") for m in compiled])
    result = run(read_message_list(messages).messages, mode=options.get("mode", "compact"))
    assert_invariants(result)


@pytest.mark.parametrize("depth", [400, 600, 900])
@pytest.mark.parametrize("where", list(placements(1)))
def test_a_deeply_nested_transcript_text_compiles(depth, where):
    messages = placements(depth)[where]
    _, telemetry, _ = compile_transcript(json.dumps(messages))
    assert telemetry["messages_in"] == len(messages)


def at_depth(frames: int, call):
    """``call()`` from ``frames`` calls further down the stack, as a caller's own stack is."""
    return call() if frames == 0 else at_depth(frames - 1, call)


def built(depth: int, leaf) -> list:
    """A value nested ``depth`` lists deep, built without recursion (json.loads reads such
    a value only where the stack has room for it: higher up a caller's stack than here)."""
    value = [leaf]
    for _ in range(depth - 1):
        value = [value]
    return value


def innermost(value):
    while isinstance(value, list) and value and isinstance(value[0], list):
        value = value[0]
    return value


@pytest.mark.parametrize("frames", [0, 30, 100])
@pytest.mark.parametrize("cache", [True, False])
def test_the_prefix_is_measured_on_a_value_nested_past_the_stack_left(frames, cache):
    # kv_cache_prefix_messages_preserved compares the dicts without recursion, which would
    # raise RecursionError here
    messages = [{"role": "user", "content": "hi", "audio": built(985, "v1")}]
    messages.append({"role": "assistant", "content": "hello"})
    compiled, telemetry = at_depth(frames, lambda: compile_messages(messages, cache=cache))
    assert telemetry["kv_cache_prefix_messages_preserved"] == 2
    assert innermost(compiled[-2]["audio"]) == ["v1"]


def test_a_value_too_deep_to_key_is_compiled_afresh_after_an_in_place_edit():
    # keyed by identity, the history cache would resume the old compile after the caller
    # changed the value in place
    messages = [{"role": "user", "content": "hi", "audio": built(985, "v1")}]
    messages.append({"role": "assistant", "content": "hello"})
    compile_messages(messages, cache=True)
    innermost(messages[0]["audio"])[0] = "v2"
    messages.append({"role": "user", "content": "next"})
    cached, _ = compile_messages(messages, cache=True)
    fresh, _ = compile_messages(messages, cache=False)
    assert innermost(cached[-3]["audio"]) == innermost(fresh[-3]["audio"]) == ["v2"]


def dict_nested(depth: int) -> dict:
    value: object = 1
    for _ in range(depth):
        value = {"a": value}
    return value


@pytest.mark.parametrize("depth", [990, 3000])
@pytest.mark.parametrize("cache", [True, False])
def test_content_that_is_an_object_too_deep_to_write_is_kept_without_it_and_warned_of(depth, cache):
    # writing the object as JSON again for the output check would raise RecursionError
    messages = [{"role": "user", "content": dict_nested(depth)}]
    messages.append({"role": "assistant", "content": "ok"})
    compiled, telemetry = compile_messages(messages, cache=cache)
    assert [m["role"] for m in compiled] == ["user", "assistant"]
    assert any("unreadable" in warning for warning in telemetry["parse_warnings"])


def test_an_integer_too_long_to_write_is_read_with_the_history_cache_on():
    # the cache key does not write it with repr, which refuses over 4,300 digits
    big = 7**6000  # 5,071 digits, made without writing any
    messages = [
        {"role": "user", "content": "hi", "audio": big},
        {"role": "assistant", "content": "ok"},
    ]
    compiled, _ = compile_messages(messages, cache=True)
    assert compiled[0]["audio"] == big

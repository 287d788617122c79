"""JSON nested as deep as ``json.loads`` reads it, anywhere in a message, compiles: the
copies, the history-cache key, the protocol strip and the compaction of long strings had
each recursed a level or two per level of nesting and raised RecursionError at a depth
of about 500 (third audit, finding 1)."""

from __future__ import annotations

import json

import pytest

from compiler import compile_messages, compile_transcript, run
from compiler.formats import read_message_list
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
        "an extra key": [user, {"role": "assistant", "content": "ok", "meta": json.loads(deep)}],
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

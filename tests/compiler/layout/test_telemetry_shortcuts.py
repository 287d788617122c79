"""Shortcut tests for telemetry: the token estimates of a message and of a compile's
output, each against counting every message's parts."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler.fold import Fold
from compiler.layout.emit import (
    Recall,
    _recall_text,
)
from compiler.layout.telemetry import _estimate, _estimated, message_tokens
from compiler.read.items import read_message_list
from compiler.read.messages import (
    Message,
    ToolCall,
)
from compiler.state.schema import load_schema
from compiler.types import Options

pytestmark = pytest.mark.shortcut

TEXT = st.sampled_from(["", "hi", "a b", "ünï", "x" * 9])


CALLS = st.lists(st.builds(ToolCall, TEXT, TEXT, st.one_of(st.none(), TEXT)), max_size=3)


MESSAGES = st.builds(
    Message,
    st.sampled_from(["system", "user", "assistant", "tool"]),
    st.one_of(st.none(), TEXT, st.text(max_size=30)),
    st.one_of(st.none(), TEXT),
    st.one_of(st.none(), TEXT),
    CALLS.map(tuple),
    st.just(()),
    st.one_of(st.none(), st.integers(1, 99)),
)


class Quarter:
    """chars/4 through the general path of ``message_tokens``: the parts joined."""

    name = "quarter"

    def count(self, text: str) -> int:
        return len(text) // 4


@settings(max_examples=300, deadline=None)
@given(MESSAGES)
def test_the_estimate_of_a_message_is_the_figure_of_its_parts_joined(message):
    assert _estimate(message) == message_tokens(Quarter(), message)


HEADER = '[ACTIVE_AGENT_STATE]\n  - a = "1" (turn 0 [inferred])'


TURNS = st.sampled_from(
    [
        {"role": "system", "content": HEADER + "\n\nBe kind."},
        {"role": "system", "content": "Be kind."},
        {"role": "user", "content": "Pay with my credit card."},
        {
            "role": "user",
            "content": "Actually use paypal instead." + _recall_text(Recall(0, "user", "x", 1.0)),
        },
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "get_order", "arguments": "{}"},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": '[{"id": 1, "status": "ok"}]' * 20},
        {"role": "assistant", "content": "Done."},
        {"role": "human", "content": "hi"},
        7,
    ]
)


@settings(max_examples=200, deadline=None)
@given(st.lists(TURNS, max_size=8), st.sampled_from(["compact", "cache_friendly"]))
def test_tokens_out_are_each_output_message_s_figure(history, mode):
    options = Options.build(mode=mode, schema=load_schema("logistics"))
    parsed = read_message_list(history, own=False)
    result = Fold(options, by_item=True).extend(parsed.messages, items=len(history))
    result = result.finish(remember=False)
    expected = (
        sum(map(_estimate, result.original)),
        sum(map(_estimate, result.emitted.messages)),
    )
    assert _estimated(result) == expected

"""What a one-off compile still holds while it builds what it returns: the output dicts
and the telemetry are built at its peak, so the fold (every message's read keys, decoded
payloads and register fold) is let go before them."""

from __future__ import annotations

import gc

import pytest

import compiler
import compiler.engine as engine
from compiler.fold import Fold

HISTORY = [
    {"role": "system", "content": "You are an airline agent."},
    {"role": "user", "content": "Book me from JFK to SFO in economy."},
    {"role": "assistant", "content": "Searching.", "tool_calls": [
        {"id": "c1", "type": "function",
         "function": {"name": "search", "arguments": '{"origin": "JFK"}'}}]},
    {"role": "tool", "tool_call_id": "c1", "content": '[{"flight": "HAT001"}]'},
    {"role": "assistant", "content": "HAT001 it is."},
]  # fmt: skip


def _folds_alive() -> int:
    gc.collect()
    return sum(isinstance(item, Fold) for item in gc.get_objects())


@pytest.mark.parametrize("mode", ["compact", "cache_friendly"])
def test_a_one_off_compile_holds_no_fold_while_it_builds_its_telemetry(monkeypatch, mode):
    seen = []
    real = engine.telemetry

    def counted(*args, **kwargs):
        seen.append(_folds_alive())
        return real(*args, **kwargs)

    monkeypatch.setattr(engine, "telemetry", counted)
    before = _folds_alive()
    out, tel = compiler.compile_messages(HISTORY, schema="travel", mode=mode, cache=False)
    assert seen == [before]
    assert tel["messages_in"] == len(HISTORY) and tel["messages_out"] == len(out)

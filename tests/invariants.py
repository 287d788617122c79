"""Invariants every compile must hold; the suite asserts them after each compile."""

from __future__ import annotations

from compiler.state.retire import retirement_violations
from compiler.types import Compilation


def assert_invariants(result: Compilation) -> None:
    """No lost turn, no orphaned fact, no retired tail, nothing made larger."""
    retired = {r.turn for r in result.retired}
    emitted = {i for i in result.emitted.origins if i is not None}
    every = set(range(len(result.input)))
    assert emitted | retired == every, f"turns unaccounted for: {every - emitted - retired}"
    assert not emitted & retired, f"turns both emitted and retired: {emitted & retired}"
    assert not retirement_violations(result.register, retired)
    assert all(t < len(result.input) - 2 for t in retired), "a last-two turn was retired"
    for index, compacted in result.compacted.items():
        assert index in emitted
        assert compacted.compacted_chars < compacted.original_chars
    live = {e.slot for e in result.register.active}
    for entry in result.register.history:
        if entry.live:
            assert entry.slot in live or entry.slot in result.register.dropped_over_limit
            assert not set(entry.supports) <= retired


def unpaired_calls(messages: list[dict]) -> list[str]:
    """What the chat API would refuse in how calls and answers pair up: a ``tool``
    message must answer an id (a non-empty one) among the tool calls of the assistant
    turn before its run of tool messages, and every such call must be answered there."""
    problems, open_ids = [], None
    for index, message in enumerate(messages):
        if message.get("role") == "tool":
            answered = message.get("tool_call_id")
            if not answered or open_ids is None or answered not in open_ids:
                problems.append(f"[{index}] answers no open call ({answered!r})")
            else:
                open_ids.discard(answered)
            continue
        if open_ids:
            problems.append(f"[{index}] comes before an answer to {_listed(open_ids)}")
        calls = message.get("tool_calls") or [] if message.get("role") == "assistant" else []
        open_ids = {call.get("id") for call in calls} if calls else None
    if open_ids:
        problems.append(f"the history ends before an answer to {_listed(open_ids)}")
    return problems


def _listed(ids: set) -> list:
    """The ids in order, a missing one (None) last."""
    return sorted(ids, key=lambda ident: (ident is None, ident or ""))

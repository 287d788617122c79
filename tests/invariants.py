"""Invariants every compile must hold; the suite asserts them after each compile."""

from __future__ import annotations

from compiler.engine import Compilation
from compiler.retire import retirement_violations


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

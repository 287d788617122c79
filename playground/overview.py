"""The overview's live figure: the read-path example, compiled on each request."""

from __future__ import annotations

from playground.examples import examples
from playground.service import run_compile


def demo() -> dict:
    """What the compiler does to the read-path example right now.

    Example:
        >>> figures = demo()
        >>> figures["retired"] >= 1 and figures["state"] != {}
        True
    """
    example = examples()["read_path"]
    tel = run_compile(**example.request).telemetry
    return {
        "example": example,
        "turns": tel["messages_in"],
        "retired": tel["retired_turn_count"],
        "retired_turns": tel["retired_turns"],
        "compacted": tel["tool_payloads_compacted"],
        "raw": tel["raw_token_count"],
        "compiled": tel["compiled_token_count"],
        "saved_pct": tel["compression_ratio_pct"],
        "state": tel["active_state_slots"],
        "estimator": tel["token_estimator"],
    }

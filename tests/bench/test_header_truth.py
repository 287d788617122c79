"""The header-truth bench counts a cancelled final reservation and a retired request."""

from __future__ import annotations

import json

from tests.bench.header_truth import measure


def _call(name: str, **arguments) -> dict:
    call = {"id": name, "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments)}}  # fmt: skip
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def test_it_counts_a_final_reservation_the_agent_cancelled_as_none_now(tmp_path):
    traj = [
        {"role": "user", "content": "Please cancel my reservation ID is ABC123."},
        _call("cancel_reservation", reservation_id="ABC123"),
        {"role": "tool", "tool_call_id": "cancel_reservation", "content": "{}"},
        {"role": "assistant", "content": "Your reservation number ABC123 has been cancelled."},
        {"role": "user", "content": "Thanks."},
    ]
    path = tmp_path / "records.json"
    path.write_text(json.dumps([{"task_id": 0, "trial": 0, "traj": traj}]))
    figures = measure([path])
    assert (figures["records"], figures["cancelled_finals"]) == (1, 0)
    assert (figures["retired_user_turns"], figures["pending_requests_retired"]) == (0, 0)

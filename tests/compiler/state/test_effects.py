"""What a tool call does to state: an action mapping sets a value, ends it, or only reads."""

import json

import pytest

from compiler import compile_messages, load_schema
from compiler.errors import SchemaError
from compiler.facts import Observation, Op, Provenance
from compiler.state.register import ENDED_VALUE, register
from compiler.state.schema import Effect


def _schema(*actions):
    return {"slots": {"booking": {"patterns": [r"booking (K\d+)"], "actions": list(actions)}}}


def obs(value, turn, provenance=Provenance.INFERRED, op=Op.ASSERT):
    return Observation("booking", value, turn, provenance, op=op)


@pytest.mark.parametrize(
    ("action", "effect"),
    [
        ({"tool": "t", "argument": "id"}, Effect.SETS),
        ({"tool": "t", "argument": "id", "commits": True}, Effect.SETS),
        ({"tool": "t", "argument": "id", "commits": False}, Effect.READS),
        ({"tool": "t", "argument": "id", "effect": "ends"}, Effect.ENDS),
    ],
)
def test_an_action_says_its_effect_or_the_older_commits_flag_that_maps_onto_one(action, effect):
    assert load_schema(_schema(action)).slot("booking").actions[0].effect is effect


def test_a_schema_written_with_commits_keeps_its_digest_when_written_with_effects():
    old = _schema({"tool": "a", "argument": "id", "commits": True},
                  {"tool": "b", "argument": "id", "commits": False})  # fmt: skip
    new = _schema({"tool": "a", "argument": "id", "effect": "sets"},
                  {"tool": "b", "argument": "id", "effect": "reads"})  # fmt: skip
    assert load_schema(old).digest == load_schema(new).digest


@pytest.mark.parametrize(
    ("action", "message"),
    [
        (
            {"tool": "drop", "argument": "id", "effect": "deletes"},
            "slot 'booking', tool 'drop': unknown effect 'deletes'; "
            "an effect is one of sets, ends, reads, starts",
        ),
        (
            {"tool": "drop", "argument": "id", "effect": "ends", "commits": True},
            "slot 'booking', tool 'drop': give 'effect' or the older 'commits', not both",
        ),
    ],
)
def test_an_effect_the_loader_cannot_read_is_refused_naming_the_slot_and_tool(action, message):
    with pytest.raises(SchemaError) as caught:
        load_schema(_schema(action))
    assert str(caught.value) == message


def test_ending_the_current_value_clears_the_slot():
    reg = register((obs("K1", 0), obs("K1", 3, Provenance.ACTED, Op.END)))
    assert (reg.active, reg.history[0].revoked_at) == ((), 3)


def test_ending_another_value_leaves_the_current_one_standing():
    reg = register((obs("K2", 0), obs("K1", 3, Provenance.ACTED, Op.END)))
    assert [e.value for e in reg.active] == ["K2"]


def test_an_ended_value_said_again_does_not_come_back():
    # "Your reservation K1 has been cancelled" names the value it reports the end of
    reg = register((obs("K1", 0), obs("K1", 3, Provenance.ACTED, Op.END), obs("K1", 5)))
    assert reg.active == ()
    assert [(r.kind, r.turn, r.value) for r in reg.refusals] == [(ENDED_VALUE, 5, "K1")]


def test_an_ended_value_comes_back_when_the_agent_acts_on_it_again():
    reg = register(
        (obs("K1", 3, Provenance.ACTED, Op.END), obs("K1", 6, Provenance.ACTED), obs("K2", 8))
    )
    assert [(e.value, e.provenance) for e in reg.active] == [("K1", Provenance.ACTED)]


def test_after_an_end_a_new_value_sets_the_slot_from_speech():
    reg = register((obs("K1", 1, Provenance.ACTED), obs("K1", 3, Provenance.ACTED, Op.END),
                    obs("K2", 5)))  # fmt: skip
    assert [e.value for e in reg.active] == ["K2"]


def _call(name: str, **arguments) -> dict:
    call = {"id": name, "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments)}}  # fmt: skip
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def test_a_cancelled_reservation_is_not_the_active_one_after_the_cancel():
    messages = [
        {"role": "user", "content": "Please cancel my reservation ID is ABC123."},
        _call("cancel_reservation", reservation_id="ABC123"),
        {"role": "tool", "tool_call_id": "cancel_reservation", "content": "{}"},
        {"role": "assistant", "content": "Your reservation number ABC123 has been cancelled."},
        {"role": "user", "content": "Thanks."},
    ]
    telemetry = compile_messages(messages, schema="travel")[1]
    assert "active_reservation" not in telemetry["active_state_slots"]


def test_a_lookup_of_a_reservation_is_no_action_on_it():
    messages = [
        _call("get_reservation_details", reservation_id="ABC123"),
        {"role": "tool", "tool_call_id": "get_reservation_details", "content": "{}"},
        {"role": "user", "content": "ok"},
    ]
    telemetry = compile_messages(messages, schema="travel")[1]
    assert telemetry["active_state_slots"] == {}


def test_a_retail_order_the_agent_modifies_is_active_until_it_cancels_it():
    modify = _call("modify_pending_order_payment", order_id="#W4923227", payment_method_id="x")
    cancel = _call("cancel_pending_order", order_id="#W4923227", reason="no longer needed")
    answer = {"role": "tool", "tool_call_id": "c", "content": "{}"}
    after_modify = [modify, {**answer, "tool_call_id": modify["tool_calls"][0]["id"]}]
    after_cancel = [cancel, {**answer, "tool_call_id": cancel["tool_calls"][0]["id"]}]
    slots = [
        compile_messages(messages, schema="logistics")[1]["active_state_slots"]
        for messages in (after_modify, [*after_modify, *after_cancel])
    ]
    assert slots == [{"active_order": "#W4923227"}, {}]

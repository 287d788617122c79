"""Precedence with time: a stronger source outranks speech about the same moment, and
gives way once both speakers have moved on to another value."""

from compiler import compile_messages
from compiler.facts import Observation, Op, Provenance
from compiler.state.register import register

USER, AGENT = "user", "assistant"


def said(value, turn, provenance=Provenance.INFERRED, op=Op.ASSERT):
    return Observation("reservation", value, turn, provenance, op=op)


def live(observations, speakers):
    reg = register(tuple(observations), speakers=speakers)
    return [(e.value, e.provenance.value, e.supports) for e in reg.active]


def test_an_acted_value_holds_against_the_agent_mentioning_another_value_once():
    # the agent reporting another reservation's details right after acting on K1
    found = live([said("K1", 1, Provenance.ACTED), said("K2", 3)], {1: AGENT, 3: AGENT})
    assert found == [("K1", "acted", (1,))]


def test_an_acted_value_holds_against_one_speaker_repeating_another_value():
    turns = {1: AGENT, 2: USER, 4: USER, 6: USER}
    found = live([said("K1", 1, Provenance.ACTED), said("K2", 2), said("K2", 4), said("K2", 6)],
                 turns)  # fmt: skip
    assert found == [("K1", "acted", (1,))]


def test_a_conflict_is_recorded_while_the_stronger_value_holds():
    reg = register((said("K1", 1, Provenance.ACTED), said("K2", 3)), speakers={3: USER})
    assert [(c.refused_value, c.refused_turn) for c in reg.conflicts] == [("K2", 3)]


def test_the_conversation_moves_on_once_both_speakers_take_up_another_value():
    turns = {1: AGENT, 3: USER, 4: AGENT}
    reg = register((said("K1", 1, Provenance.ACTED), said("K2", 3), said("K2", 4)), speakers=turns)
    assert [(e.value, e.provenance.value, e.supports) for e in reg.active] == [
        ("K2", "inferred", (3, 4))
    ]
    assert reg.history[0].superseded_by == 4


def test_the_held_value_said_again_in_between_starts_the_count_again():
    turns = {1: AGENT, 3: USER, 4: AGENT, 5: AGENT}
    found = live([said("K1", 1, Provenance.ACTED), said("K2", 3), said("K1", 4), said("K2", 5)],
                 turns)  # fmt: skip
    assert found == [("K1", "acted", (1, 4))]


def test_a_declared_value_gives_way_as_an_acted_one_does():
    turns = {1: AGENT, 3: AGENT, 4: USER}
    found = live([said("K1", 1, Provenance.DECLARED), said("K2", 3), said("K2", 4)], turns)
    assert found == [("K2", "inferred", (3, 4))]


def test_a_pinned_value_never_gives_way_to_speech():
    turns = {1: AGENT, 3: USER, 4: AGENT}
    pinned = said("K1", 1, Provenance.DECLARED, Op.PIN)
    assert live([pinned, said("K2", 3), said("K2", 4)], turns) == [("K1", "declared", (1,))]


def test_without_speakers_a_stronger_value_holds_as_before():
    assert live([said("K1", 1, Provenance.ACTED), said("K2", 3), said("K2", 4)], {}) == [
        ("K1", "acted", (1,))
    ]


def _call(name: str, arguments: str) -> dict:
    call = {"id": "c", "type": "function", "function": {"name": name, "arguments": arguments}}
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def test_after_updating_one_reservation_the_header_follows_the_one_both_now_discuss():
    messages = [
        {"role": "user", "content": "My reservation ID is ABC123, please add a bag."},
        _call("update_reservation_baggages", '{"reservation_id": "ABC123", "total_baggages": 1}'),
        {"role": "tool", "tool_call_id": "c", "content": "{}"},
        {"role": "assistant", "content": "Done. Anything else?"},
        {"role": "user", "content": "Yes, my other reservation ID is XYZ789."},
        {"role": "assistant", "content": "Your reservation XYZ789 is in economy."},
        {"role": "user", "content": "Thanks."},
    ]
    found = compile_messages(messages, schema="travel")[1]["active_state_slots"]
    assert found["active_reservation"] == "XYZ789"

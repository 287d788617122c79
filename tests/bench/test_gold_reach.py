"""The bound on the gold figures: a gold value is reachable only if the conversation says it."""

from compiler.read.messages import Message, ToolCall
from tests.bench import gold_reach


def test_a_date_said_in_words_reaches_its_iso_gold_value():
    said = (Message("user", "I'd like to fly on May 20 instead."),)
    assert gold_reach.said_anywhere("flight_date", frozenset({"2024-05-20"}), said)


def test_a_cabin_written_with_a_space_reaches_the_underscored_gold_value():
    said = (Message("assistant", "Your ticket is Basic Economy."),)
    assert gold_reach.said_anywhere("cabin_class", frozenset({"basic_economy"}), said)


def test_a_value_only_in_a_tool_calls_arguments_is_said():
    call = ToolCall("get_reservation_details", '{"reservation_id": "K1NW8N"}', "c1")
    said = (Message("assistant", None, tool_calls=(call,)),)
    assert gold_reach.said_anywhere("active_reservation", frozenset({"K1NW8N"}), said)


def test_a_value_only_in_a_tool_result_is_not_said():
    said = (Message("tool", '{"reservation_id": "K1NW8N"}', tool_call_id="c1"),)
    assert not gold_reach.said_anywhere("active_reservation", frozenset({"K1NW8N"}), said)

"""Retirement keeps a user's request until it is answered in kind: by a later request or
decision of the user's for the slot, or by the agent acting on it; never by the agent
mentioning another value in passing."""

import json

from compiler import compile_messages

ASK = "Alright then, can you help me downgrade all passengers to economy class?"


def retired(messages) -> list[int]:
    return compile_messages(messages, schema="travel")[1]["retired_turn_indices"]


def _call(name: str, **arguments) -> dict:
    call = {"id": "c", "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments)}}  # fmt: skip
    return {"role": "assistant", "content": None, "tool_calls": [call]}


OPENING = [
    {"role": "user", "content": "Hi, I need help with my trips."},
    {"role": "assistant", "content": "Sure, what would you like to do?"},
    {"role": "user", "content": ASK},
]
TAIL = [
    {"role": "user", "content": "ok"},
    {"role": "assistant", "content": "Anything else?"},
    {"role": "user", "content": "No."},
]


def test_a_request_is_kept_when_the_agent_reports_another_reservations_cabin():
    report = {"role": "assistant", "content": "Your reservation XYZ789 is in business class."}
    assert 2 not in retired([*OPENING, report, *TAIL])


def test_a_request_the_user_replaces_with_another_request_for_the_slot_is_retired():
    change = {"role": "user", "content": "Actually, please upgrade me to business instead."}
    reply = {"role": "assistant", "content": "Let me check the fare difference."}
    assert 2 in retired([*OPENING, reply, change, *TAIL])


def _update(cabin: str) -> list[dict]:
    return [
        _call("update_reservation_flights", reservation_id="XYZ789", cabin=cabin, flights=[]),
        {"role": "tool", "tool_call_id": "c", "content": "{}"},
    ]


def test_a_request_the_agent_carried_out_and_then_acted_past_is_retired():
    done = [
        *_update("economy"),
        {"role": "user", "content": "Hmm, on second thought, upgrade me to business."},
        *_update("business"),
        {"role": "assistant", "content": "Done."},
    ]
    assert 2 in retired([*OPENING, *done, *TAIL])


def test_an_agents_own_passing_mention_is_still_retired_when_superseded():
    # the rule for answering in kind is a user's; the agent's restatement goes as before
    messages = [
        {"role": "user", "content": "Hi, I need help with my trips."},
        {"role": "assistant", "content": "You are currently booked in business class."},
        {"role": "user", "content": ASK},
        *TAIL,
    ]
    assert 1 in retired(messages)


def test_a_request_is_kept_when_the_agent_acts_on_another_value_of_the_slot():
    # the agent booking business elsewhere has not done the downgrade the user asked for
    report = {"role": "assistant", "content": "Your reservation XYZ789 is in business class."}
    assert 2 not in retired([*OPENING, report, *_update("business"), *TAIL])


MAY_27 = {"flight_number": "HAT001", "date": "2024-05-27"}


def test_a_day_asked_without_its_year_is_answered_by_the_agent_acting_on_that_day():
    messages = [
        {"role": "user", "content": "Hi, I need help with my trips."},
        {"role": "assistant", "content": "Sure, what would you like to do?"},
        {"role": "user", "content": "Please move my flight to May 27."},
        _call("update_reservation_flights", reservation_id="XYZ789", flights=[MAY_27]),
        {"role": "tool", "tool_call_id": "c", "content": "{}"},
        {"role": "user", "content": "Great."},
        *TAIL,
    ]
    assert 2 in retired(messages)

"""Retirement drops a turn only when what it carries was replaced for the same thing: a
new booking replaces nothing said of the reservation held before, a cabin said of the
trip being booked is the new booking's, and a user's turn that also asks for something
the schema has no slot for stays. Each case: the turn kept, and its true retirement
still retired."""

import json

from compiler import compile_messages


def retired(messages) -> list[int]:
    return compile_messages(messages, schema="travel")[1]["retired_turn_indices"]


def _call(name: str, **arguments) -> dict:
    call = {"id": "c", "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments)}}  # fmt: skip
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def _result(content: str = "{}") -> dict:
    return {"role": "tool", "tool_call_id": "c", "content": content}


OPENING = [
    {"role": "user", "content": "Hi, my reservation ID is AB12CD."},
    {"role": "assistant", "content": "Sure, what would you like to do?"},
]
TAIL = [
    {"role": "user", "content": "ok"},
    {"role": "assistant", "content": "Anything else?"},
    {"role": "user", "content": "No."},
]
REFUSED = {
    "role": "assistant",
    "content": "The reservation AB12CD cannot be cancelled: it has no travel insurance.",
}
FLIGHT = {"flight_number": "HAT001", "date": "2024-05-20"}


def _booking(cabin: str = "basic_economy") -> list[dict]:
    return [
        _call("book_reservation", user_id="mia_kim_1", cabin=cabin, flights=[FLIGHT]),
        _result('{"reservation_id": "ZZ99ZZ"}'),
        {"role": "assistant", "content": "Booked: your reservation ID is ZZ99ZZ."},
    ]


def test_a_statement_about_a_reservation_is_kept_when_a_new_one_is_booked():
    messages = [*OPENING, REFUSED, {"role": "user", "content": "Book me a new trip."}]
    assert 2 not in retired([*messages, *_booking(), *TAIL])


def test_a_statement_about_a_reservation_is_retired_when_the_user_names_another():
    correction = {"role": "user", "content": "Sorry, my reservation ID is QW34ER."}
    reply = {"role": "assistant", "content": "Thanks, looking it up."}
    assert 2 in retired([*OPENING, REFUSED, correction, reply, *TAIL])


SUMMARY = {"role": "assistant", "content": "Cabin: Economy. It has no travel insurance."}
OFFER = {"role": "assistant", "content": "The cheapest is the basic economy fare at $51."}


def test_a_cabin_said_of_the_trip_being_booked_does_not_retire_the_held_reservations():
    ask = {"role": "user", "content": "Find me the cheapest flight to Seattle."}
    take = {"role": "user", "content": "Let's go with basic economy then."}
    assert 2 not in retired([*OPENING, SUMMARY, ask, OFFER, take, *_booking(), *TAIL])


def test_a_cabin_said_of_the_reservation_in_hand_still_retires_its_old_cabin():
    ask = {"role": "user", "content": "Please upgrade it to business."}
    done = [
        _call("update_reservation_flights", reservation_id="AB12CD", cabin="business", flights=[]),
        _result(),
    ]
    assert 2 in retired([*OPENING, SUMMARY, ask, *done, *_booking(), *TAIL])


ALSO = (
    "I'd like to change the passenger to myself, upgrade to economy class, "
    "and add three checked bags as well."
)
UPGRADE = "Please upgrade to economy class."


def _asked_and_done(ask: str) -> list[dict]:
    return [
        *OPENING,
        {"role": "user", "content": ask},
        _call("update_reservation_flights", reservation_id="AB12CD", cabin="economy", flights=[]),
        _result(),
        {"role": "user", "content": "Now upgrade me to business, please."},
        _call("update_reservation_flights", reservation_id="AB12CD", cabin="business", flights=[]),
        _result(),
        *TAIL,
    ]


def test_a_request_that_also_asks_for_what_no_slot_holds_is_kept():
    assert 2 not in retired(_asked_and_done(ALSO))


def test_a_request_for_the_slot_alone_is_retired_once_replaced():
    assert 2 in retired(_asked_and_done(UPGRADE))

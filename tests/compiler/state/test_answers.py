"""A state-changing tool call's effect waits for the tool's answer: a call the tool refused
changes nothing it would have ended, begun or set for an entity; an unanswered call
counts as done."""

import json

from compiler import compile_messages
from compiler.incremental import HISTORIES
from tests.compiler.test_incremental import same


def _call(name: str, call_id: str | None = None, **arguments) -> dict:
    call = {"id": call_id or name, "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments)}}  # fmt: skip
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def _answer(call: dict, content: str) -> dict:
    return {"role": "tool", "tool_call_id": call["tool_calls"][0]["id"], "content": content}


_CHANGE_TO_ECONOMY = _call(
    "update_reservation_flights",
    reservation_id="ABC123",
    cabin="economy",
    flights=[{"flight_number": "HAT003", "date": "2024-05-19"}],
    payment_id="gift_card_1",
)
_IN_BUSINESS = [
    {"role": "user", "content": "My reservation ID is ABC123, please downgrade it."},
    {"role": "assistant", "content": "Your reservation ABC123 is in business class now."},
]


def _slots(messages, schema="travel"):
    return compile_messages(messages, schema=schema, cache=False)[1]["active_state_slots"]


def test_a_cabin_change_the_tool_refused_leaves_the_reservations_cabin_as_it_was():
    refused = _answer(_CHANGE_TO_ECONOMY, "Error: not enough seats on flight HAT003")
    slots = _slots([*_IN_BUSINESS, _CHANGE_TO_ECONOMY, refused])
    assert (slots["cabin_class"], slots["active_reservation"]) == ("business", "ABC123")


def test_a_cabin_change_the_tool_carried_out_sets_the_cabin():
    done = _answer(_CHANGE_TO_ECONOMY, json.dumps({"reservation_id": "ABC123", "flights": []}))
    assert _slots([*_IN_BUSINESS, _CHANGE_TO_ECONOMY, done])["cabin_class"] == "economy"


def test_a_call_not_answered_yet_counts_as_done_until_its_refusal_comes():
    unanswered = _slots([*_IN_BUSINESS, _CHANGE_TO_ECONOMY])
    refused = _answer(_CHANGE_TO_ECONOMY, '{"error": "payment method not found"}')
    answered = _slots([*_IN_BUSINESS, _CHANGE_TO_ECONOMY, refused])
    assert (unanswered["cabin_class"], answered["cabin_class"]) == ("economy", "business")


def test_a_call_whose_answer_never_comes_counts_as_done():
    moved_on = {"role": "user", "content": "Thanks, that is all."}
    assert _slots([*_IN_BUSINESS, _CHANGE_TO_ECONOMY, moved_on])["cabin_class"] == "economy"


def test_a_cancel_the_tool_refused_leaves_the_reservation_active():
    cancel = _call("cancel_reservation", reservation_id="ABC123")
    refused = _answer(cancel, "Error: reservation cannot be cancelled")
    slots = _slots([*_IN_BUSINESS, cancel, refused])
    assert slots["active_reservation"] == "ABC123"


def test_a_refused_booking_still_names_the_trip_but_begins_no_reservation():
    flights = [{"flight_number": "HAT136", "date": "2024-05-20"}]
    book = _call("book_reservation", origin="JFK", destination="SEA", cabin="economy",
                 flights=flights)  # fmt: skip
    refused = _answer(book, "Error: payment amount does not add up")
    slots = _slots([*_IN_BUSINESS, book, refused])
    assert (slots["origin_airport"], slots["active_reservation"]) == ("JFK", "ABC123")
    assert slots["cabin_class"] == "business"


def test_a_lookup_answered_before_the_refused_change_made_beside_it_does_not_end_the_wait():
    lookup = _call("get_reservation_details", "c1", reservation_id="ABC123")["tool_calls"][0]
    change = _call("cancel_reservation", "c2", reservation_id="ABC123")["tool_calls"][0]
    both = {"role": "assistant", "content": None, "tool_calls": [lookup, change]}
    answers = [
        {"role": "tool", "tool_call_id": "c1", "content": '{"reservation_id": "ABC123"}'},
        {"role": "tool", "tool_call_id": "c2", "content": "Error: reservation cannot be cancelled"},
    ]
    assert _slots([*_IN_BUSINESS, both, *answers])["active_reservation"] == "ABC123"


def test_a_refusal_read_in_a_later_call_of_the_loop_compiles_as_a_full_compile_would():
    refused = _answer(_CHANGE_TO_ECONOMY, "Error: not enough seats on flight HAT003")
    history = [*_IN_BUSINESS, _CHANGE_TO_ECONOMY, refused,
               {"role": "assistant", "content": "Sorry, that flight is full."}]  # fmt: skip
    HISTORIES.clear()
    hits = HISTORIES.stats()["hits"]
    for mode in ("compact", "cache_friendly"):
        for end in range(1, len(history) + 1):
            incremental = compile_messages(history[:end], schema="travel", mode=mode)
            full = compile_messages(history[:end], schema="travel", mode=mode, cache=False)
            assert same(incremental, full), (mode, end)
    assert HISTORIES.stats()["hits"] - hits == 2 * (len(history) - 1)

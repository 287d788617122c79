"""The specification's own examples, run as written."""

from compiler import compile_messages, load_schema, run
from compiler.read.formats import read_message_list
from tests.invariants import assert_invariants

LOGISTICS = [
    {
        "role": "user",
        "content": "Deliver order ORD-1 to 402 Oak Street, Apt 5, Springfield, IL 62704. "
        "Pay with my credit card.",
    },
    {"role": "assistant", "content": "Confirmed: 402 Oak Street, Apt 5, on the credit card."},
    {
        "role": "user",
        "content": "Actually reroute to 900 Pine Avenue, Suite 12, Chicago, IL 60601.",
    },
    {"role": "assistant", "content": "Rerouted to 900 Pine Avenue, Suite 12."},
    {"role": "user", "content": "Thanks."},
]

HISTORY = [
    {"role": "system", "content": "You are a coding agent."},
    {"role": "user", "content": "Please fix the failing build."},
]


def asst(text):
    return {"role": "assistant", "content": text}


def user(text):
    return {"role": "user", "content": text}


def _compile(messages, schema):
    result = run(read_message_list(messages).messages, schema=load_schema(schema))
    assert_invariants(result)
    return compile_messages(messages, schema=load_schema(schema))


def test_the_opening_logistics_example_gives_the_documented_state():
    _, telemetry = _compile(LOGISTICS, "logistics")
    assert telemetry["active_state_slots"] == {
        "delivery_address": "900 Pine Avenue, Suite 12",
        "payment_method": "credit card",
    }
    assert telemetry["retired_turn_indices"] == [1, 2]


def test_the_opening_logistics_example_lays_out_the_documented_messages():
    compiled, _ = _compile(LOGISTICS, "logistics")
    assert compiled == [
        {
            "role": "system",
            "content": "[ACTIVE_AGENT_STATE]\n"
            '  - delivery_address = "900 Pine Avenue, Suite 12" (turn 3 [inferred])\n'
            '  - payment_method = "credit card" (turn 0 [inferred])',
        },
        LOGISTICS[0],
        LOGISTICS[3],
        LOGISTICS[4],
    ]


def test_an_adjacent_correction_retires_nothing_but_the_register_is_current():
    messages = [*HISTORY, asst("editing `wrong.py`."), asst("actually editing `right.py`.")]
    _, telemetry = _compile(messages, "coding")
    assert telemetry["retired_turn_count"] == 0
    assert telemetry["active_state_slots"] == {"current_file": "right.py"}


def test_a_correction_one_turn_later_retires_the_wrong_claim():
    messages = [
        *HISTORY,
        asst("editing `wrong.py`."),
        user("ok"),
        asst("actually editing `right.py`."),
    ]
    compiled, telemetry = _compile(messages, "coding")
    assert telemetry["retired_turn_indices"] == [2]
    assert not any("wrong.py" in (m["content"] or "") for m in compiled)
    assert telemetry["active_state_slots"] == {"current_file": "right.py"}


def test_without_a_schema_nothing_is_tracked():
    compiled, telemetry = compile_messages(LOGISTICS)
    assert telemetry["active_state_slots"] == {}
    assert compiled == LOGISTICS

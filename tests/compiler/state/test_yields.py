"""A slot that yields to another (``yields_to``) does not read a value that slot reads at
the same place in a turn: retail's profile address and an order's delivery address are
different facts, and changing one says nothing about the other."""

import pytest

from compiler import compile_messages, load_schema
from compiler.errors import SchemaError
from compiler.state.extract import extract_turn

ADDRESS = r"(?:to|is)\s+(\d+ [A-Z][a-z]+ Street)"
SCHEMA = {
    "slots": {
        "shipping": {"patterns": [ADDRESS], "yields_to": ["profile"]},
        "profile": {"patterns": [r"default address\s+" + ADDRESS]},
    }
}


def _read(text: str, schema=SCHEMA) -> dict[str, str]:
    return {o.slot: o.value for o in extract_turn(text, 1, load_schema(schema))}


def test_a_value_the_other_slot_reads_at_the_same_place_is_that_slots_alone():
    assert _read("Your default address is 5 Elm Street.") == {"profile": "5 Elm Street"}


def test_a_value_said_elsewhere_in_the_turn_is_still_read_by_the_yielding_slot():
    text = "Ship it to 9 Oak Street. Your default address is 5 Elm Street."
    assert _read(text) == {"shipping": "9 Oak Street", "profile": "5 Elm Street"}


def test_without_yields_to_both_slots_read_the_value():
    schema = {"slots": {**SCHEMA["slots"], "shipping": {"patterns": [ADDRESS]}}}
    assert _read("Your default address is 5 Elm Street.", schema) == {
        "shipping": "5 Elm Street",
        "profile": "5 Elm Street",
    }


def test_a_schema_without_yields_to_keeps_its_digest():
    plain = {"slots": {"a": {"patterns": [ADDRESS]}}}
    assert load_schema(plain).digest == load_schema({"slots": {"a": [ADDRESS]}}).digest
    assert (
        load_schema(SCHEMA).digest
        != load_schema({"slots": {**SCHEMA["slots"], "shipping": {"patterns": [ADDRESS]}}}).digest
    )


@pytest.mark.parametrize(
    ("yields", "error"),
    [
        (["profil"], "yields_to 'profil' names no slot of this schema"),
        ("profile", "'yields_to' must be a list of other slots' names"),
        (["shipping"], "'yields_to' must be a list of other slots' names"),
    ],
)
def test_it_refuses_a_yields_to_that_names_no_other_slot(yields, error):
    schema = {
        "slots": {**SCHEMA["slots"], "shipping": {"patterns": [ADDRESS], "yields_to": yields}}
    }
    with pytest.raises(SchemaError, match=error):
        load_schema(schema)


# -- retail: the profile's address and an order's ------------------------------------

_PROFILE_AND_ORDER = [
    {"role": "user", "content": "Hi, I'd like to update my user address, please."},
    {
        "role": "assistant",
        "content": "To confirm, you'd like to update your user address to:\n\n"
        "- Address: 101 Highway\n- City: New York",
    },
    {"role": "user", "content": "Yes. Could you also update my pending order to match?"},
    {
        "role": "assistant",
        "content": "The address for your pending order #W9911714 has been "
        "successfully updated to:\n\n- 12 Oak Street\n- New York, NY 10001",
    },
    {"role": "user", "content": "Actually, change my user address back to the original one."},
    {
        "role": "assistant",
        "content": "Your user address has been successfully reverted to:\n\n"
        "- 667 Highland Drive, Suite 865\n- Denver, CO 80280",
    },
]


def _compiled(messages):
    return compile_messages(messages, schema="logistics", mode="compact", cache=False)[1]


def test_reverting_the_profile_address_leaves_the_orders_address_as_it_was():
    slots = _compiled(_PROFILE_AND_ORDER)["active_state_slots"]
    assert (slots["profile_address"], slots["delivery_address"]) == (
        "667 Highland Drive, Suite 865",
        "12 Oak Street",
    )


def test_the_turn_that_set_the_orders_address_is_not_retired_by_a_profile_change():
    retired = _compiled(_PROFILE_AND_ORDER)["retired_turn_indices"]
    assert 3 not in retired and 1 in retired


def test_an_address_with_no_profile_cue_is_an_orders():
    said = [{"role": "user", "content": "Please ship it to 123 Maple Street, Apt 4B."}]
    assert _compiled(said)["active_state_slots"] == {"delivery_address": "123 Maple Street, Apt 4B"}


def test_adding_a_slot_to_a_state_dag_keeps_what_the_others_yield_to():
    from compiler import StateDAG

    dag = StateDAG(SCHEMA)
    dag.register_entity_schema("order_id", [r"order (#W\d+)"])
    assert dag.schema.yielding == {"shipping": ("profile",)}

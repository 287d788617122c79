"""Slots kept per entity: a schema's ``scope``, the register's chains per entity, the
retirement that follows them, and the header lines for the other entities."""

from __future__ import annotations

import pytest

from compiler.errors import SchemaError
from compiler.facts import Observation, Op, Provenance
from compiler.layout.emit import declared_in_header, state_lines, strip_compiled_one
from compiler.read import Message
from compiler.state.classify import Kind
from compiler.state.register import register
from compiler.state.retire import retire
from compiler.state.schema import load_schema

SCOPES = {"cabin": "booking"}
ACTED = Provenance.ACTED


def _schema(**cabin):
    return {
        "slots": {
            "booking": {"patterns": [r"booking ([A-Z0-9]{6})"]},
            "cabin": {"patterns": [r"in (economy|business)"], **cabin},
        }
    }


def _reg(*observations, speakers=None):
    return register(tuple(observations), scopes=SCOPES, speakers=speakers)


def _said(slot, value, turn, provenance=Provenance.INFERRED, op=Op.ASSERT):
    return Observation(slot, value, turn, provenance, op=op)


# -- the schema format


def test_a_slot_may_be_scoped_by_another_slot():
    assert load_schema(_schema(scope="booking")).scopes == {"cabin": "booking"}


def test_a_schema_without_scopes_keeps_its_digest():
    plain = load_schema(_schema())
    assert plain.scopes == {}
    assert load_schema(_schema(scope="booking")).digest != plain.digest
    assert plain.digest == load_schema(_schema()).digest


def test_it_refuses_a_scope_naming_no_slot():
    with pytest.raises(SchemaError, match="slot 'cabin': scope 'bookings' names no slot"):
        load_schema(_schema(scope="bookings"))


def test_it_refuses_a_slot_scoped_by_itself():
    with pytest.raises(SchemaError, match="slot 'cabin': scope cycle cabin → cabin"):
        load_schema(_schema(scope="cabin"))


def test_it_refuses_a_cycle_of_scopes_naming_the_chain():
    data = _schema(scope="booking")
    data["slots"]["booking"]["scope"] = "cabin"
    with pytest.raises(SchemaError, match="scope cycle booking → cabin → booking"):
        load_schema(data)


def test_it_refuses_a_scope_that_is_not_a_name():
    with pytest.raises(SchemaError, match="slot 'cabin': 'scope' must be the name"):
        load_schema(_schema(scope=["booking"]))


def test_the_shipped_travel_schema_keeps_a_cabin_per_reservation():
    assert load_schema("travel").scopes == {"cabin_class": "active_reservation"}


# -- the register


def test_a_value_for_another_entity_supersedes_nothing():
    reg = _reg(
        _said("booking", "AAA111", 0),
        _said("cabin", "economy", 0),
        _said("booking", "BBB222", 2),
        _said("cabin", "business", 2),
    )
    assert [(e.slot, e.value, e.entity, e.live) for e in reg.history] == [
        ("booking", "AAA111", None, False),
        ("cabin", "economy", "AAA111", True),
        ("booking", "BBB222", None, True),
        ("cabin", "business", "BBB222", True),
    ]


def test_the_current_entity_is_active_and_the_others_are_listed_apart():
    reg = _reg(
        _said("booking", "AAA111", 0),
        _said("cabin", "economy", 0),
        _said("booking", "BBB222", 2),
        _said("cabin", "business", 2),
    )
    assert [(e.slot, e.value) for e in reg.active] == [("booking", "BBB222"), ("cabin", "business")]
    assert [(e.entity, e.value) for e in reg.others] == [("AAA111", "economy")]


def test_returning_to_an_entity_finds_its_value_again():
    reg = _reg(
        _said("booking", "AAA111", 0),
        _said("cabin", "economy", 0),
        _said("booking", "BBB222", 2),
        _said("cabin", "business", 2),
        _said("booking", "aaa111", 4),
    )
    assert [(e.slot, e.value) for e in reg.active] == [("booking", "aaa111"), ("cabin", "economy")]
    assert [(e.entity, e.value) for e in reg.others] == [("BBB222", "business")]


def test_a_weaker_value_conflicts_only_with_its_own_entitys():
    reg = _reg(
        _said("booking", "AAA111", 0, ACTED),
        _said("cabin", "business", 0, ACTED),
        _said("booking", "BBB222", 2, ACTED),
        _said("cabin", "economy", 3),
    )
    assert reg.conflicts == ()
    assert [(e.entity, e.value) for e in reg.history if e.slot == "cabin" and e.live] == [
        ("AAA111", "business"),
        ("BBB222", "economy"),
    ]


def test_a_value_said_before_any_entity_is_the_next_entitys():
    reg = _reg(_said("cabin", "business", 1), _said("booking", "AAA111", 3))
    assert [(e.slot, e.value, e.entity) for e in reg.active] == [
        ("booking", "AAA111", None),
        ("cabin", "business", "AAA111"),
    ]
    assert reg.others == ()


def test_the_entity_named_in_the_same_turn_takes_the_value():
    # the action path reads the cabin before the reservation id in one update call
    reg = _reg(
        _said("booking", "AAA111", 0),
        _said("cabin", "business", 4, ACTED),
        _said("booking", "BBB222", 4, ACTED),
    )
    assert [(e.entity, e.value) for e in reg.history if e.slot == "cabin"] == [
        ("BBB222", "business")
    ]


def test_an_ended_entitys_values_are_not_listed():
    reg = _reg(
        _said("booking", "AAA111", 0),
        _said("cabin", "economy", 0),
        _said("booking", "BBB222", 2),
        _said("cabin", "business", 2),
        _said("booking", "AAA111", 4, ACTED, Op.END),
    )
    assert [(e.slot, e.value) for e in reg.active] == [("booking", "BBB222"), ("cabin", "business")]
    assert reg.others == ()


def test_a_fold_without_scopes_keys_by_slot_as_before():
    observations = (_said("booking", "AAA111", 0), _said("cabin", "economy", 0))
    observations += (_said("booking", "BBB222", 2), _said("cabin", "business", 2))
    reg = register(observations)
    assert [(e.value, e.live, e.entity) for e in reg.history if e.slot == "cabin"] == [
        ("economy", False, None),
        ("business", True, None),
    ]
    assert reg.others == () and reg.scopes == ()


# -- retirement


def test_a_request_about_one_entity_is_not_retired_by_another_entitys_value():
    speakers = ("user", "user", "assistant", "user", "assistant", "user", "assistant")
    reg = _reg(
        _said("booking", "AAA111", 1),
        _said("cabin", "business", 1),  # "upgrade AAA111 to business"
        _said("booking", "BBB222", 3),
        _said("cabin", "economy", 4),  # "BBB222 is in economy"
        speakers=dict(enumerate(speakers)),
    )
    kinds = (Kind.SPEECH,) * len(speakers)
    assert retire(reg, kinds, speakers=speakers) == ()


def test_a_later_request_for_the_same_entity_retires_the_earlier():
    speakers = ("user", "user", "assistant", "user", "assistant", "user", "assistant")
    reg = _reg(
        _said("booking", "AAA111", 0),
        _said("cabin", "business", 1),
        _said("cabin", "economy", 3),  # the user changed their mind, same booking
        speakers=dict(enumerate(speakers)),
    )
    kinds = (Kind.SPEECH,) * len(speakers)
    retired = retire(reg, kinds, speakers=speakers)
    assert [(r.turn, r.reason) for r in retired] == [(1, "cabin superseded by turn 3")]


# -- the header


def _two_bookings():
    return _reg(
        _said("booking", "AAA111", 0),
        _said("cabin", "economy", 0),
        _said("booking", "BBB222", 2),
        _said("cabin", "business", 2, Provenance.DECLARED),
    )


def test_the_header_leads_another_entitys_line_with_the_entity():
    assert state_lines(_two_bookings()) == [
        '  - booking = "BBB222" (turn 2 [inferred])',
        '  - cabin = "business" (turn 2 [declared])',
        '  - booking "AAA111": cabin = "economy" (turn 0 [inferred])',
    ]


def test_a_header_with_other_entities_is_stripped_whole():
    header = "[ACTIVE_AGENT_STATE]\n" + "\n".join(state_lines(_two_bookings()))
    stripped, changed = strip_compiled_one(Message("system", header + "\n\nBe kind."))
    assert changed and stripped.content == "Be kind."


def test_a_declared_value_is_read_back_only_from_the_current_entitys_line():
    lines = state_lines(_two_bookings())
    lines[-1] = lines[-1].replace("[inferred]", "[declared]")
    header = "[ACTIVE_AGENT_STATE]\n" + "\n".join(lines)
    assert declared_in_header(header) == (("cabin", "business", Op.ASSERT),)


# -- a call that begins an entity


def test_a_starting_call_needs_no_argument():
    data = _schema(scope="booking")
    data["slots"]["booking"]["actions"] = [{"tool": "book", "effect": "starts"}]
    (action,) = load_schema(data).slot("booking").actions
    assert (action.tool, action.argument, action.effect.value) == ("book", "", "starts")


def test_what_a_booking_sets_is_the_new_reservations_not_the_one_in_hand():
    reg = _reg(
        _said("booking", "AAA111", 0),
        _said("cabin", "economy", 0),
        _said("cabin", "business", 4, ACTED),  # book(cabin=business)
        _said("booking", "", 4, ACTED, Op.START),
        _said("booking", "NEW999", 6),  # "your reservation NEW999 is booked"
    )
    assert [(e.slot, e.value) for e in reg.active] == [("booking", "NEW999"), ("cabin", "business")]
    assert [(e.entity, e.value) for e in reg.others] == [("AAA111", "economy")]
    assert [(e.value, e.superseded_by) for e in reg.history if e.slot == "booking"] == [
        ("AAA111", 4),
        ("NEW999", None),
    ]


def test_telemetry_names_the_entity_of_a_scoped_slots_history_only():
    from compiler import compile_messages

    messages = [
        {"role": "user", "content": "My reservation ID is AAA111. Please upgrade to business."},
        {"role": "assistant", "content": "Reservation ID: BBB222 is booked in economy."},
        {"role": "user", "content": "Thanks."},
    ]
    _, telemetry = compile_messages(messages, schema="travel")
    history = telemetry["state_history"]
    assert [(row["value"], row.get("entity")) for row in history["cabin_class"]] == [
        ("business", "AAA111"),
        ("economy", "BBB222"),
    ]
    assert "entity" not in history["active_reservation"][0]

"""Ground truth from the environment's records: the rules on small cases, then a real slice.

The slice (tests/fixtures/records, see its PROVENANCE.md) is real tau-bench data cut so
that each transcript scores exactly as it does in the full corpus. Register values
follow the shipped schemas, which are refitted; what is asserted here is the scorer's
behaviour on cases whose reading does not depend on a pattern's fine print.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from compiler.facts import Provenance
from compiler.read.messages import Message
from compiler.state.register import Entry
from labelling.bench import records
from labelling.bench.records import score_entry
from labelling.bench.records_db import (
    NO_RECORD_AFTER,
    NO_RECORD_FIELD,
    Bucket,
    Database,
    Kind,
    Snapshot,
)
from labelling.measurement.records_report import score_records

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "records"
EMPTY = Database.of({Kind.RESERVATION: {}, Kind.USER: {}})


def _reservation(cabin: str, **extra) -> dict:
    return {"reservation_id": "ABC123", "flights": [], "cabin": cabin, **extra}


def _entry(slot: str, value: str, turn: int, provenance=Provenance.INFERRED) -> Entry:
    return Entry(slot, value, turn, provenance, (turn,))


def _bucket(entry: Entry, states: list[Snapshot], schema: str = "travel") -> tuple:
    return score_entry(entry, states, EMPTY, schema)[:2]


@pytest.fixture(scope="module")
def airline() -> dict:
    return score_records(FIXTURES, "airline")


@pytest.fixture(scope="module")
def retail() -> dict:
    return score_records(FIXTURES, "retail")


def test_a_value_is_corroborated_by_a_record_made_after_its_turn():
    states = [
        Snapshot(-1, Kind.RESERVATION, "ABC123", _reservation("economy")),
        Snapshot(9, Kind.RESERVATION, "ABC123", _reservation("business")),
    ]
    assert _bucket(_entry("cabin_class", "business", 4), states) == (Bucket.CORROBORATED, "")


def test_a_value_is_corroborated_by_the_record_just_before_its_turn():
    states = [Snapshot(2, Kind.RESERVATION, "ABC123", _reservation("economy"))]
    assert _bucket(_entry("cabin_class", "Economy", 5), states) == (Bucket.CORROBORATED, "")


def test_a_record_replaced_before_the_turn_does_not_corroborate():
    states = [
        Snapshot(1, Kind.RESERVATION, "ABC123", _reservation("economy")),
        Snapshot(3, Kind.RESERVATION, "ABC123", _reservation("business")),
        Snapshot(8, Kind.RESERVATION, "ABC123", _reservation("business")),
    ]
    assert _bucket(_entry("cabin_class", "economy", 5), states)[0] is Bucket.CONTRADICTED


def test_no_record_at_or_after_the_turn_is_unverifiable_not_contradicted():
    states = [Snapshot(1, Kind.RESERVATION, "ABC123", _reservation("economy"))]
    assert _bucket(_entry("cabin_class", "business", 5), states) == (
        Bucket.UNVERIFIABLE,
        NO_RECORD_AFTER,
    )


def test_no_record_holding_the_slot_is_unverifiable():
    assert _bucket(_entry("cabin_class", "business", 5), []) == (
        Bucket.UNVERIFIABLE,
        NO_RECORD_FIELD,
    )


def test_a_slot_without_a_record_field_is_unchecked():
    assert _bucket(_entry("seat", "4A", 1), [])[0] is Bucket.UNCHECKED


@pytest.mark.parametrize(
    ("slot", "said", "recorded"),
    [
        ("flight_date", "May 20, 2024", "2024-05-20"),
        ("flight_date", "20th of May", "2024-05-20"),
        ("cabin_class", "basic economy", "basic_economy"),
        ("flight_number", "hat136", "HAT136"),
        ("payment_method", "credit card", ("credit_card_4421486", "visa")),
        ("payment_method", "Visa", ("credit_card_4421486", "visa")),
        ("payment_method", "gift card balance", ("gift_card_8633125", None)),
        ("payment_method", "PayPal account", ("paypal_5334408", None)),
        ("delivery_address", "760 Elm Ave", {"address1": "760 Elm Avenue", "city": "X"}),
        ("delivery_address", "464 Oak Street, Suite 664", {"address1": "464 Oak Street"}),
    ],
)
def test_it_compares_what_means_the_same_as_the_same(slot, said, recorded):
    assert records.same(slot, said, recorded)


@pytest.mark.parametrize(
    ("slot", "said", "recorded"),
    [
        ("flight_date", "2024-05-07T13:04:42", "2024-05-07"),
        ("cabin_class", "economy", "basic_economy"),
        ("payment_method", "Visa", ("credit_card_4421486", "mastercard")),
        ("payment_method", "gift card", ("paypal_5334408", None)),
        ("delivery_address", "761 Elm Avenue", {"address1": "760 Elm Avenue"}),
    ],
)
def test_it_keeps_apart_what_differs(slot, said, recorded):
    assert not records.same(slot, said, recorded)


def test_it_reads_record_states_from_tool_results_and_the_database():
    db = Database.of(
        {Kind.RESERVATION: {"ABC123": _reservation("economy")}, Kind.USER: {"u_1": {}}}
    )
    messages = (
        Message("user", "reservation ABC123"),
        Message("tool", "u_1"),
        Message("tool", json.dumps(_reservation("business"))),
        Message("tool", "Error: reservation not found"),
    )
    states = records.snapshots(messages, db)
    assert [(s.turn, s.kind.value, s.key) for s in states] == [
        (-1, "reservation", "ABC123"),
        (-1, "user", "u_1"),
        (2, "reservation", "ABC123"),
    ]


def test_the_rate_is_over_the_decidable_ones_only(airline):
    total = airline["total"]
    decidable = total["corroborated"] + total["contradicted"]
    assert total["rate"]["decidable"] == decidable
    assert total["rate"]["rate"] == round(total["corroborated"] / decidable, 4)
    assert sum(total[b.value] for b in Bucket) == total["n"] == airline["extractions"]


def test_declared_acted_and_inferred_are_reported_apart(airline):
    by = airline["by_provenance"]
    assert sum(by[p]["n"] for p in ("declared", "acted", "inferred")) == airline["extractions"]
    assert by["acted"]["n"] > 0 and by["inferred"]["n"] > 0
    assert by["declared"]["n"] == 0
    assert "no assistant turn" in airline["provenance_notes"]["declared"]


def test_a_booking_is_corroborated_by_the_record_the_booking_returned(airline):
    # task0-trial0 books reservation HATHAT; it exists only in the tool result after it.
    scored = score_records(FIXTURES, "airline", limit=1)
    assert scored["by_slot"]["active_reservation"]["corroborated"] >= 1
    assert scored["total"]["contradicted"] == 0


def test_a_cabin_change_is_read_from_the_prices_the_environment_charged(airline):
    # task6-trial0: update_reservation_flights(cabin="economy") returns the reservation
    # with its cabin field still "business" and every flight priced in economy.
    case = [
        c
        for c in airline["contradicted"]
        if c["transcript"].endswith("#task6-trial0") and c["slot"] == "cabin_class"
    ]
    assert case == []
    assert airline["by_slot"]["cabin_class"]["contradicted"] == 0


def test_a_record_priced_in_one_cabin_corroborates_it_against_its_cabin_field():
    flights = {"HAT1": {"dates": {"2024-05-24": {"prices": {"economy": 105, "business": 496}}}}}
    db = Database.of({Kind.FLIGHT: flights})
    leg = {"flight_number": "HAT1", "date": "2024-05-24", "price": 105}
    states = [Snapshot(7, Kind.RESERVATION, "ABC123", _reservation("business", flights=[leg]))]
    entry = _entry("cabin_class", "economy", 6, Provenance.ACTED)
    assert score_entry(entry, states, db, "travel")[:2] == (Bucket.CORROBORATED, "")


def test_a_record_whose_prices_name_no_cabin_is_read_by_its_cabin_field():
    flights = {"HAT1": {"dates": {"2024-05-24": {"prices": {"economy": 105, "business": 496}}}}}
    db = Database.of({Kind.FLIGHT: flights})
    leg = {"flight_number": "HAT1", "date": "2024-05-24", "price": 80}
    states = [Snapshot(7, Kind.RESERVATION, "ABC123", _reservation("business", flights=[leg]))]
    entry = _entry("cabin_class", "economy", 6, Provenance.ACTED)
    assert score_entry(entry, states, db, "travel")[0] is Bucket.CONTRADICTED


def test_the_final_register_is_checked_against_the_gold_actions(airline):
    gold = airline["gold"]
    assert gold["available"]
    # tasks 13 and 24 have no gold action that names a tracked slot; few-shot has no task
    assert gold["transcripts"] == 3
    assert sum(gold["total"].values()) == gold["pairs"]


def test_the_action_path_is_said_to_be_unavailable_in_display_text(retail):
    assert retail["by_provenance"]["acted"]["n"] == 0
    assert retail["provenance_notes"]["acted"].startswith("not available: all 30 tool calls")
    assert retail["gold"] == {
        "available": False,
        "why": "no transcript in this corpus carries info.task.actions",
    }


def test_a_refund_asked_to_a_gift_card_and_recorded_to_paypal_is_contradicted(retail):
    [case] = retail["contradicted"]
    assert (case["slot"], case["value"]) == ("payment_method", "gift card")
    assert case["after"][0]["values"] == ["paypal_2433177", "paypal_2433177"]


def test_addresses_that_stop_at_the_street_line_are_counted(retail):
    addresses = retail["addresses"]
    assert 0 < addresses["street_line_only"] <= addresses["corroborated"]


def test_the_command_prints_every_bucket_with_its_n(capsys):
    call_command("score_records", "airline", "--corpora", str(FIXTURES))
    out = capsys.readouterr().out
    assert "RECORDS  airline (schema travel)" in out
    assert "rate over decidable" in out and "(n=" in out and "95% CI" in out
    assert "GOLD  final register vs info.task.actions" in out
    assert "CONTRADICTED" in out and "unapplied" in out


def test_the_command_emits_json(capsys):
    call_command("score_records", "retail", "--corpora", str(FIXTURES), "--json")
    report = json.loads(capsys.readouterr().out)
    assert (report["domain"], report["transcripts"]) == ("retail", 6)
    assert report["command"].startswith("python manage.py score_records retail")


def test_the_command_refuses_a_corpora_directory_without_the_files(tmp_path):
    with pytest.raises(CommandError, match="no corpus file"):
        call_command("score_records", "retail", "--corpora", str(tmp_path))

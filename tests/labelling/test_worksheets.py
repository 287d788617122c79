"""Building worksheets: spread across slots, no repeats, nothing judged twice, shortfalls named."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from labelling.labels import import_labels
from labelling.models import MemberRole, Worksheet
from labelling.worksheets import Sampling, build_worksheet

pytestmark = pytest.mark.django_db

TRAVEL_SLOTS = [
    "active_reservation",
    "cabin_class",
    "destination_airport",
    "flight_date",
    "flight_number",
    "origin_airport",
    "passenger_id",
]


def keys(worksheet):
    rows = worksheet.rows.select_related("extraction__transcript").order_by("position")
    return [
        (r.extraction.slot, r.extraction.value, r.extraction.transcript.external_id) for r in rows
    ]


def build(corpus, creator, **sampling):
    return build_worksheet(
        corpus, "travel", name="w", creator=creator, sampling=Sampling(**sampling)
    )


def test_it_takes_slots_round_robin_up_to_the_budget(worksheet):
    assert [slot for slot, _, _ in keys(worksheet)] == TRAVEL_SLOTS
    assert worksheet.shortfalls == []


def test_it_takes_one_row_per_value_and_per_transcript_within_a_slot(airline, maintainer):
    worksheet = build(airline, maintainer, per_slot_budget=10)
    by_slot: dict[str, list] = {}
    for slot, value, transcript in keys(worksheet):
        by_slot.setdefault(slot, []).append((value.casefold(), transcript))
    for rows in by_slot.values():
        assert len({value for value, _ in rows}) == len(rows)
        assert len({transcript for _, transcript in rows}) == len(rows)


def test_it_skips_rows_already_on_another_worksheet(worksheet, airline, maintainer):
    second = build(airline, maintainer, per_slot_budget=1)
    assert set(keys(second)).isdisjoint(keys(worksheet))
    assert second.sampling["labelled_or_on_another_worksheet"] == 7


def test_it_skips_rows_already_labelled(airline, maintainer, worksheet):
    labelled = worksheet.rows.get(position=2).extraction
    import_labels(
        {
            "format": "contextgc-labels/1",
            "corpus": airline.name,
            "schema": "travel",
            "labels": [
                {
                    "transcript": labelled.transcript.external_id,
                    "family": labelled.transcript.family,
                    "slot": labelled.slot,
                    "turn": labelled.turn,
                    "value": labelled.value,
                    "provenance": labelled.provenance,
                    "role": labelled.role,
                    "verdict": "correct",
                    "note": "",
                    "reviewers": ["alice"],
                    "adjudicated_by": "",
                    "suggestion_offered": False,
                    "schema_digest": worksheet.schema_digest,
                    "compiler_version": "0.1.0",
                    "quote": labelled.quote,
                }
            ],
        }
    )
    worksheet.delete()
    again = build(airline, maintainer, per_slot_budget=1)
    assert (labelled.slot, labelled.value, labelled.transcript.external_id) not in keys(again)
    assert again.sampling["labelled_or_on_another_worksheet"] == 1


def test_a_short_slot_in_a_window_is_named_with_the_cause_left_open(airline, maintainer):
    worksheet = build(airline, maintainer, per_slot_budget=5, limit=1)
    short = {s["slot"]: s for s in worksheet.shortfalls}
    assert short["passenger_id"] == {
        "slot": "passenger_id",
        "budget": 5,
        "rows": 1,
        "reason": "passenger_id: 1 of 5 rows from the first 1 of 4 transcripts — the window "
        "may be too small, or the corpus may hold no more; widen it to tell.",
    }


def test_a_short_slot_over_the_whole_corpus_is_named_as_exhausted(airline, maintainer):
    worksheet = build(airline, maintainer, per_slot_budget=50)
    short = {s["slot"]: s for s in worksheet.shortfalls}
    assert set(short) == set(TRAVEL_SLOTS)
    assert short["passenger_id"]["reason"] == (
        "passenger_id: 2 of 50 rows — the whole corpus (4 transcripts) was read, so it holds "
        "no more unlabelled, distinct values for this slot."
    )


def test_a_seed_shuffles_the_candidates_reproducibly(airline, maintainer):
    first = keys(build(airline, maintainer, per_slot_budget=2, seed=7))
    Worksheet.objects.all().delete()
    assert keys(build(airline, maintainer, per_slot_budget=2, seed=7)) == first


def test_each_row_quotes_the_registering_turn_and_its_neighbours(row):
    quote = row.extraction.quote
    assert [q["turn"] for q in quote] == [13, 14, 15]
    assert quote[1]["registering"] is True
    assert "JG7FMM" in quote[1]["text"]


def test_a_suggestion_is_evidence_with_its_limits_never_a_verdict(row):
    assert row.suggestion == {
        "value_in_turn": True,
        "role": "assistant",
        "machine_output": False,
        "reading": "consistent",
        "limits": "A text check, not a judgement: it cannot see whether the agent had already "
        "moved on, which is how every 'confirmed error' this project once carried was "
        "mislabelled.",
    }
    assert row.verdicts.count() == 0


def test_without_suggest_rows_carry_no_suggestion(airline, maintainer):
    worksheet = build(airline, maintainer, per_slot_budget=1)
    assert set(worksheet.rows.values_list("suggestion", flat=True)) == {None}


def test_the_build_page_builds_a_worksheet_with_its_members(
    login, maintainer, airline, reviewer, other_reviewer, adjudicator
):
    response = login(maintainer).post(
        "/labelling/worksheets/new",
        {
            "name": "from the page",
            "corpus": airline.pk,
            "schema": "travel",
            "per_slot_budget": 2,
            "reviews_per_row": 2,
            "reviewers": [reviewer.pk, other_reviewer.pk],
            "adjudicators": [adjudicator.pk],
        },
    )
    worksheet = Worksheet.objects.get()
    assert response.status_code == 302
    assert response["Location"] == f"/labelling/worksheets/{worksheet.pk}/"
    roles = dict(worksheet.memberships.values_list("user__username", "role"))
    assert roles == {
        "alice": MemberRole.REVIEWER,
        "bob": MemberRole.REVIEWER,
        "carol": MemberRole.ADJUDICATOR,
    }
    assert worksheet.rows.count() == 14


def test_the_build_page_refuses_more_reviews_per_row_than_reviewers(
    login, maintainer, airline, reviewer
):
    response = login(maintainer).post(
        "/labelling/worksheets/new",
        {
            "name": "x",
            "corpus": airline.pk,
            "schema": "travel",
            "per_slot_budget": 2,
            "reviews_per_row": 2,
            "reviewers": [reviewer.pk],
        },
    )
    assert response.status_code == 422
    assert "2 reviews per row need at least 2 reviewers." in response.content.decode()
    assert Worksheet.objects.count() == 0


def test_the_build_page_requires_the_maintainer_permission(login, reviewer):
    assert login(reviewer).get("/labelling/worksheets/new").status_code == 403


def test_the_worksheet_page_names_short_slots(login, maintainer, airline):
    worksheet = build(airline, maintainer, per_slot_budget=5, limit=1)
    response = login(maintainer).get(f"/labelling/worksheets/{worksheet.pk}/")
    assert "Slots short of their budget" in response.content.decode()
    assert "widen it to tell" in response.content.decode()


def test_the_command_builds_a_worksheet_and_names_short_slots(
    airline, maintainer, reviewer, other_reviewer
):
    out = io.StringIO()
    call_command(
        "build_worksheet", "airline-slice", "travel", "--name", "cli", "--creator", "maria",
        "--per-slot", "5", "--limit", "1", "--reviewer", "alice", "--reviewer", "bob",
        "--reviews-per-row", "2", stdout=out,
    )  # fmt: skip
    worksheet = Worksheet.objects.get()
    lines = out.getvalue().splitlines()
    assert lines[0] == f"worksheet {worksheet.pk}: {worksheet.rows.count()} rows"
    assert lines[1].startswith("  short: active_reservation: ")
    assert worksheet.reviews_per_row == 2

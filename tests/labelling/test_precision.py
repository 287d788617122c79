"""Precision: rows versus independent units, Wilson intervals, warnings, label drift."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command

from labelling.compiling import compile_corpus
from labelling.labels import FORMAT, import_labels
from labelling.precision import precision_report, wilson

pytestmark = pytest.mark.django_db


def label_rows(airline, verdicts: dict) -> list[dict]:
    """Label rows for real extractions: ``{(transcript, slot, turn): verdict}``."""
    compile_run = compile_corpus(airline, "travel")
    rows = []
    for (transcript, slot, turn), verdict in verdicts.items():
        e = compile_run.extractions.select_related("transcript").get(
            transcript__external_id=transcript, slot=slot, turn=turn
        )
        rows.append(
            {
                "transcript": transcript,
                "family": e.transcript.family,
                "slot": slot,
                "turn": turn,
                "value": e.value,
                "provenance": e.provenance,
                "role": e.role,
                "verdict": verdict,
                "note": "",
                "reviewers": ["alice"],
                "adjudicated_by": "",
                "suggestion_offered": False,
                "schema_digest": compile_run.schema_digest,
                "compiler_version": compile_run.compiler_version,
                "quote": e.quote,
            }
        )
    return rows


def store(airline, verdicts: dict, extra=()):
    rows = [*label_rows(airline, verdicts), *extra]
    import_labels({"format": FORMAT, "corpus": airline.name, "schema": "travel", "labels": rows})


# Two trials of task 2 say the same passenger id at the same turn: one unit, not two.
SAME_UNIT = {
    ("task2-trial0", "passenger_id", 3): "correct",
    ("task2-trial1", "passenger_id", 3): "incorrect",
}


def test_wilson_matches_the_published_interval():
    low, high = wilson(36, 36)
    assert (round(100 * low), round(100 * high)) == (90, 100)


def test_rows_from_one_family_turn_and_slot_collapse_to_one_unit(airline):
    store(airline, SAME_UNIT)
    figure = precision_report(airline, "travel").overall
    assert (figure.rows, figure.correct, figure.incorrect) == (2, 1, 1)
    assert (figure.unit_n, figure.unit_correct) == (1, 0)  # the incorrect row sinks its unit


def test_precision_is_reported_per_slot_and_overall(airline):
    store(
        airline,
        {
            ("task2-trial0", "passenger_id", 3): "correct",
            ("task4-trial0", "passenger_id", 3): "correct",
            ("task2-trial0", "cabin_class", 1): "incorrect",
            ("task4-trial0", "cabin_class", 12): "unclear",
        },
    )
    report = precision_report(airline, "travel")
    assert [(f.name, f.rows, f.correct, f.unclear) for f in report.slots] == [
        ("cabin_class", 1, 0, 1),
        ("passenger_id", 2, 2, 0),
    ]
    assert (report.overall.rows, report.overall.unit_n, report.overall.unit_correct) == (3, 3, 2)
    assert report.overall.unclear == 1  # counted, never judged


def test_a_small_n_and_a_wide_interval_are_warned_about(airline):
    store(airline, SAME_UNIT)
    assert precision_report(airline, "travel").overall.warnings == [
        "n is inflated: 2 rows collapse to 1 independent units",
        "n is small (1 < 20 units): read the interval, not the point",
        "the 95% interval is 79 points wide",
    ]


def test_a_label_that_no_longer_reproduces_is_listed_not_counted(airline):
    drifted = label_rows(airline, {("task4-trial0", "cabin_class", 12): "incorrect"})[0]
    drifted["value"] = "first"  # what an older pattern read out of "the first one-stop option"
    store(airline, {("task2-trial0", "passenger_id", 3): "correct"}, extra=[drifted])
    report = precision_report(airline, "travel")
    assert report.labels == 2
    assert [(x.slot, x.value, x.verdict) for x in report.drifted] == [
        ("cabin_class", "first", "incorrect")
    ]
    assert (report.overall.rows, report.overall.incorrect) == (1, 0)


def test_labels_under_another_schema_digest_are_noted(airline):
    row = label_rows(airline, {("task2-trial0", "passenger_id", 3): "correct"})[0]
    row["schema_digest"] = "0ld0ld0ld0ld0ld0"
    store(airline, {}, extra=[row])
    (note,) = precision_report(airline, "travel").notes
    assert note.startswith("labels were made under schema digests 0ld0ld0ld0ld0ld0;")


def test_the_precision_page_shows_rows_units_interval_and_drift(login, maintainer, airline):
    store(airline, SAME_UNIT)
    response = login(maintainer).get(f"/labelling/precision?corpus={airline.pk}&schema=travel")
    body = response.content.decode()
    assert response.status_code == 200
    assert '<tr class="figure-row" data-slot="all slots">' in body
    assert "n is inflated: 2 rows collapse to 1 independent units" in body
    assert "0–79%" in body
    assert "Label drift" in body


def test_the_command_prints_rows_units_and_intervals(airline):
    store(airline, SAME_UNIT)
    out = io.StringIO()
    call_command("precision_report", "airline-slice", "travel", stdout=out)
    lines = out.getvalue().splitlines()
    assert lines[0] == "PRECISION  airline-slice × travel  (2 labels)"
    assert lines[1] == (
        "  all slots              rows   50% (n=2)   units    0% (n=1, 95% CI 0-79%)"
    )
    assert "  DRIFTED (not counted)  0" in lines


def test_the_command_prints_json(airline):
    store(airline, SAME_UNIT)
    out = io.StringIO()
    call_command("precision_report", "airline-slice", "travel", "--json", stdout=out)
    data = json.loads(out.getvalue())
    assert data["overall"]["units"] == 1
    assert data["overall"]["rows"] == 2
    assert data["drifted"] == []

"""Retirement worksheets: one row per turn a compact compile retired, judged safe to drop
or still needed, exported and imported as a label file, and the retirement precision of
the committed label files as the reports page shows it and ``measure`` prints it."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command

from compiler import load_schema, run
from labelling.compiling import messages_of
from labelling.labels import ExportRefused, export_labels, export_worksheet, import_labels
from labelling.measurement.measure_render import retirement_lines, retirement_rows
from labelling.models import RetirementLabel, Verdict, WorksheetKind
from labelling.precision import figure_data, retirement_figures
from labelling.retirement_labels import LABEL_FILES, read_files, retirement_precision
from labelling.verdicts import record_verdict
from labelling.worksheets import Sampling, build_retirement_worksheet
from tests.personas import AIRLINE

pytestmark = pytest.mark.django_db

HX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def retirements(airline, maintainer, reviewer):
    return build_retirement_worksheet(
        airline,
        "travel",
        name="airline retirements",
        creator=maintainer,
        sampling=Sampling(per_slot_budget=100, seed=7),
        reviewers=[reviewer],
    )


def retired_in(corpus) -> set[tuple[str, int]]:
    """(transcript, turn) of every turn the compiler retires in ``corpus``, asked of it."""
    schema = load_schema("travel")
    return {
        (t.external_id, r.turn)
        for t in corpus.transcripts.all()
        for r in run(messages_of(t), schema=schema, mode="compact").retired
    }


def judge_all(worksheet, reviewer, needed_at=(1,)):
    for row in worksheet.rows.order_by("position"):
        verdict = "still_needed" if row.position in needed_at else "safe_to_drop"
        record_verdict(row, reviewer, verdict, f"row {row.position}")


def test_it_makes_a_row_for_every_retired_turn(retirements, airline):
    rows = retirements.rows.select_related("retirement__transcript")
    found = {(r.retirement.transcript.external_id, r.retirement.turn) for r in rows}
    assert retirements.kind == WorksheetKind.RETIREMENT
    assert found == retired_in(airline) and found


def test_each_row_quotes_the_retired_turn_and_the_turns_that_superseded_it(retirements):
    for row in retirements.rows.select_related("retirement"):
        quoted = {q["turn"]: q for q in row.retirement.quote}
        assert quoted[row.retirement.turn]["retired"] is True
        for turn in row.retirement.superseding_turns:
            assert quoted[turn]["superseding"] is True


def test_the_same_seed_draws_the_same_rows_in_the_same_order(airline, maintainer, retirements):
    first = [(r.retirement_id, r.position) for r in retirements.rows.order_by("position")]
    retirements.delete()
    again = build_retirement_worksheet(
        airline, "travel", name="again", creator=maintainer, sampling=Sampling(100, seed=7)
    )
    assert [(r.retirement_id, r.position) for r in again.rows.order_by("position")] == first


def test_turns_already_on_a_worksheet_are_not_drawn_again(airline, maintainer, retirements):
    again = build_retirement_worksheet(
        airline, "travel", name="again", creator=maintainer, sampling=Sampling(100, seed=7)
    )
    assert again.rows.count() == 0
    assert again.sampling["labelled_or_on_another_worksheet"] == retirements.rows.count()


def test_it_stores_a_retirement_verdict(retirements, reviewer):
    row = retirements.rows.get(position=1)
    record_verdict(row, reviewer, "still_needed", "the request is pending")
    stored = Verdict.objects.get(row=row, reviewer=reviewer)
    assert (stored.verdict, stored.note, stored.version) == (
        "still_needed",
        "the request is pending",
        1,
    )


def test_it_refuses_an_extraction_verdict_on_a_retired_turn(retirements, reviewer):
    with pytest.raises(ValueError, match="not one of safe_to_drop, still_needed"):
        record_verdict(retirements.rows.get(position=1), reviewer, "correct")


def test_export_is_refused_while_a_retired_turn_is_unjudged(retirements):
    with pytest.raises(ExportRefused, match=r"retired turn .* unlabelled"):
        export_worksheet(retirements)


def test_a_retirement_label_file_round_trips(retirements, reviewer, airline):
    judge_all(retirements, reviewer)
    exported = export_worksheet(retirements)
    created = import_labels(exported, worksheet=retirements)
    again = export_labels(airline, "travel", WorksheetKind.RETIREMENT)
    assert (created.created, created.unchanged) == (retirements.rows.count(), 0)
    assert again == exported
    assert exported["kind"] == "retirement" and exported["rule"] == retirements.rule
    assert import_labels(again).unchanged == retirements.rows.count()
    assert RetirementLabel.objects.filter(verdict="still_needed").count() == 1


def test_the_row_page_shows_both_turns(login, reviewer, retirements):
    row = retirements.rows.get(position=1)
    url = f"/labelling/worksheets/{retirements.pk}/rows/1/"
    body = login(reviewer).get(url).content.decode()
    assert 'id="retired-turn"' in body
    for turn in row.retirement.superseding_turns:
        assert f'data-superseding="{turn}"' in body
    assert 'value="safe_to_drop"' in body and 'value="still_needed"' in body
    assert 'value="correct"' not in body


def test_a_verdict_posted_from_the_row_page_is_stored(login, reviewer, retirements):
    url = f"/labelling/worksheets/{retirements.pk}/rows/1/"
    response = login(reviewer).post(url, {"verdict": "safe_to_drop", "version": 0}, **HX)
    assert response.status_code == 200
    assert Verdict.objects.get(row__worksheet=retirements, row__position=1).verdict == (
        "safe_to_drop"
    )


def test_the_transcript_page_marks_the_retired_and_superseding_turns(login, reviewer, retirements):
    row = retirements.rows.get(position=1)
    url = f"/labelling/worksheets/{retirements.pk}/rows/1/transcript"
    body = login(reviewer).get(url).content.decode()
    assert f'id="turn-{row.retirement.turn}"' in body
    flag = '<span class="flag">superseded it</span>'
    assert body.count(flag) == len(row.retirement.superseding_turns)


# -- the committed label files and the figures made from them --------------------------


# Every turn a compact compile retires in ../shared/corpora is judged: 86 when the files
# were last exported. Fewer rows than that means a file lost rows.
JUDGED_AT_EXPORT = 86


def test_the_committed_label_files_judge_every_retired_turn_under_a_rule():
    documents = read_files(LABEL_FILES)
    rows = [row for d in documents for row in d["labels"]]
    assert len(rows) >= JUDGED_AT_EXPORT
    assert {row["verdict"] for row in rows} <= {"safe_to_drop", "still_needed"}
    assert all(d["rule"] and d["provenance"] for d in documents)


def test_the_reports_page_shows_the_precision_of_the_exported_files(login, maintainer):
    body = login(maintainer).get("/labelling/reports/").content.decode()
    figures = [figure_data(f) for f in retirement_figures(read_files(LABEL_FILES))]
    for shown in retirement_rows({"figures": figures}):
        row = body[body.index(f'data-corpus="{shown["name"]}"') :].split("</tr>")[0]
        assert f">{shown['row_precision']}<" in row
        assert f">{shown['wilson95']}<" in row
        assert f">{shown['rows']}<" in row


def test_measure_prints_the_precision_of_the_exported_files():
    out = io.StringIO()
    call_command(
        "measure",
        str(AIRLINE),
        "--schema",
        "travel",
        "--corpora",
        str(AIRLINE.parent),
        "--no-peer",
        "--repeats",
        "1",
        stdout=out,
    )
    figures = [figure_data(f) for f in retirement_figures(read_files(LABEL_FILES))]
    expected = retirement_lines(
        {"source": str(LABEL_FILES), "files": len(read_files()), "figures": figures}
    )
    printed = out.getvalue()
    assert "\n".join(expected) in printed
    assert retirement_precision()["figures"][0]["rows"] == figures[0]["rows"]


def test_the_build_page_makes_a_retirement_worksheet(login, maintainer, reviewer, airline):
    response = login(maintainer).post(
        "/labelling/worksheets/new",
        {
            "name": "retired turns",
            "kind": "retirement",
            "corpus": airline.pk,
            "schema": "travel",
            "per_slot_budget": 2,
            "reviews_per_row": 1,
            "reviewers": [reviewer.pk],
        },
    )
    (sheet,) = airline.runs.get().worksheets.all()
    assert response.status_code == 302
    assert (sheet.kind, sheet.rows.count()) == (WorksheetKind.RETIREMENT, 2)
    assert sheet.rows.filter(extraction__isnull=False).count() == 0


def test_export_labels_writes_the_stored_retirement_labels(retirements, reviewer, airline):
    judge_all(retirements, reviewer, needed_at=())
    import_labels(export_worksheet(retirements), worksheet=retirements)
    out = io.StringIO()
    call_command(
        "export_labels", "--corpus", airline.name, "--schema", "travel", "--kind", "retirement",
        stdout=out,
    )  # fmt: skip
    document = json.loads(out.getvalue())
    assert document == export_worksheet(retirements)
    assert {row["verdict"] for row in document["labels"]} == {"safe_to_drop"}


def test_a_saved_measure_report_shows_the_retirement_precision_it_was_made_with(login, maintainer):
    from labelling.measurement.models import Report

    call_command(
        "measure", str(AIRLINE), "--schema", "travel", "--corpora", str(AIRLINE.parent),
        "--no-peer", "--repeats", "1", "--save", stdout=io.StringIO(), stderr=io.StringIO(),
    )  # fmt: skip
    report = Report.objects.get()
    body = login(maintainer).get(f"/labelling/reports/{report.pk}/").content.decode()
    (overall, *_) = retirement_rows(report.figures["retirement_precision"])
    assert 'id="retirement-precision"' in body
    assert f">{overall['wilson95']}<" in body and f">{overall['row_precision']}<" in body


def test_the_labels_export_downloads_the_retirement_label_file(
    login, maintainer, retirements, reviewer, airline
):
    judge_all(retirements, reviewer)
    import_labels(export_worksheet(retirements), worksheet=retirements)
    query = f"corpus={airline.pk}&schema=travel&kind=retirement"
    response = login(maintainer).get(f"/labelling/labels/export.json?{query}")
    assert response.status_code == 200
    assert json.loads(response.content) == export_worksheet(retirements)

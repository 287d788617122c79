"""Agreement, adjudication, and label files out and back in."""

from __future__ import annotations

import io
import json
from email.message import Message as EmailMessage

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.core.management.base import CommandError

from labelling.agreement import agreement
from labelling.labels import (
    ExportRefused,
    LabelImportRefused,
    dumps,
    export_labels,
    export_worksheet,
    import_labels,
    merge_worksheet,
    parse,
)
from labelling.models import Label
from labelling.verdicts import record_verdict, row_states

pytestmark = pytest.mark.django_db

HX = {"HTTP_HX_REQUEST": "true"}


def judge(worksheet, reviewer, other_reviewer, disagree_on=(1,)):
    """Both reviewers judge every row; they disagree on the rows named."""
    for row in worksheet.rows.order_by("position"):
        record_verdict(row, reviewer, "correct", "reads right")
        verdict = "incorrect" if row.position in disagree_on else "correct"
        record_verdict(row, other_reviewer, verdict)


def test_agreement_is_percent_and_kappa_per_pair(worksheet, reviewer, other_reviewer):
    judge(worksheet, reviewer, other_reviewer, disagree_on=(1, 2))
    (pair,) = agreement(row_states(worksheet))
    assert (pair.first, pair.second, pair.rows, pair.agreed) == ("alice", "bob", 7, 5)
    assert round(pair.percent, 1) == 71.4
    assert pair.kappa == 0.0  # alice said "correct" throughout: no agreement beyond chance


def test_the_agreement_page_shows_each_pair(
    login, adjudicator, worksheet, reviewer, other_reviewer
):
    judge(worksheet, reviewer, other_reviewer)
    body = login(adjudicator).get(f"/labelling/worksheets/{worksheet.pk}/agreement").content
    assert "alice × bob" in body.decode()
    assert "85.7%" in body.decode()


def test_the_disagreements_page_lists_only_disputed_rows(
    login, adjudicator, worksheet, reviewer, other_reviewer
):
    judge(worksheet, reviewer, other_reviewer, disagree_on=(3,))
    body = login(adjudicator).get(f"/labelling/worksheets/{worksheet.pk}/disagreements")
    text = body.content.decode()
    assert 'id="dispute-3"' in text
    assert text.count('class="card dispute ') == 1
    assert "reads right" in text  # the reviewers' notes are the adjudicator's evidence


def test_adjudicating_through_htmx_swaps_the_resolved_card(
    login, adjudicator, worksheet, reviewer, other_reviewer
):
    judge(worksheet, reviewer, other_reviewer)
    response = login(adjudicator).post(
        f"/labelling/worksheets/{worksheet.pk}/rows/1/adjudicate",
        {"verdict": "incorrect", "reason": "moved on"},
        **HX,
    )
    text = response.content.decode()
    assert response.status_code == 200
    assert text.lstrip().startswith('<article class="card dispute dispute-resolved"')
    assert "adjudicated: incorrect" in text
    assert worksheet.rows.get(position=1).adjudication.reason == "moved on"


def test_adjudicating_without_javascript_redirects_to_the_list(
    login, adjudicator, worksheet, reviewer, other_reviewer
):
    judge(worksheet, reviewer, other_reviewer)
    response = login(adjudicator).post(
        f"/labelling/worksheets/{worksheet.pk}/rows/1/adjudicate",
        {"verdict": "correct", "reason": "it was the booking"},
    )
    assert response.status_code == 302
    assert response["Location"] == f"/labelling/worksheets/{worksheet.pk}/disagreements"


def test_adjudicating_without_a_reason_is_refused(
    login, adjudicator, worksheet, reviewer, other_reviewer
):
    judge(worksheet, reviewer, other_reviewer)
    response = login(adjudicator).post(
        f"/labelling/worksheets/{worksheet.pk}/rows/1/adjudicate", {"verdict": "correct"}, **HX
    )
    assert response.status_code == 422
    assert not hasattr(worksheet.rows.get(position=1), "adjudication")


def test_export_refuses_while_rows_are_unlabelled_naming_them(worksheet, reviewer):
    record_verdict(worksheet.rows.get(position=1), reviewer, "correct")
    with pytest.raises(ExportRefused) as refused:
        export_worksheet(worksheet)
    assert len(refused.value.reasons) == 7
    assert refused.value.reasons[0] == (
        "row 1 (active_reservation = 'JG7FMM', task2-trial0 turn 14): unlabelled — 1 of 2 verdicts"
    )


def test_export_refuses_while_a_disagreement_is_unresolved_naming_it(
    worksheet, reviewer, other_reviewer
):
    judge(worksheet, reviewer, other_reviewer)
    with pytest.raises(ExportRefused) as refused:
        export_worksheet(worksheet)
    assert refused.value.reasons == [
        "row 1 (active_reservation = 'JG7FMM', task2-trial0 turn 14): reviewers disagree "
        "(alice correct, bob incorrect), not adjudicated"
    ]


def test_the_export_page_names_what_is_open(login, adjudicator, worksheet):
    response = login(adjudicator).get(f"/labelling/worksheets/{worksheet.pk}/export.json")
    assert response.status_code == 409
    assert "unlabelled — 0 of 2 verdicts" in response.content.decode()


def test_an_export_has_one_row_per_extraction_with_the_final_verdict(finished):
    document = export_worksheet(finished)
    assert list(document) == ["format", "corpus", "corpus_digest", "schema", "labels"]
    assert len(document["labels"]) == 7
    first = next(r for r in document["labels"] if r["slot"] == "active_reservation")
    quote = first.pop("quote")
    assert first == {
        "transcript": "task2-trial0",
        "family": "task2",
        "slot": "active_reservation",
        "turn": 14,
        "value": "JG7FMM",
        "provenance": "acted",
        "role": "assistant",
        "verdict": "incorrect",
        "note": "alice: reads right | adjudicated by carol: moved on by then",
        "reviewers": ["alice", "bob"],
        "adjudicated_by": "carol",
        "suggestion_offered": True,
        "schema_digest": finished.schema_digest,
        "compiler_version": "0.1.0",
    }
    assert [q["turn"] for q in quote] == [13, 14, 15]


def test_an_export_is_in_a_deterministic_order(finished):
    rows = export_worksheet(finished)["labels"]
    keys = [(r["transcript"], r["slot"], r["turn"], r["value"]) for r in rows]
    assert keys == sorted(keys)
    assert dumps(export_worksheet(finished)) == dumps(export_worksheet(finished))


def test_the_export_page_downloads_the_file(login, adjudicator, finished):
    response = login(adjudicator).get(f"/labelling/worksheets/{finished.pk}/export.json")
    assert response.status_code == 200
    assert response["Content-Disposition"] == (
        'attachment; filename="labels-airline-slice-travel.json"'
    )
    assert response.content.decode() == dumps(export_worksheet(finished))


def test_importing_an_export_round_trips_to_an_equal_export(finished, airline):
    exported = dumps(export_worksheet(finished))
    summary = import_labels(parse(exported))
    assert (summary.created, summary.unchanged) == (7, 0)
    assert dumps(export_labels(airline, "travel")) == exported


def test_importing_the_same_file_twice_changes_nothing(finished, airline):
    document = export_worksheet(finished)
    import_labels(document)
    assert import_labels(document).unchanged == 7
    assert Label.objects.count() == 7


def test_an_import_contradicting_a_stored_label_is_refused_whole(finished):
    document = export_worksheet(finished)
    import_labels(document)
    document["labels"][0]["verdict"] = "unclear"
    with pytest.raises(LabelImportRefused) as refused:
        import_labels(document)
    assert refused.value.reasons[0].endswith(
        "already labelled incorrect; this file differs in verdict"
    )
    assert Label.objects.filter(verdict="unclear").count() == 0


def test_an_import_refuses_rows_without_a_quote_or_with_unknown_verdicts(finished):
    document = export_worksheet(finished)
    document["labels"][0]["quote"] = []
    document["labels"][1]["verdict"] = "unlabelled"
    with pytest.raises(LabelImportRefused) as refused:
        import_labels(document)
    assert refused.value.reasons == [
        "labels[0]: no quote: a label must carry the turn it judged",
        "labels[1]: verdict 'unlabelled' is not one of correct, incorrect, unclear",
    ]
    assert Label.objects.count() == 0


@pytest.mark.parametrize(
    ("field", "given", "problem"),
    [
        ("transcript", ["x"], "transcript ['x'] is not in the corpus"),
        ("note", None, "note must be text, not NoneType"),
        ("note", 5, "note must be text, not int"),
        ("adjudicated_by", None, "adjudicated_by must be text, not NoneType"),
        ("schema_digest", {}, "schema_digest must be text, not dict"),
        ("turn", 2**31, "turn must be a whole number from 0 to 2147483647"),
        ("turn", True, "turn must be a whole number from 0 to 2147483647"),
        ("slot", "s" * 101, "slot is 101 characters; at most 100 are stored"),
        ("value", "a\x00b", "value holds a NUL character, which PostgreSQL cannot store"),
        ("value", "\ud800", "value holds a lone surrogate, which is not text"),
        ("suggestion_offered", "false", "suggestion_offered must be true or false"),
        ("reviewers", [1, None], "reviewers must be a list of names"),
        (
            "quote",
            [{"text": "a\x00"}],
            "quote holds a NUL character, which PostgreSQL cannot store",
        ),
        ("family", "elsewhere", "family 'elsewhere' is not the corpus's"),
    ],
)
def test_an_import_refuses_a_field_it_could_not_store_as_given(finished, field, given, problem):
    document = export_worksheet(finished)
    document["labels"][0][field] = given
    with pytest.raises(LabelImportRefused) as refused:
        import_labels(document)
    assert refused.value.reasons[0].startswith(f"labels[0]: {problem}")
    assert Label.objects.count() == 0


def test_an_import_the_form_refuses_is_a_422_not_a_500(login, maintainer, finished):
    document = export_worksheet(finished)
    document["labels"][0]["note"] = None
    upload = SimpleUploadedFile("labels.json", dumps(document).encode(), "application/json")
    response = login(maintainer).post("/labelling/labels/import", {"upload": upload})
    assert response.status_code == 422
    assert "labels[0]: note must be text, not NoneType" in response.content.decode()


def test_an_import_is_committed_as_durably_as_a_verdict(finished):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    if connection.vendor != "postgresql":  # (the setting exists only there)
        pytest.skip("a synchronous commit is asked of PostgreSQL; `bash scripts/test` runs it")
    with CaptureQueriesContext(connection) as queries:
        import_labels(export_worksheet(finished))
    said = [q["sql"] for q in queries.captured_queries]
    assert "SET LOCAL synchronous_commit TO on" in said


def test_an_import_that_loses_a_race_for_a_row_is_refused_not_a_500(finished, monkeypatch):
    from labelling import labels

    document = export_worksheet(finished)
    import_labels(document)
    document["labels"][0]["note"] = "changed"  # would be a refusal, if the row were seen
    monkeypatch.setattr(labels.Label.objects, "filter", lambda **_: Label.objects.none())
    with pytest.raises(LabelImportRefused, match="another import of these labels"):
        import_labels(document)


def test_an_export_writes_each_quotes_keys_in_one_order(finished, airline):
    document = export_worksheet(finished)
    for row in document["labels"]:
        for piece in row["quote"]:
            if isinstance(piece, dict):
                assert list(piece) == sorted(piece)


def test_the_download_names_a_file_safely_whatever_the_corpus_is_called(
    login, adjudicator, finished, airline
):
    airline.name = 'air"line; filename=evil.sh'
    airline.save()
    response = login(adjudicator).get(f"/labelling/worksheets/{finished.pk}/export.json")
    assert response.status_code == 200
    header = EmailMessage()
    header["Content-Disposition"] = response["Content-Disposition"]
    assert header.get_params(header="content-disposition") == [
        ("attachment", ""),
        ("filename", 'labels-air"line; filename=evil.sh-travel.json'),  # one parameter
    ]


def test_an_import_refuses_a_transcript_the_corpus_does_not_hold(finished):
    document = export_worksheet(finished)
    document["labels"][0]["transcript"] = "task99-trial0"
    with pytest.raises(LabelImportRefused, match="transcript 'task99-trial0' is not in the corpus"):
        import_labels(document)


def test_an_import_refuses_a_file_that_is_not_json_saying_where():
    with pytest.raises(LabelImportRefused) as refused:
        parse('{"format": "contextgc-labels/1",\n "labels": [}')
    assert refused.value.reasons == ["line 2, column 13: not valid JSON (Expecting value)"]


def test_an_import_under_a_schema_the_site_does_not_ship_is_refused(finished):
    document = export_worksheet(finished)
    document["schema"] = "no-such-schema"
    with pytest.raises(LabelImportRefused, match="'no-such-schema' is not one of coding"):
        import_labels(document)
    assert Label.objects.count() == 0


def test_an_import_for_an_unknown_corpus_is_refused(finished):
    document = export_worksheet(finished)
    document["corpus"] = "elsewhere"
    with pytest.raises(LabelImportRefused, match="no corpus called 'elsewhere': import it first"):
        import_labels(document)


def test_merging_a_finished_worksheet_stores_its_labels(finished):
    assert merge_worksheet(finished).created == 7
    assert set(Label.objects.values_list("worksheet", flat=True)) == {finished.pk}
    assert Label.objects.filter(extraction__isnull=True).count() == 0


def test_the_merge_button_stores_the_labels(login, maintainer, finished):
    response = login(maintainer).post(f"/labelling/worksheets/{finished.pk}/merge")
    assert response.status_code == 302
    assert Label.objects.count() == 7


def test_the_label_import_page_imports_and_shows_precision(login, maintainer, finished, airline):
    upload = SimpleUploadedFile("labels.json", dumps(export_worksheet(finished)).encode())
    response = login(maintainer).post("/labelling/labels/import", {"upload": upload})
    assert response.status_code == 302
    assert response["Location"] == f"/labelling/precision?corpus={airline.pk}&schema=travel"
    assert Label.objects.count() == 7


def test_the_label_import_page_shows_refusals(login, maintainer):
    upload = SimpleUploadedFile("labels.json", b'{"format": "other"}')
    response = login(maintainer).post("/labelling/labels/import", {"upload": upload})
    assert response.status_code == 422
    assert "not a label file" in response.content.decode()


def test_the_label_export_page_downloads_the_stored_labels(login, maintainer, finished, airline):
    merge_worksheet(finished)
    response = login(maintainer).get(
        f"/labelling/labels/export.json?corpus={airline.pk}&schema=travel"
    )
    assert response.content.decode() == dumps(export_worksheet(finished))


def test_the_commands_export_and_import_a_label_file(finished, tmp_path, airline):
    path = tmp_path / "labels.json"
    call_command(
        "export_labels", "--worksheet", str(finished.pk), "-o", str(path), stderr=io.StringIO()
    )
    out = io.StringIO()
    call_command("import_labels", str(path), stdout=out)
    assert out.getvalue() == "imported 7 labels, 0 unchanged\n"
    again = io.StringIO()
    call_command("export_labels", "--corpus", "airline-slice", "--schema", "travel", stdout=again)
    assert again.getvalue() == path.read_text()
    assert json.loads(again.getvalue())["schema"] == "travel"


def test_the_export_command_refuses_naming_what_is_open(worksheet):
    with pytest.raises(CommandError, match=r"not exported, still open:\n  row 1 "):
        call_command("export_labels", "--worksheet", str(worksheet.pk))

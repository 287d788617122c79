"""The report pages: who may read them, what they show, and the job page's polling."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
from django.core.management import call_command

from labelling.measurement import tasks
from labelling.measurement.models import Job, JobStatus, Report, ReportKind
from labelling.measurement.tasks import measure_chunk, start_measure
from tests.personas import big_airline

RECORDS = Path(__file__).resolve().parent.parent / "fixtures" / "records"
INDEX = "/labelling/reports/"


@pytest.fixture
def records_report(db) -> Report:
    call_command("score_records", "airline", "--corpora", str(RECORDS), "--save", stdout=None)
    return Report.objects.get(kind=ReportKind.RECORDS)


@pytest.fixture
def measured(airline) -> Job:
    job = start_measure(airline, "travel", chunk_size=10, repeats=1, use_peer=False)
    measure_chunk.call(job.chunks.get().pk)
    job.refresh_from_db()
    return job


def test_it_requires_signing_in(db, login):
    response = login(None).get(INDEX)
    assert (response.status_code, response["Location"]) == (302, f"/accounts/login/?next={INDEX}")


def test_it_refuses_someone_who_is_not_a_maintainer(outsider, login):
    assert login(outsider).get(INDEX).status_code == 403


def test_it_lists_stored_reports_and_jobs(maintainer, login, records_report, measured):
    response = login(maintainer).get(INDEX)
    body = response.content.decode()
    assert response.status_code == 200
    assert f'href="/labelling/reports/{records_report.pk}/"' in body
    assert f'href="/labelling/reports/jobs/{measured.pk}/"' in body


def test_queueing_a_measuring_job_redirects_to_its_page(maintainer, login, airline):
    form = {"corpus": airline.pk, "schema": "travel", "chunk_size": 2, "repeats": 1}
    response = login(maintainer).post(f"{INDEX}measure", form)
    job = Job.objects.get()
    assert (response.status_code, response["Location"]) == (302, f"{INDEX}jobs/{job.pk}/")
    assert (job.chunks_total, job.params["use_peer"], job.created_by) == (2, False, maintainer)


def test_a_bad_measuring_form_is_answered_422_and_queues_nothing(maintainer, login, airline):
    response = login(maintainer).post(f"{INDEX}measure", {"corpus": airline.pk, "schema": "x"})
    assert response.status_code == 422
    assert not Job.objects.exists()


def test_queueing_an_import_redirects_to_its_job(maintainer, login, tmp_path):
    upload = tmp_path / "two.json"
    upload.write_bytes((RECORDS.parent / "formats" / "tau-airline-two-records.json").read_bytes())
    with upload.open("rb") as handle:
        response = login(maintainer).post(f"{INDEX}import", {"upload": handle})
    job = Job.objects.get()
    assert (response.status_code, job.kind, job.title) == (302, "import", "two.json")


def test_a_queued_job_page_says_it_waits_for_a_worker_and_polls(maintainer, login, airline):
    job = start_measure(airline, "travel", chunk_size=2, repeats=1, use_peer=False)
    body = login(maintainer).get(f"{INDEX}jobs/{job.pk}/").content.decode()
    assert "Waiting for a worker" in body
    assert 'hx-trigger="every 1s"' in body
    assert '<meta http-equiv="refresh" content="2">' in body


def test_the_htmx_request_gets_the_progress_partial_only(maintainer, login, airline):
    job = start_measure(airline, "travel", chunk_size=2, repeats=1, use_peer=False)
    measure_chunk.call(job.chunks.order_by("index").first().pk)
    response = login(maintainer).get(f"{INDEX}jobs/{job.pk}/", HTTP_HX_REQUEST="true")
    body = response.content.decode()
    assert body.lstrip().startswith('<section class="card job" id="job" data-status="running"')
    assert "2 of 4 transcripts" in body and "1 of 2 chunks" in body
    assert "<html" not in body


def test_a_finished_job_stops_polling_and_links_its_report(maintainer, login, measured):
    body = login(maintainer).get(f"{INDEX}jobs/{measured.pk}/").content.decode()
    assert "every 1s" not in body and "refresh" not in body
    assert f'href="{INDEX}{measured.report.pk}/"' in body


def test_a_failed_job_shows_its_error(maintainer, login, airline):
    job = start_measure(airline, "travel", repeats=1, use_peer=False)
    Job.objects.filter(pk=job.pk).update(status=JobStatus.FAILED, error="chunk 0: boom")
    body = login(maintainer).get(f"{INDEX}jobs/{job.pk}/").content.decode()
    assert 'role="alert"' in body and "chunk 0: boom" in body


def test_the_measure_report_shows_figures_charts_and_no_unsupported_precision(
    maintainer, login, measured
):
    body = login(maintainer).get(f"{INDEX}{measured.report.pk}/").content.decode()
    assert "python manage.py measure airline-slice --schema travel" in body
    assert "token reduction Σ(raw−compiled)/Σraw (N=4)" in body
    assert body.count('<svg class="chart reduction-bars"') == 1
    assert 'id="no-precision"' in body
    assert "no labels were supplied for this schema" in body


def test_the_records_report_shows_rates_charts_and_contradicted_turns(
    maintainer, login, records_report
):
    body = login(maintainer).get(f"{INDEX}{records_report.pk}/").content.decode()
    assert body.count('<svg class="chart rate-bars"') == 2
    assert 'id="total-rate"' in body and "95% CI" in body
    cases = records_report.figures["contradicted"]
    assert body.count('class="card case"') == len(cases) > 0
    assert 'class="registering"' in body
    assert "unapplied" in body


def test_a_transcript_page_draws_its_timeline(maintainer, login, measured):
    report = measured.report
    body = login(maintainer).get(f"{INDEX}{report.pk}/transcripts/0/").content.decode()
    assert '<svg class="chart timeline"' in body
    assert report.figures["per_transcript"][0]["ident"] in body


def test_a_transcript_outside_the_report_is_404(maintainer, login, measured):
    response = login(maintainer).get(f"{INDEX}{measured.report.pk}/transcripts/99/")
    assert response.status_code == 404


def test_the_figures_download_is_the_stored_json(maintainer, login, records_report):
    response = login(maintainer).get(f"{INDEX}{records_report.pk}/figures.json")
    assert response.status_code == 200
    assert response.json() == records_report.figures
    assert response["Content-Disposition"] == (
        f'attachment; filename="report-{records_report.pk}.json"'
    )


def test_report_text_is_escaped(maintainer, login, records_report):
    figures = records_report.figures
    figures["contradicted"][0]["value"] = "<script>alert(1)</script>"
    Report.objects.filter(pk=records_report.pk).update(figures=figures)
    body = login(maintainer).get(f"{INDEX}{records_report.pk}/").content.decode()
    assert "<script>alert(1)</script>" not in body
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body


def test_the_measure_report_shows_the_loop_bill_per_strategy_with_its_n(
    maintainer, login, measured
):
    bill = measured.report.figures["loop_bill"]
    assert bill["transcripts"] == 4 and bill["calls"] > 4
    strategies = {found["key"]: found for found in bill["strategies"]}
    assert list(strategies) == ["raw", "compact", "cache_friendly", "mask3", "mask10"]
    assert all(ratio == 1.0 for ratio in strategies["raw"]["billed_vs_raw"].values())
    body = login(maintainer).get(f"{INDEX}{measured.report.pk}/").content.decode()
    assert f"N={bill['transcripts']} transcripts, {bill['calls']} calls" in body
    assert body.count('<svg class="chart bill-bars"') == 3
    compact = strategies["compact"]["billed_vs_raw"]["openai@0.1"]
    assert f"{compact:.2f}×" in body


def test_a_report_stored_before_the_loop_bill_says_to_measure_again(maintainer, login, measured):
    report = measured.report
    del report.figures["loop_bill"]
    report.save()
    body = login(maintainer).get(f"{INDEX}{report.pk}/").content.decode()
    assert "No loop bill in this report" in body


def test_an_import_on_sqlite_shows_the_progress_its_file_holds_while_it_runs(
    maintainer, login, settings, tmp_path, monkeypatch
):
    settings.CONTEXTGC_UPLOAD_DIR = tmp_path
    job = tasks.start_import(big_airline(copies=1), name="four", source="four.json")
    Job.objects.filter(pk=job.pk).update(status=JobStatus.RUNNING)
    monkeypatch.setattr(tasks, "connection", SimpleNamespace(vendor="sqlite"))
    tasks.record_progress(job.pk, 3, 10)  # what an import on SQLite records
    assert Job.objects.get(pk=job.pk).units_total == 0  # the row is not written
    body = login(maintainer).get(f"{INDEX}jobs/{job.pk}/").content.decode()
    assert "30% · 3 of 10 transcripts" in body
    tasks.end_import(job, JobStatus.DONE)
    assert not tasks.progress_file(job.pk).exists()


def test_a_progress_file_that_cannot_be_read_leaves_the_job_as_its_row_says(settings, tmp_path, db):
    settings.CONTEXTGC_UPLOAD_DIR = tmp_path
    job = tasks.start_import(big_airline(copies=1), name="four", source="four.json")
    job.status = JobStatus.RUNNING
    tasks.progress_file(job.pk).parent.mkdir(parents=True)
    tasks.progress_file(job.pk).write_text("half", encoding="ascii")
    assert (tasks.with_progress(job).units_done, job.units_total) == (0, 0)
    tasks.write_progress_file(job.pk, 5, 20)
    assert (tasks.with_progress(job).units_done, job.units_total) == (5, 20)

"""The report pages in a real browser: a job followed to its end, and the pictures."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db import connection, connections
from django.test import Client
from playwright.sync_api import expect

from labelling.importing import import_corpus
from labelling.management.commands.create_reviewer import maintainers_group
from labelling.measurement import tasks
from labelling.measurement.models import Job, Report, ReportKind
from labelling.measurement.tasks import import_corpus_job, measure_chunk, start_import
from tests.personas import big_airline

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
AIRLINE = FIXTURES / "labelling" / "tau-airline-tasks-2-4-5.json"
RECORDS = FIXTURES / "records"


@pytest.fixture
def signed_in(live_server, open_page):
    """A page whose browser holds a maintainer's session."""
    user = get_user_model().objects.create_user("maria", password="not used here")
    user.groups.add(maintainers_group())
    client = Client()
    client.force_login(user)
    page = open_page()
    cookie = client.cookies[settings.SESSION_COOKIE_NAME].value
    page.context.add_cookies(
        [{"name": settings.SESSION_COOKIE_NAME, "value": cookie, "url": live_server.url}]
    )
    return page


def test_an_import_job_page_shows_its_percentage_until_it_ends(live_server, signed_in, monkeypatch):
    if connection.vendor == "sqlite":
        pytest.skip("on SQLite the progress goes to a file: tests/measurement/test_reports.py")
    page = signed_in
    job = start_import(big_airline(copies=5), name="airline-20", source="airline-20.json")
    halfway, seen = threading.Event(), threading.Event()
    real_record = tasks.record_progress

    def record(job_id, done, total):
        real_record(job_id, done, total)
        if done == total // 2:  # the import waits here until the page has shown it
            halfway.set()
            seen.wait(30)

    monkeypatch.setattr(tasks, "record_progress", record)
    worker = threading.Thread(target=_in_thread, args=(import_corpus_job.call, job.pk))
    worker.start()
    try:
        assert halfway.wait(30)
        page.goto(f"{live_server.url}{job.get_absolute_url()}")
        expect(page.locator("#job .job-count")).to_contain_text("50% · 10 of 20 transcripts")
        assert page.locator("#job").get_attribute("data-status") == "running"
    finally:
        seen.set()
        worker.join(60)
    page.locator("#job[data-status='done']").wait_for()  # htmx polls the job every second
    expect(page.locator("#job .job-count")).to_contain_text("100% · 20 of 20 transcripts")


def _in_thread(work, *args) -> None:
    try:
        work(*args)
    finally:
        connections.close_all()


def test_a_measuring_job_is_followed_to_its_report(live_server, signed_in):
    page = signed_in
    import_corpus(AIRLINE.read_bytes(), name="airline-slice", source=AIRLINE.name)
    page.goto(f"{live_server.url}/labelling/reports/")
    form = page.locator("#measure-form")
    form.locator("select[name=corpus]").select_option(label="airline-slice")
    form.get_by_label("Schema").select_option("travel")
    form.get_by_label("Chunk size").fill("2")
    page.get_by_role("button", name="Queue the job").click()
    page.locator("#job[data-status='queued']").wait_for()
    assert "Waiting for a worker" in page.locator("#job").inner_text()
    job = Job.objects.get()
    for chunk in job.chunks.order_by("index"):
        measure_chunk.call(chunk.pk)
    # htmx polls the job every second and swaps the finished partial in.
    page.locator("#job[data-status='done']").wait_for()
    assert "4 of 4 transcripts" in page.locator("#job").inner_text()
    page.get_by_role("link", name="Read the report").click()
    bars = page.locator("svg.reduction-bars rect")
    bars.first.wait_for()
    assert bars.count() == 4
    assert page.locator("#no-precision").is_visible()
    assert page.problems == []


def test_the_records_report_draws_bars_with_their_intervals(live_server, signed_in):
    page = signed_in
    call_command("score_records", "airline", "--corpora", str(RECORDS), "--save")
    report = Report.objects.get(kind=ReportKind.RECORDS)
    page.goto(f"{live_server.url}/labelling/reports/{report.pk}/")
    chart = page.locator("svg.rate-bars").first
    chart.wait_for()
    slots = report.figures["by_slot"]
    decided = [s for s, c in slots.items() if c["rate"]["decidable"]]
    assert chart.locator("g.rate").count() == len(decided)
    widths = {
        slot: chart.locator(f'g.rate[data-label="{slot}"] rect.bar').bounding_box()["width"]
        for slot in decided
    }
    rates = {slot: slots[slot]["rate"]["rate"] for slot in decided}
    assert sorted(widths, key=widths.get) == sorted(rates, key=lambda s: (rates[s], widths[s]))
    title = chart.locator('g.rate[data-label="cabin_class"] title').text_content()
    assert title.startswith("cabin_class: ") and "95% CI" in title
    assert page.locator("article.case").count() == len(report.figures["contradicted"])
    assert page.problems == []


def test_a_transcript_timeline_shows_each_value_until_it_was_replaced(live_server, signed_in):
    page = signed_in
    call_command("measure", str(RECORDS / "airline"), "--schema", "travel", "--repeats", "1",
                 "--no-peer", "--save")  # fmt: skip
    report = Report.objects.get(kind=ReportKind.MEASURE)
    index, row = max(
        enumerate(report.figures["per_transcript"]), key=lambda pair: len(pair[1]["history"])
    )
    page.goto(f"{live_server.url}/labelling/reports/{report.pk}/transcripts/{index}/")
    spans = page.locator("svg.timeline g.span")
    spans.first.wait_for()
    superseded = sum(1 for e in row["history"] if e["superseded_by"] is not None)
    assert spans.count() == len(row["history"])
    assert page.locator("svg.timeline g.superseded").count() == superseded > 0
    assert page.locator("table.history tbody tr").count() == len(row["history"])
    assert page.problems == []

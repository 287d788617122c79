"""From an empty database to a transcript, in a real browser and nothing else: the
first-run page makes the maintainer, a 2.7 MB corpus (ten times the site's body cap)
goes through the import form to a real ``db_worker``, the job page follows it to the
end, a worksheet is built on it, and a row opens its whole transcript."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

from labelling.management.commands.create_reviewer import MAINTAINERS, maintainers_group
from labelling.measurement.management.commands.run_jobs_bench import worker_env
from labelling.measurement.models import Job
from tests.personas import big_airline

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
PASSWORD = "correct horse battery staple"
WIDTHS = [1400, 390]


def run_worker(upload_dir) -> float:
    """One real worker works the queue empty, as scripts/serve's does; its wall time."""
    command = [sys.executable, str(settings.BASE_DIR / "manage.py"), "db_worker", "--batch",
               "--no-startup-delay", "--interval", "0", "--no-reload", "-v", "0"]  # fmt: skip
    env = {**worker_env(), "CONTEXTGC_UPLOAD_DIR": str(upload_dir)}
    started = time.perf_counter()
    subprocess.run(command, env=env, check=True, timeout=300)
    return time.perf_counter() - started


@pytest.mark.parametrize("width", WIDTHS)
def test_a_new_site_goes_from_first_run_to_a_whole_transcript(
    live_server, open_page, settings, tmp_path, width, capsys
):
    settings.CONTEXTGC_UPLOAD_DIR = tmp_path / "uploads"
    base = live_server.url
    page = open_page(viewport={"width": width, "height": 900})

    page.goto(f"{base}/labelling/")
    page.get_by_role("link", name="Create the first maintainer").click()
    page.get_by_label("Username").fill("maria")
    page.locator("#id_password1").fill(PASSWORD)
    page.locator("#id_password2").fill(PASSWORD)
    page.get_by_role("button", name="Create and sign in").click()
    page.wait_for_url(f"{base}/labelling/")
    maria = get_user_model().objects.get()
    assert maria.is_staff and maria.groups.filter(name=MAINTAINERS).exists()

    corpus = tmp_path / "airline-big.json"
    corpus.write_bytes(big_airline())
    page.get_by_role("link", name="Import a corpus").click()
    page.get_by_label("Corpus file").set_input_files(str(corpus))
    started = time.perf_counter()
    page.get_by_role("button", name="Import").click()
    page.locator("#job[data-status='queued']").wait_for()
    uploaded = time.perf_counter() - started
    assert "Waiting for a worker" in page.locator("#job").inner_text()
    worker = run_worker(settings.CONTEXTGC_UPLOAD_DIR)
    page.locator("#job[data-status='done']").wait_for()  # htmx polls the job every second
    expect(page.locator("#job")).to_contain_text("Imported airline-big.json: 100 transcripts")
    job = Job.objects.get()
    print(f"{corpus.stat().st_size} bytes at {width} px: upload {uploaded:.2f} s, "
          f"worker {worker:.2f} s, import {job.seconds:.2f} s")  # fmt: skip

    page.goto(f"{base}/labelling/worksheets/new")
    page.get_by_label("Name").fill("big airline sample")
    page.get_by_label("Corpus").select_option(label="airline-big.json")
    page.get_by_label("Schema").select_option("travel")
    page.get_by_label("Per slot budget").fill("1")
    page.get_by_label("Reviews per row").fill("1")
    page.get_by_label("Window").fill("8")
    page.get_by_label("Reviewers").select_option(label="maria")
    page.get_by_role("button", name="Build").click()
    page.get_by_role("link", name="Start at row 1").click()
    expect(page.locator("#row-title")).to_contain_text("Row 1 of")

    with page.expect_popup() as popup:
        page.get_by_role("link", name="The whole transcript").click()
    transcript = popup.value
    transcript.wait_for_load_state()
    turns = transcript.locator("#transcript-turns > li")
    assert turns.count() > 10
    assert transcript.locator("details[open]").count() in (2, 3)
    first_closed = transcript.evaluate(
        "[...document.querySelectorAll('#transcript-turns details')].findIndex(d => !d.open)"
    )
    closed = turns.nth(first_closed)
    expect(closed.locator("pre.turn-text")).to_be_hidden()
    closed.locator("summary").click()
    expect(closed.locator("pre.turn-text")).to_be_visible()
    overflow = transcript.evaluate("document.documentElement.scrollWidth - innerWidth")
    assert overflow <= 0
    assert page.problems == []

    page.get_by_role("button", name="Sign out").click()
    page.goto(f"{base}/accounts/login/")
    expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
    assert page.get_by_text("No account exists yet").count() == 0  # never again


@pytest.mark.parametrize("width", WIDTHS)
def test_a_file_over_the_cap_gets_a_page_with_a_way_back_to_the_form(
    live_server, open_page, settings, tmp_path, width
):
    settings.CONTEXTGC_MAX_IMPORT_BYTES = 1024 * 1024
    settings.CONTEXTGC_UPLOAD_DIR = tmp_path / "uploads"
    maria = get_user_model().objects.create_user("maria", password=PASSWORD)
    maria.groups.add(maintainers_group())
    base = live_server.url
    page = open_page(viewport={"width": width, "height": 900})
    page.goto(f"{base}/accounts/login/?next=/labelling/corpora/import")
    page.get_by_label("Username").fill("maria")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    corpus = tmp_path / "airline-big.json"
    corpus.write_bytes(big_airline())
    page.get_by_label("Corpus file").set_input_files(str(corpus))
    page.get_by_role("button", name="Import").click()
    expect(page.get_by_role("heading", name="That file is too large")).to_be_visible()
    assert "This form takes up to 1 MiB" in page.inner_text("main")
    styled = "getComputedStyle(document.documentElement).getPropertyValue('--text-sm').trim()"
    assert page.evaluate(styled) == "0.875rem"  # the site's stylesheet, not a bare text page
    page.get_by_role("link", name="Back").click()
    expect(page.get_by_role("heading", name="Import a corpus")).to_be_visible()
    assert not Job.objects.exists()

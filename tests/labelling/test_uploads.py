"""Corpus files of any size up to the import cap, from either import form, streamed to
disk and imported by a worker; a file over the cap gets a page with a way back."""

from __future__ import annotations

import time

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from labelling.forms import CorpusImportForm
from labelling.measurement.models import Job, JobStatus
from labelling.measurement.uploads import import_upload_job
from labelling.models import Corpus
from tests.personas import big_airline

pytestmark = pytest.mark.django_db
IMPORT_FORMS = ["/labelling/corpora/import", "/labelling/reports/import"]


def _file(data: bytes, name="airline-big.json"):
    return SimpleUploadedFile(name, data, content_type="application/json")


@pytest.mark.parametrize("url", IMPORT_FORMS)
def test_a_corpus_ten_times_the_body_cap_is_imported_from_either_form(
    login, maintainer, upload_dir, url
):
    data = big_airline()
    assert len(data) > 10 * 256 * 1024
    started = time.perf_counter()
    response = login(maintainer).post(url, {"upload": _file(data), "name": "big"})
    uploaded = time.perf_counter() - started
    job = Job.objects.get()
    assert (response.status_code, response["Location"]) == (302, job.get_absolute_url())
    assert job.params["bytes"] == len(data)
    assert (upload_dir / job.params["file"]).read_bytes() == data
    started = time.perf_counter()
    assert import_upload_job.call(job.pk) == 100
    imported = time.perf_counter() - started
    job.refresh_from_db()
    assert (job.status, job.corpus.name, job.units_done) == (JobStatus.DONE, "big", 100)
    assert Corpus.objects.get().transcripts.count() == 100
    assert _files(upload_dir) == []  # the file is gone once imported, and any progress file
    print(f"{len(data)} bytes: upload {uploaded:.2f} s, import {imported:.2f} s")


def test_the_job_page_follows_the_import(login, maintainer):
    client = login(maintainer)
    client.post(IMPORT_FORMS[0], {"upload": _file(big_airline(2))})
    job = Job.objects.get()
    assert "Waiting for a worker" in client.get(job.get_absolute_url()).content.decode()
    import_upload_job.call(job.pk)
    page = client.get(job.get_absolute_url()).content.decode()
    assert "Imported <strong>airline-big.json</strong>: 8 transcripts" in page


def test_a_failed_import_deletes_its_file_too(login, maintainer, upload_dir):
    login(maintainer).post(IMPORT_FORMS[0], {"upload": _file(b"\xff\xfe not text")})
    job = Job.objects.get()
    assert import_upload_job.call(job.pk) == 0
    job.refresh_from_db()
    assert job.status == JobStatus.FAILED and "not UTF-8" in job.error
    assert _files(upload_dir) == []


def test_a_job_delivered_twice_imports_once(login, maintainer):
    login(maintainer).post(IMPORT_FORMS[0], {"upload": _file(big_airline(1))})
    job = Job.objects.get()
    assert (import_upload_job.call(job.pk), import_upload_job.call(job.pk)) == (4, 0)


@pytest.mark.parametrize("url", IMPORT_FORMS)
def test_a_file_over_the_cap_gets_a_styled_page_with_a_way_back(login, maintainer, settings, url):
    settings.CONTEXTGC_MAX_IMPORT_BYTES = 1024 * 1024
    client = login(maintainer, HTTP_REFERER=f"http://testserver{url}")
    response = client.post(url, {"upload": _file(big_airline(12))})
    page = response.content.decode()
    assert response.status_code == 413
    assert "<h1>That file is too large</h1>" in page
    assert "This form takes up to 1 MiB" in page
    assert f'href="http://testserver{url}"' in page
    assert 'rel="stylesheet"' in page
    assert not Job.objects.exists()


def test_the_way_back_is_never_another_site(login, maintainer, settings):
    settings.CONTEXTGC_MAX_IMPORT_BYTES = 1024
    client = login(maintainer, HTTP_REFERER="https://elsewhere.example/")
    response = client.post(IMPORT_FORMS[0], {"upload": _file(big_airline(1))})
    assert response.status_code == 413
    assert 'class="button primary" href="/"' in response.content.decode()


def test_other_pages_keep_the_small_cap(login, maintainer):
    response = login(maintainer).post("/labelling/labels/import", {"upload": _file(big_airline())})
    assert response.status_code == 413
    assert "This form takes up to 256 KiB" in response.content.decode()


def test_the_form_refuses_a_file_over_the_cap_that_came_without_a_length(settings):
    settings.CONTEXTGC_MAX_IMPORT_BYTES = 10
    form = CorpusImportForm({}, {"upload": _file(b"user: a long enough line")})
    assert not form.is_valid()
    assert form.errors["upload"] == ["The file is 24 bytes; the limit is 10 bytes."]


def _files(folder):
    """Every file under ``folder`` (an import on SQLite keeps its progress in a folder
    there, which may stay, empty, for the next import)."""
    return [path for path in folder.rglob("*") if path.is_file()]

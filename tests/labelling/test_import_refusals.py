"""Corpus import refuses what PostgreSQL cannot store, naming transcript, message and field.

A NUL character (escaped in JSON or raw in role-lines text), a lone surrogate, a number
too large for JSON, or an id longer than its column: the reader accepts each of them, and
PostgreSQL would refuse the row. The browser answers 422 with the reasons, the command
fails with them, a background job ends failed with them, and nothing is stored. These run
on the real PostgreSQL the suite starts, so a reason that is missing is a database error.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.core.management.base import CommandError

from labelling.importing import ImportRefused, import_corpus
from labelling.measurement.models import Job, JobStatus
from labelling.measurement.tasks import import_corpus_job, start_import
from labelling.models import Corpus

pytestmark = pytest.mark.django_db

LONG_ID = "t" * 300
HOSTILE = {
    "nul-escaped-in-content": (
        '[{"role": "user", "content": "pay with\\u0000 visa"}]',
        "transcript 'transcript', message 0, field content: holds a NUL character",
    ),
    "raw-nul-in-role-lines": (
        "user: pay with\x00 visa\nassistant: done",
        "transcript 'transcript', message 0, field content: holds a NUL character",
    ),
    "nul-in-a-key": (
        '[{"role": "user", "content": "x", "extra\\u0000": 1}]',
        "transcript 'transcript', message 0, field key 'extra\\x00': holds a NUL character",
    ),
    "lone-surrogate-in-content": (
        '[{"role": "user", "content": "x\\ud800"}]',
        "transcript 'transcript', message 0, field content: holds a lone surrogate",
    ),
    "lone-surrogate-in-a-key": (
        '[{"role": "user", "content": "x", "k\\udc00": 1}]',
        "transcript 'transcript', message 0, field key 'k\\udc00': holds a lone surrogate",
    ),
    "overflowing-number-in-tool-arguments": (
        '[{"role": "assistant", "content": null, "tool_calls": [{"id": "c", "type": '
        '"function", "function": {"name": "f", "arguments": {"amount": 1e999}}}]}, '
        '{"role": "tool", "tool_call_id": "c", "content": "ok"}]',
        "not valid JSON (1e999 is too large to read: it would be Infinity, column 138)",
    ),
    "tau-bench-id-over-255-characters": (
        json.dumps([{"task_id": LONG_ID, "traj": [{"role": "user", "content": "hi"}]}]),
        "its id is 304 characters; at most 255 are stored",
    ),
}


def hostile_bytes(kind: str) -> bytes:
    return HOSTILE[kind][0].encode("utf-8")


@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_an_unstorable_corpus_is_refused_with_transcript_message_and_field(kind):
    with pytest.raises(ImportRefused) as refused:
        import_corpus(hostile_bytes(kind), name=kind, source=f"{kind}.json")
    assert any(HOSTILE[kind][1] in reason for reason in refused.value.reasons)
    assert not Corpus.objects.exists()


@pytest.mark.parametrize("kind", ["nul-escaped-in-content", "tau-bench-id-over-255-characters"])
def test_the_import_job_fails_with_the_reason(login, maintainer, kind):
    from labelling.measurement.uploads import import_upload_job

    upload = SimpleUploadedFile(f"{kind}.json", hostile_bytes(kind))
    client = login(maintainer)
    client.post("/labelling/corpora/import", {"upload": upload})
    job = Job.objects.get()
    assert import_upload_job.call(job.pk) == 0
    page = client.get(job.get_absolute_url()).content.decode()
    assert "at most 255 are stored" in page or "holds a NUL character" in page
    assert not Corpus.objects.exists()


def test_the_import_command_fails_with_the_reason_and_stores_nothing(tmp_path: Path):
    path = tmp_path / "hostile.txt"
    path.write_bytes(hostile_bytes("raw-nul-in-role-lines"))
    with pytest.raises(CommandError) as failed:
        call_command("import_corpus", str(path), "--no-progress")
    assert "refused, nothing imported" in str(failed.value)
    assert HOSTILE["raw-nul-in-role-lines"][1] in str(failed.value)
    assert not Corpus.objects.exists()


def test_a_background_import_ends_failed_with_the_reason_not_a_database_error():
    job = start_import(hostile_bytes("lone-surrogate-in-a-key"), name="bad", source="bad.json")
    assert import_corpus_job.call(job.pk) == 0
    job = Job.objects.get(pk=job.pk)
    assert job.status == JobStatus.FAILED
    assert job.error == HOSTILE["lone-surrogate-in-a-key"][1] + ", which is not text"
    assert not Corpus.objects.exists()


def test_a_name_longer_than_its_column_is_refused_before_anything_is_stored():
    text = b"user: hi\nassistant: hello"
    with pytest.raises(ImportRefused) as refused:
        import_corpus(text, name="n" * 201, source="s.txt")
    assert refused.value.reasons == ["the corpus's name is 201 characters; at most 200 are stored"]


def test_a_refusal_lists_fifty_reasons_then_counts_the_rest():
    lines = "\n".join(f"user: turn {n}\x00" for n in range(60))
    with pytest.raises(ImportRefused) as refused:
        import_corpus(lines.encode(), name="many", source="many.txt")
    assert len(refused.value.reasons) == 51
    assert refused.value.reasons[-1] == "… and 10 more reasons of the same kinds"

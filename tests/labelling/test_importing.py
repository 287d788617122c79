"""Importing corpora: every format the compiler reads, idempotent, all or nothing."""

from __future__ import annotations

import io

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.core.management.base import CommandError

from compiler import load_schema, run
from compiler.read.formats import formats_many
from labelling.compiling import compile_corpus, messages_of
from labelling.importing import ImportRefused, import_corpus
from labelling.models import CompileRun, Corpus, Extraction, Transcript
from tests.personas import AIRLINE, FIXTURES, NEBIUS

pytestmark = pytest.mark.django_db

FORMAT_FIXTURES = [
    *(
        p
        for p in sorted((FIXTURES / "formats").iterdir())
        if p.suffix in (".txt", ".traj", ".json", ".jsonl")
        and not p.name.endswith(".expected.json")
    ),
    AIRLINE,
]
BAD_JSONL = (
    '{"role": "user", "content": "I want to fly business"}\n'
    '{"role": "assistant", "content": "Sure" \n'
    '{"role": "user", "content": "thanks"}\n'
)


def schema_for(path) -> str:
    return "coding" if path.suffix in (".txt", ".traj") else "travel"


def test_it_imports_every_transcript_of_a_real_corpus_with_its_family():
    result = import_corpus(AIRLINE.read_bytes(), name="airline", source="x.json")
    assert result.created is True
    rows = list(result.corpus.transcripts.values_list("external_id", "family", "format"))
    assert rows == [
        ("task2-trial0", "task2", "tau-bench"),
        ("task2-trial1", "task2", "tau-bench"),
        ("task4-trial0", "task4", "tau-bench"),
        ("task5-trial0", "task5", "tau-bench"),
    ]
    assert result.corpus.format == "tau-bench"


def test_it_groups_nebius_trajectories_of_one_issue_into_one_family(nebius):
    families = set(nebius.transcripts.values_list("family", flat=True))
    assert families == {"AnalogJ__lexicon-336"}


def test_importing_the_same_file_again_adds_nothing(airline):
    again = import_corpus(AIRLINE.read_bytes(), name="another name", source="y.json")
    assert again.created is False
    assert again.corpus == airline
    assert Corpus.objects.count() == 1
    assert Transcript.objects.count() == 4


def test_it_refuses_a_bad_file_with_the_readers_line_numbers_and_keeps_nothing():
    with pytest.raises(ImportRefused) as refused:
        import_corpus(BAD_JSONL.encode(), name="bad", source="bad.jsonl")
    assert len(refused.value.reasons) == 1
    assert refused.value.reasons[0].startswith("transcript: line 2: not valid JSON")
    assert Corpus.objects.count() == 0
    assert Transcript.objects.count() == 0


def test_it_refuses_a_file_with_no_turn_saying_where():
    with pytest.raises(ImportRefused) as refused:
        import_corpus(b'{"hello": "world"}', name="bad", source="bad.json")
    assert refused.value.reasons[0].startswith("line 1, column 1: no recognisable turn")


def test_it_refuses_bytes_that_are_not_utf8():
    with pytest.raises(ImportRefused) as refused:
        import_corpus(b"user: caf\xe9", name="bad", source="bad.txt")
    assert refused.value.reasons == ["byte 9: not UTF-8 text (unexpected end of data)"]


def test_it_refuses_a_different_file_under_a_name_already_taken(airline):
    with pytest.raises(ImportRefused) as refused:
        import_corpus(NEBIUS.read_bytes(), name="airline-slice", source="n.txt")
    assert refused.value.reasons == ["a different corpus is already called 'airline-slice'"]


@pytest.mark.parametrize("path", FORMAT_FIXTURES, ids=lambda p: p.name)
def test_stored_messages_compile_to_the_same_history_as_the_file(path):
    corpus = import_corpus(path.read_bytes(), name=path.name, source=path.name).corpus
    schema = load_schema(schema_for(path))
    for (ident, parsed), stored in zip(
        formats_many(path.read_text()), corpus.transcripts.all(), strict=True
    ):
        assert stored.external_id == ident
        direct = run(parsed.messages, schema=schema).register.history
        assert run(messages_of(stored), schema=schema).register.history == direct


def test_compiling_stores_every_history_entry_with_its_quote_and_turn_role(airline):
    compile_run = compile_corpus(airline, "travel")
    first = compile_run.extractions.get(transcript__external_id="task2-trial0", slot="passenger_id")
    assert (first.value, first.turn, first.provenance, first.role, first.kind) == (
        "omar_davis_3817",
        3,
        "inferred",
        "user",
        "speech",
    )
    assert [q["turn"] for q in first.quote] == [2, 3, 4]
    assert [q["registering"] for q in first.quote] == [False, True, False]
    assert "omar_davis_3817" in first.quote[1]["text"]


def test_compiling_the_same_corpus_and_schema_again_reuses_the_run(airline):
    first = compile_corpus(airline, "travel")
    count = Extraction.objects.count()
    assert compile_corpus(airline, "travel") == first
    assert CompileRun.objects.count() == 1
    assert Extraction.objects.count() == count


def test_a_run_records_the_schema_digest_and_compiler_version(airline):
    compile_run = compile_corpus(airline, "travel")
    assert compile_run.schema_digest == load_schema("travel").digest
    assert compile_run.compiler_version == "0.1.0"


def test_the_command_imports_with_a_progress_bar_and_compiles():
    out, err = io.StringIO(), io.StringIO()
    call_command("import_corpus", str(AIRLINE), "--compile", "travel", stdout=out, stderr=err)
    assert (
        out.getvalue().splitlines()[0]
        == "imported tau-airline-tasks-2-4-5.json: 4 transcripts, 0 reader warnings"
    )
    assert "compiled under travel:" in out.getvalue()
    assert "transcripts: 100%" in err.getvalue()
    assert "4/4" in err.getvalue()


def test_the_command_says_when_a_file_was_already_imported(airline):
    out = io.StringIO()
    call_command("import_corpus", str(AIRLINE), "--no-progress", stdout=out)
    assert out.getvalue() == "already imported as airline-slice: nothing added\n"


def test_the_command_refuses_a_bad_file_with_its_reasons(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(BAD_JSONL)
    with pytest.raises(CommandError, match=r"refused, nothing imported:\n  transcript: line 2"):
        call_command("import_corpus", str(bad), "--no-progress")
    assert Corpus.objects.count() == 0


def upload(path_or_bytes, name="corpus.json"):
    data = path_or_bytes if isinstance(path_or_bytes, bytes) else path_or_bytes.read_bytes()
    return SimpleUploadedFile(name, data, content_type="application/octet-stream")


def _posted_job(response):
    from labelling.measurement.models import Job

    job = Job.objects.get()
    assert (response.status_code, response["Location"]) == (302, job.get_absolute_url())
    return job


def test_the_import_page_queues_the_upload_and_a_worker_imports_it(login, maintainer):
    from labelling.measurement.uploads import import_upload_job

    response = login(maintainer).post(
        "/labelling/corpora/import",
        {"upload": upload(AIRLINE, "airline.json"), "name": "", "provenance": "tau-bench, MIT"},
    )
    job = _posted_job(response)
    assert not Corpus.objects.exists()
    assert import_upload_job.call(job.pk) == 4
    corpus = Corpus.objects.get()
    assert (corpus.name, corpus.provenance, corpus.imported_by) == (
        "airline.json",
        "tau-bench, MIT",
        maintainer,
    )


def test_the_import_job_shows_the_reasons_it_refused(login, maintainer):
    from labelling.measurement.uploads import import_upload_job

    client = login(maintainer)
    response = client.post(
        "/labelling/corpora/import", {"upload": upload(BAD_JSONL.encode(), "bad.jsonl")}
    )
    job = _posted_job(response)
    assert import_upload_job.call(job.pk) == 0
    page = client.get(job.get_absolute_url()).content.decode()
    assert "The job failed" in page
    assert "transcript: line 2: not valid JSON" in page
    assert Corpus.objects.count() == 0


def test_the_import_page_requires_the_import_permission(login, reviewer):
    response = login(reviewer).get("/labelling/corpora/import")
    assert response.status_code == 403


def test_the_import_page_requires_login(login):
    response = login(None).get("/labelling/corpora/import")
    assert response.status_code == 302
    assert response["Location"] == "/accounts/login/?next=/labelling/corpora/import"

"""Background jobs on the database-backed queue: chunks, workers, the report at the end.

Most tests run a chunk's task in the test process (``Task.call``); the last two start
real ``manage.py db_worker`` processes on the test database, so they need committed
rows (``transactional_db``) and show separate processes sharing one queue.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command
from django.db import connection, connections
from django_tasks_db.models import DBTaskResult

from labelling.measurement import tasks
from labelling.measurement.corpus_report import corpus_report
from labelling.measurement.management.commands.run_jobs_bench import worker_env
from labelling.measurement.measure import measure_items
from labelling.measurement.models import Job, JobStatus, Report
from labelling.measurement.tasks import (
    import_corpus_job,
    measure_chunk,
    start_import,
    start_measure,
    stored_items,
)
from tests.personas import big_airline

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
RECORDS = FIXTURES / "records"
TIMING = ("timing", "compile_ms", "job", "command")


def _without_timing(value):
    if isinstance(value, dict):
        return {k: _without_timing(v) for k, v in value.items() if k not in TIMING}
    if isinstance(value, list):
        return [_without_timing(v) for v in value]
    return value


def _run_all(job: Job) -> None:
    for chunk in job.chunks.order_by("-index"):  # any order: the last to finish reports
        measure_chunk.call(chunk.pk)
    job.refresh_from_db()


def test_a_measuring_job_is_split_into_chunks_with_one_queued_task_each(airline):
    job = start_measure(airline, "travel", chunk_size=3, repeats=1, use_peer=False)
    assert (job.units_total, job.chunks_total, job.status) == (4, 2, JobStatus.QUEUED)
    assert [c.positions for c in job.chunks.order_by("index")] == [[0, 1, 2], [3]]
    queued = DBTaskResult.objects.filter(task_path="labelling.measurement.tasks.measure_chunk")
    assert sorted(r.args_kwargs["args"][0] for r in queued) == sorted(
        job.chunks.values_list("pk", flat=True)
    )


def test_the_last_chunk_writes_the_report_of_the_whole_corpus(airline):
    job = start_measure(airline, "travel", chunk_size=3, repeats=1, use_peer=False)
    _run_all(job)
    assert (job.status, job.units_done, job.chunks_done) == (JobStatus.DONE, 4, 2)
    figures = Report.objects.get(job=job).figures
    rows, errors, peer = measure_items(stored_items(airline), "travel", repeats=1, use_peer=False)
    direct = corpus_report(
        rows, errors, corpus=airline.name, schema="travel", repeats=1, peer=peer,
        labels={"source": f"stored labels of {airline.name} × travel", "rows": []},
    )  # fmt: skip
    assert _without_timing(figures) == _without_timing(direct)
    assert figures["command"] == "python manage.py measure airline-slice --schema travel " + (
        "--repeats 1 --no-peer"
    )


def test_a_chunk_delivered_twice_is_measured_once(airline):
    job = start_measure(airline, "travel", chunk_size=10, repeats=1, use_peer=False)
    chunk = job.chunks.get()
    assert (measure_chunk.call(chunk.pk), measure_chunk.call(chunk.pk)) == (4, 0)
    assert Report.objects.filter(job=job).count() == 1


def test_a_failing_chunk_fails_its_job_with_the_error(airline, monkeypatch):
    job = start_measure(airline, "travel", chunk_size=10, repeats=1, use_peer=False)

    def broken(*args, **kwargs):
        raise RuntimeError("the disk is full")

    monkeypatch.setattr("labelling.measurement.tasks.measure_items", broken)
    with pytest.raises(RuntimeError):
        measure_chunk.call(job.chunks.get().pk)
    job.refresh_from_db()
    assert (job.status, job.error) == (JobStatus.FAILED, "chunk 0: RuntimeError: the disk is full")
    assert not Report.objects.filter(job=job).exists()


def test_a_repository_ordered_corpus_is_capped_per_repository(nebius):
    job = start_measure(nebius, "coding", per_repo=1, repeats=1, use_peer=False)
    assert (job.units_total, job.params["cap"]["dropped"]) == (1, {"AnalogJ/lexicon": 1})


def test_an_unknown_schema_is_refused_before_anything_is_queued(airline):
    with pytest.raises(Exception, match="nope"):
        start_measure(airline, "nope")
    assert not Job.objects.exists()


def test_an_import_job_stores_the_corpus_and_drops_the_file(db):
    data = (FIXTURES / "formats" / "tau-airline-two-records.json").read_bytes()
    job = start_import(data, name="two records", source="tau-airline-two-records.json")
    assert import_corpus_job.call(job.pk) == 2
    job.refresh_from_db()
    assert (job.status, job.corpus.name, job.units_done, job.payload) == (
        JobStatus.DONE,
        "two records",
        2,
        None,
    )


def test_an_import_job_records_its_progress_where_other_connections_see_it(
    transactional_db, monkeypatch
):
    if connection.vendor == "sqlite":
        pytest.skip("on SQLite the progress goes to a file, not the row: test_reports tests that")
    job = start_import(big_airline(copies=10), name="forty", source="forty.json")
    seen = []

    def record(job_id, done, total):
        real_record(job_id, done, total)
        seen.append(_read_elsewhere(job_id))  # the import's transaction is still open

    real_record = tasks.record_progress
    monkeypatch.setattr(tasks, "record_progress", record)
    assert import_corpus_job.call(job.pk) == 40
    assert seen == [(done, 40) for done in range(0, 40, 2)]
    job.refresh_from_db()
    assert (job.units_done, job.units_total, job.percent) == (40, 40, 100)


def _read_elsewhere(job_id: int) -> tuple[int, int]:
    """The job's progress as a connection of another thread reads it."""
    found = []

    def read():
        try:
            found.append(Job.objects.values_list("units_done", "units_total").get(pk=job_id))
        finally:
            connections.close_all()

    reader = threading.Thread(target=read)
    reader.start()
    reader.join()
    return found[0]


def test_an_import_job_refused_by_the_reader_fails_with_its_reasons(db):
    job = start_import(b"\xff\xfe not text", name="bad", source="bad.bin")
    assert import_corpus_job.call(job.pk) == 0
    job.refresh_from_db()
    assert job.status == JobStatus.FAILED and "not UTF-8" in job.error


def _workers(count: int) -> list[int]:
    command = [sys.executable, str(settings.BASE_DIR / "manage.py"), "db_worker", "--batch",
               "--no-startup-delay", "--interval", "0", "--no-reload", "-v", "0"]  # fmt: skip
    processes = [
        subprocess.Popen([*command, "--worker-id", f"test-{i}"], env=worker_env())
        for i in range(count)
    ]
    return [p.wait(timeout=120) for p in processes]


@pytest.mark.django_db(transaction=True)
def test_worker_processes_share_the_queue_and_measure_each_chunk_once(airline):
    job = start_measure(airline, "travel", chunk_size=1, repeats=1, use_peer=False)
    assert _workers(2) == [0, 0]
    job.refresh_from_db()
    assert (job.status, job.chunks_done, job.units_done) == (JobStatus.DONE, 4, 4)
    assert set(DBTaskResult.objects.values_list("status", flat=True)) == {"SUCCESSFUL"}
    assert all(worker for worker in job.chunks.values_list("worker", flat=True))
    assert Report.objects.get(job=job).figures["header"]["transcripts"] == 4


@pytest.mark.django_db(transaction=True)
def test_the_jobs_bench_builds_a_repeated_corpus_and_says_so(capsys):
    call_command("run_jobs_bench", "--corpora", str(RECORDS), "--transcripts", "14",
                 "--workers", "1", "2", "--chunk-size", "4")  # fmt: skip
    out = capsys.readouterr().out
    assert "14 transcripts = 7 real airline transcripts × 2" in out
    assert "a load test, not evidence" in out
    assert "figures identical across runs (timing aside): yes" in out
    assert len([line for line in out.splitlines() if line.strip().startswith(("1 ", "2 "))]) == 2


def test_the_measure_command_reads_a_stored_corpus_and_saves_its_report(airline, capsys):
    call_command("measure", "airline-slice", "--schema", "travel", "--repeats", "1",
                 "--no-peer", "--save")  # fmt: skip
    report = Report.objects.get()
    assert (report.corpus, report.figures["header"]["transcripts"]) == (airline, 4)
    assert "transcripts      4" in capsys.readouterr().out


def test_the_measure_command_queues_a_stored_corpus_for_the_workers(airline, capsys):
    call_command("measure", "airline-slice", "--schema", "travel", "--background",
                 "--chunk-size", "2")  # fmt: skip
    job = Job.objects.get()
    assert (job.chunks_total, job.status) == (2, JobStatus.QUEUED)
    assert f"queued job {job.pk}: 4 transcripts in 2 chunks" in capsys.readouterr().out


def test_stored_labels_support_a_precision_figure_in_the_jobs_report(airline):
    from compiler import __version__, load_schema
    from labelling.compiling import compile_transcript
    from labelling.models import Label

    schema = load_schema("travel")
    transcript = airline.transcripts.order_by("position").first()
    extraction = compile_transcript(transcript, schema)[0]
    Label.objects.create(
        transcript=transcript, schema_name="travel", schema_digest=schema.digest,
        compiler_version=__version__, slot=extraction.slot, value=extraction.value,
        turn=extraction.turn, provenance=extraction.provenance, role=extraction.role,
        verdict="correct", quote=extraction.quote,
    )  # fmt: skip
    job = start_measure(airline, "travel", repeats=1, use_peer=False)
    _run_all(job)
    precision = job.report.figures["precision"]
    assert (precision["figure"], precision["all"]["rows"], precision["all"]["units"]) == (
        True,
        1,
        1,
    )

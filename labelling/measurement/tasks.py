"""Background tasks: import a corpus, measure a stored corpus in chunks.

``start_measure`` writes a ``Job`` and its ``JobChunk`` rows and enqueues one
``measure_chunk`` task per chunk in the same transaction, so a worker never sees a
task whose rows are not there yet. Workers (``python manage.py db_worker``, as many
as wanted, on any machine that reaches the database) claim tasks with
``SELECT … FOR UPDATE SKIP LOCKED``; each chunk measures its transcripts with
``labelling.measurement.measure.measure_items`` and stores one row per transcript. The chunk
that completes the job, under a row lock on the job, folds every chunk's rows into
the stored ``Report`` (``labelling.measurement.corpus_report``): the same figures the
``measure`` command prints for the same corpus, timing apart.

A chunk that is delivered twice does nothing the second time; a chunk that fails
marks its job failed with the error, and the task records the traceback.
"""

from __future__ import annotations

import os
import shlex
import socket
import threading
import time
from collections.abc import Iterator, Sequence
from functools import partial
from pathlib import Path

from django.conf import settings
from django.db import connection, connections, transaction
from django.utils import timezone
from django_tasks import task

from labelling.measurement.corpus_report import corpus_report
from labelling.measurement.measure import Item, cap_per_repo, measure_items
from labelling.measurement.models import Job, JobChunk, JobKind, JobStatus, Report, ReportKind

CHUNK_SIZE = 50


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


# -- measuring -------------------------------------------------------------------------


def start_measure(
    corpus,
    schema_name: str,
    *,
    chunk_size: int = CHUNK_SIZE,
    repeats: int = 3,
    use_peer: bool = True,
    per_repo: int | None = None,
    user=None,
) -> Job:
    """A measuring job on a stored corpus, its chunks, and one queued task per chunk."""
    from compiler import load_schema

    load_schema(schema_name)  # an unknown schema fails here, not in a worker
    listed = [
        Item(f"{corpus.name}#{ext}", ext, [], None, {}, family)
        for ext, family in corpus.transcripts.order_by("position").values_list(
            "external_id", "family"
        )
    ]
    kept, cap = cap_per_repo(listed, per_repo)
    wanted = {item.external_id for item in kept}
    positions = [
        p
        for p, ext in corpus.transcripts.order_by("position").values_list("position", "external_id")
        if ext in wanted
    ]
    params = {
        "repeats": repeats,
        "use_peer": use_peer,
        "per_repo": per_repo,
        "chunk_size": chunk_size,
        "cap": cap,
    }
    chunks = [positions[i : i + chunk_size] for i in range(0, len(positions), chunk_size)]
    with transaction.atomic():
        job = Job.objects.create(
            kind=JobKind.MEASURE,
            title=f"{corpus.name} × {schema_name}",
            corpus=corpus,
            schema_name=schema_name,
            params=params,
            units_total=len(positions),
            chunks_total=len(chunks),
            created_by=user if user is not None and user.is_authenticated else None,
        )
        made = JobChunk.objects.bulk_create(
            JobChunk(job=job, index=index, positions=chunk) for index, chunk in enumerate(chunks)
        )
        for chunk in made:
            measure_chunk.enqueue(chunk.pk)
        if not made:  # an empty corpus: nothing to queue, the report says so
            finish_measure(Job.objects.select_for_update().get(pk=job.pk))
    return job


@task()
def measure_chunk(chunk_id: int) -> int:
    """Measure one chunk; the last chunk of a job writes its report. Returns rows stored."""
    claimed = JobChunk.objects.filter(pk=chunk_id, status=JobStatus.QUEUED).update(
        status=JobStatus.RUNNING, started_at=timezone.now(), worker=worker_name()
    )
    if not claimed:  # delivered twice, or already done
        return 0
    chunk = JobChunk.objects.select_related("job__corpus").get(pk=chunk_id)
    job = chunk.job
    Job.objects.filter(pk=job.pk, status=JobStatus.QUEUED).update(
        status=JobStatus.RUNNING, started_at=timezone.now()
    )
    started = time.perf_counter()
    try:
        items = stored_items(job.corpus, chunk.positions)
        rows, errors, peer = measure_items(
            items,
            job.schema_name,
            repeats=job.params.get("repeats", 1),
            use_peer=job.params.get("use_peer", False),
        )
    except Exception as exc:
        _fail(chunk, exc)
        raise
    with transaction.atomic():
        JobChunk.objects.filter(pk=chunk.pk).update(
            status=JobStatus.DONE,
            rows=rows,
            errors=errors,
            peer=peer,
            seconds=time.perf_counter() - started,
            finished_at=timezone.now(),
        )
        job = Job.objects.select_for_update().get(pk=job.pk)
        job.units_done += len(chunk.positions)
        job.chunks_done += 1
        job.save(update_fields=["units_done", "chunks_done"])
        if job.chunks_done == job.chunks_total and job.status == JobStatus.RUNNING:
            finish_measure(job)
    return len(rows)


def _fail(chunk: JobChunk, exc: Exception) -> None:
    message = f"chunk {chunk.index}: {type(exc).__name__}: {exc}"[:2000]
    now = timezone.now()
    JobChunk.objects.filter(pk=chunk.pk).update(
        status=JobStatus.FAILED, errors=[{"error": message}], finished_at=now
    )
    Job.objects.filter(pk=chunk.job_id).exclude(status=JobStatus.FAILED).update(
        status=JobStatus.FAILED, error=message, finished_at=now
    )


def finish_measure(job: Job) -> Report:
    """Fold every chunk's rows into the job's report (call with the job row locked)."""
    chunks = list(job.chunks.order_by("index"))
    rows = [row for chunk in chunks for row in chunk.rows]
    errors = [error for chunk in chunks for error in chunk.errors]
    peer = next((c.peer for c in chunks if c.peer), {"available": False, "why": "no chunk ran"})
    params = job.params
    figures = corpus_report(
        rows,
        errors,
        corpus=job.corpus.name,
        schema=job.schema_name,
        repeats=params.get("repeats", 1),
        peer=peer,
        labels=stored_labels(job.corpus, job.schema_name),
        cap=params.get("cap") or None,
        command=measure_command(job),
    )
    figures["job"] = {
        "chunks": len(chunks),
        "workers": sorted({c.worker for c in chunks if c.worker}),
        "chunk_seconds": round(sum(c.seconds or 0 for c in chunks), 3),
    }
    report = Report.objects.create(
        kind=ReportKind.MEASURE,
        title=job.title,
        corpus=job.corpus,
        schema_name=job.schema_name,
        command=figures["command"],
        figures=figures,
        job=job,
    )
    job.status = JobStatus.DONE
    job.finished_at = timezone.now()
    job.save(update_fields=["status", "finished_at"])
    return report


def measure_command(job: Job) -> str:
    params = job.params
    parts = ["python", "manage.py", "measure", job.corpus.name, "--schema", job.schema_name]
    parts += ["--repeats", str(params.get("repeats", 1))]
    if params.get("per_repo"):
        parts += ["--per-repo", str(params["per_repo"])]
    if not params.get("use_peer", False):
        parts.append("--no-peer")
    return shlex.join(parts)


def stored_items(corpus, positions: list[int] | None = None) -> list[Item]:
    """The stored transcripts of ``corpus`` (at ``positions``) as items to measure."""
    found = corpus.transcripts.order_by("position")
    if positions is not None:
        found = found.filter(position__in=positions)
    return [
        Item(
            ident=f"{corpus.name}#{t.external_id}",
            external_id=t.external_id,
            messages=t.messages,
            record=t.record,
            meta=t.meta or {},
            family=t.family,
        )
        for t in found
    ]


def stored_labels(corpus, schema_name: str) -> dict:
    """The stored labels of a corpus and schema, in the label-file shape ``precision`` reads."""
    from labelling.models import Label

    labels = Label.objects.filter(transcript__corpus=corpus, schema_name=schema_name)
    rows = [
        {
            "transcript": f"{corpus.name}#{external_id}",
            "family": family,
            "slot": slot,
            "turn": turn,
            "value": value,
            "verdict": verdict,
        }
        for external_id, family, slot, turn, value, verdict in labels.values_list(
            "transcript__external_id", "transcript__family", "slot", "turn", "value", "verdict"
        )
    ]
    return {"source": f"stored labels of {corpus.name} × {schema_name}", "rows": rows}


# -- importing ---------------------------------------------------------------------------


def start_import(data: bytes, *, name: str, source: str, provenance: str = "", user=None) -> Job:
    """A job that imports ``data`` as a corpus called ``name`` in a worker."""
    with transaction.atomic():
        job = Job.objects.create(
            kind=JobKind.IMPORT,
            title=name,
            params={"name": name, "source": source, "provenance": provenance, "bytes": len(data)},
            payload=data,
            chunks_total=1,
            created_by=user if user is not None and user.is_authenticated else None,
        )
        import_corpus_job.enqueue(job.pk)
    return job


@task()
def import_corpus_job(job_id: int) -> int:
    """Import the job's file with ``labelling.importing.import_corpus`` (all or nothing)."""
    job = claim_import(job_id)
    return 0 if job is None else run_import(job, bytes(job.payload))


def claim_import(job_id: int) -> Job | None:
    """The queued import job, now running; None if it was delivered twice or is done."""
    claimed = Job.objects.filter(pk=job_id, status=JobStatus.QUEUED).update(
        status=JobStatus.RUNNING, started_at=timezone.now()
    )
    return Job.objects.get(pk=job_id) if claimed else None


def run_import(job: Job, data: bytes) -> int:
    """Import ``data`` for the running ``job`` and end it. Returns the transcripts stored.

    The import is one transaction, so the transcripts it stores are not visible until it
    commits; its progress is recorded as it goes (``record_progress``).
    """
    from labelling.importing import ImportRefused, import_corpus

    params = job.params
    try:
        result = import_corpus(
            data,
            name=params["name"],
            source=params["source"],
            provenance=params.get("provenance", ""),
            user=job.created_by,
            progress=partial(progress_of, job.pk),
        )
    except ImportRefused as refused:
        end_import(job, JobStatus.FAILED, error="\n".join(refused.reasons)[:5000])
        return 0
    except Exception as exc:
        end_import(job, JobStatus.FAILED, error=f"{type(exc).__name__}: {exc}"[:2000])
        raise
    params["created"] = result.created
    end_import(
        job,
        JobStatus.DONE,
        corpus=result.corpus,
        units_total=result.transcripts,
        units_done=result.transcripts,
        chunks_done=1,
        params=params,
    )
    return result.transcripts


def end_import(job: Job, status: str, **fields) -> None:
    """Mark an import job ended with ``status``; its file, kept in the row, is let go,
    and so is the progress file an import on SQLite wrote (``record_progress``)."""
    Job.objects.filter(pk=job.pk).update(
        status=status, finished_at=timezone.now(), payload=None, **fields
    )
    progress_file(job.pk).unlink(missing_ok=True)


PROGRESS_STEPS = 20  # an import records its progress at most this many times


def progress_of(job_id: int, items: Sequence) -> Iterator:
    """``items`` one by one, recording in the job how many have been taken of how many."""
    total = len(items)
    step = max(1, total // PROGRESS_STEPS)
    for done, item in enumerate(items):
        if done % step == 0:
            record_progress(job_id, done, total)
        yield item


def record_progress(job_id: int, done: int, total: int) -> None:
    """Write ``done`` of ``total`` transcripts to the running job, for its page to show.

    The import runs in a transaction, which would hide this write until it commits, so
    the write goes through a connection of its own (a thread's, closed after it). SQLite
    lets one connection write at a time and the import holds it, so there the figure
    goes to a small file beside the uploads instead, which the job's page reads
    (``with_progress``).
    """
    if connection.vendor == "sqlite":
        write_progress_file(job_id, done, total)
        return

    def write() -> None:
        try:
            Job.objects.filter(pk=job_id, status=JobStatus.RUNNING).update(
                units_done=done, units_total=total
            )
        finally:
            connections.close_all()  # this thread's connections only

    writer = threading.Thread(target=write, name=f"job-{job_id}-progress")
    writer.start()
    writer.join()


def progress_file(job_id: int) -> Path:
    """Where an import on SQLite keeps its progress while its transaction is open."""
    return Path(settings.CONTEXTGC_UPLOAD_DIR) / "progress" / f"job-{job_id}.txt"


def write_progress_file(job_id: int, done: int, total: int) -> None:
    """``done`` and ``total`` in the job's progress file, replaced whole (a reader never
    sees half a write)."""
    target = progress_file(job_id)
    target.parent.mkdir(parents=True, exist_ok=True)
    partial_file = target.with_suffix(f".{os.getpid()}.{threading.get_ident()}")
    partial_file.write_text(f"{done} {total}", encoding="ascii")
    os.replace(partial_file, target)


def with_progress(job: Job) -> Job:
    """``job`` with the progress its progress file holds, where it is running and its
    row has none yet (an import on SQLite); the row is not written."""
    if job.status != JobStatus.RUNNING or job.units_total:
        return job
    try:
        done, total = (int(n) for n in progress_file(job.pk).read_text("ascii").split())
    except (OSError, ValueError):
        return job
    job.units_done, job.units_total = done, total
    return job

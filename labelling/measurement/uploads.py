"""The job that imports a corpus file uploaded from either import form.

``start_upload_import`` keeps the file (``labelling.uploads.save_upload``) and queues a
``Job`` with one task, in one transaction; ``import_upload_job`` imports the file with
``labelling.importing.import_corpus`` — all or nothing, as from the shell — and deletes
it, whatever the outcome. The job's page follows it.
"""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone
from django_tasks import task

from labelling.measurement.models import Job, JobKind, JobStatus
from labelling.uploads import save_upload, upload_path


def start_upload_import(upload, *, name: str, provenance: str = "", user=None) -> Job:
    """A job that imports the uploaded corpus file as ``name`` in a worker."""
    path = save_upload(upload)
    try:
        with transaction.atomic():
            job = Job.objects.create(
                kind=JobKind.IMPORT,
                title=name,
                params={
                    "name": name,
                    "source": upload.name,
                    "provenance": provenance,
                    "bytes": upload.size,
                    "file": path.name,
                },
                chunks_total=1,
                created_by=user if user is not None and user.is_authenticated else None,
            )
            import_upload_job.enqueue(job.pk)
    except BaseException:
        path.unlink(missing_ok=True)
        raise
    return job


@task()
def import_upload_job(job_id: int) -> int:
    """Import the job's uploaded file, then delete it. Returns the transcripts stored."""
    from labelling.importing import ImportRefused, import_corpus

    claimed = Job.objects.filter(pk=job_id, status=JobStatus.QUEUED).update(
        status=JobStatus.RUNNING, started_at=timezone.now()
    )
    if not claimed:  # delivered twice, or already done
        return 0
    job = Job.objects.get(pk=job_id)
    params = job.params
    path = upload_path(params["file"])
    try:
        result = import_corpus(
            path.read_bytes(),
            name=params["name"],
            source=params["source"],
            provenance=params.get("provenance", ""),
            user=job.created_by,
        )
    except ImportRefused as refused:
        _end(job, JobStatus.FAILED, error="\n".join(refused.reasons)[:5000])
        return 0
    except Exception as exc:
        _end(job, JobStatus.FAILED, error=f"{type(exc).__name__}: {exc}"[:2000])
        raise
    finally:
        path.unlink(missing_ok=True)
    params["created"] = result.created
    _end(
        job,
        JobStatus.DONE,
        corpus=result.corpus,
        units_total=result.transcripts,
        units_done=result.transcripts,
        chunks_done=1,
        params=params,
    )
    return result.transcripts


def _end(job: Job, status: str, **fields) -> None:
    Job.objects.filter(pk=job.pk).update(status=status, finished_at=timezone.now(), **fields)

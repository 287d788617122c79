"""The job that imports a corpus file uploaded from either import form.

``start_upload_import`` keeps the file (``labelling.uploads.save_upload``) and queues a
``Job`` with one task, in one transaction; ``import_upload_job`` imports the file with
``labelling.importing.import_corpus`` — all or nothing, as from the shell — and deletes
it, whatever the outcome. The job's page follows it.
"""

from __future__ import annotations

from django.db import transaction
from django_tasks import task

from labelling.measurement.models import Job, JobKind
from labelling.measurement.tasks import claim_import, run_import
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
    job = claim_import(job_id)
    if job is None:  # delivered twice, or already done
        return 0
    path = upload_path(job.params["file"])
    try:
        return run_import(job, path.read_bytes())
    finally:
        path.unlink(missing_ok=True)

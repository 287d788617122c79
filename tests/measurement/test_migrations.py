"""A database made before the measurement app existed keeps its jobs and reports.

Each test takes the test database back to ``labelling.0002_jobs`` (the jobs tables
belonged to the labelling app then), stores rows through that migration state's
models, migrates forward to the latest state and reads them through today's models.
"""

from __future__ import annotations

import pytest
from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from labelling.measurement.models import Job, JobChunk

BEFORE = ("labelling", "0002_jobs")
MODELS = ("job", "jobchunk", "report")

pytestmark = pytest.mark.django_db(transaction=True)


def _migrate(targets) -> MigrationExecutor:
    executor = MigrationExecutor(connection)
    executor.migrate(targets)
    return MigrationExecutor(connection)  # a fresh loader sees what was applied


def _back_to_before():
    """The database as the labelling app left it before the move; its models then."""
    executor = _migrate([BEFORE, ("measurement", None)])
    return executor.loader.project_state(BEFORE).apps


def _forward() -> None:
    _migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())


def test_a_job_its_chunk_and_its_report_stored_before_the_move_are_read_after_it():
    old = _back_to_before()
    corpus = old.get_model("labelling", "Corpus").objects.create(
        name="old corpus", format="jsonl", source="old.jsonl", digest="d" * 64, size_bytes=1
    )
    job = old.get_model("labelling", "Job").objects.create(
        kind="measure", status="done", title="old job", corpus=corpus, schema_name="travel"
    )
    old.get_model("labelling", "JobChunk").objects.create(job=job, index=0, positions=[0, 1])
    old.get_model("labelling", "Report").objects.create(
        kind="measure", title="old report", corpus=corpus, schema_name="travel",
        command="python manage.py measure old", figures={"n": 2}, job=job,
    )  # fmt: skip

    _forward()

    found = Job.objects.get(pk=job.pk)
    assert (found.title, found.corpus.name, found.status) == ("old job", "old corpus", "done")
    assert list(JobChunk.objects.filter(job=found).values_list("positions", flat=True)) == [[0, 1]]
    assert (found.report.title, found.report.figures) == ("old report", {"n": 2})


def test_the_moved_models_keep_their_content_types_so_their_permissions_stay_attached():
    before = {m: ContentType.objects.get(app_label="measurement", model=m).pk for m in MODELS}
    _back_to_before()
    assert set(
        ContentType.objects.filter(app_label="labelling", model__in=MODELS).values_list("pk")
    ) == {(pk,) for pk in before.values()}
    _forward()
    after = {m: ContentType.objects.get(app_label="measurement", model=m).pk for m in MODELS}
    assert after == before

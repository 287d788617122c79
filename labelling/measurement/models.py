"""Background jobs and the reports they leave behind.

Importing and measuring a large corpus is work for background workers, not for a
web request. A ``Job`` is one such piece of work as people see it (what, on which
corpus, how far along, how it ended); a measuring job is split into ``JobChunk``
rows, one task each on the database-backed queue (``django_tasks_db``), so any
number of ``manage.py db_worker`` processes on any number of machines share it
through PostgreSQL. The last chunk to finish folds every chunk's rows into a
``Report``; reports also come from the ``measure`` and ``score_records`` commands
(``--save``), so every figure on the report pages has a command that reproduces it.

The tables keep the names they had when these models lived in the labelling app
(``labelling_job``, ``labelling_jobchunk``, ``labelling_report``): the move to this
app changed Django's state only, not the database (migration ``0001_initial``).
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.urls import reverse


class JobKind(models.TextChoices):
    IMPORT = "import", "import a corpus"
    MEASURE = "measure", "measure a corpus"


class JobStatus(models.TextChoices):
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"


FINISHED = (JobStatus.DONE, JobStatus.FAILED)


class ReportKind(models.TextChoices):
    MEASURE = "measure", "corpus report"
    RECORDS = "records", "ground truth from records"


def _in(field: str, choices) -> Q:
    return Q(**{f"{field}__in": choices.values})


class Job(models.Model):
    """One background job: its progress in units (transcripts) and chunks (tasks)."""

    kind = models.CharField(max_length=16, choices=JobKind.choices)
    status = models.CharField(max_length=16, choices=JobStatus.choices, default=JobStatus.QUEUED)
    title = models.CharField(max_length=300)
    corpus = models.ForeignKey(
        "labelling.Corpus", null=True, blank=True, on_delete=models.CASCADE, related_name="jobs"
    )
    schema_name = models.CharField(max_length=100, blank=True)
    params = models.JSONField(default=dict, blank=True)
    units_total = models.PositiveIntegerField(default=0)
    units_done = models.PositiveIntegerField(default=0)
    chunks_total = models.PositiveIntegerField(default=0)
    chunks_done = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)
    # An import job's file, kept until the import has run: workers on other machines
    # read it from the database, not from a disk they may not share.
    payload = models.BinaryField(null=True, blank=True, editable=False)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "labelling_job"
        ordering = ("-created_at", "-id")
        constraints = (
            models.CheckConstraint(condition=_in("kind", JobKind), name="job_kind"),
            models.CheckConstraint(condition=_in("status", JobStatus), name="job_status"),
            models.CheckConstraint(
                condition=Q(units_done__lte=models.F("units_total")), name="job_units_le_total"
            ),
            models.CheckConstraint(
                condition=Q(chunks_done__lte=models.F("chunks_total")), name="job_chunks_le_total"
            ),
        )

    def __str__(self) -> str:
        return f"{self.get_kind_display()}: {self.title} ({self.status})"

    def get_absolute_url(self) -> str:
        return reverse("measurement:job", args=[self.pk])

    @property
    def finished(self) -> bool:
        return self.status in FINISHED

    @property
    def percent(self) -> int:
        """Progress as a whole percentage of units (chunks when units are unknown)."""
        done, total = (
            (self.units_done, self.units_total)
            if self.units_total
            else (self.chunks_done, self.chunks_total)
        )
        if self.status == JobStatus.DONE:
            return 100
        return int(100 * done / total) if total else 0

    @property
    def seconds(self) -> float | None:
        """Wall time from the first chunk starting to the job finishing (or now)."""
        if self.started_at is None:
            return None
        from django.utils import timezone

        end = self.finished_at or timezone.now()
        return (end - self.started_at).total_seconds()


class JobChunk(models.Model):
    """One task's share of a job: the transcript positions it measures, and its rows."""

    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="chunks")
    index = models.PositiveIntegerField()
    positions = models.JSONField(default=list)
    status = models.CharField(max_length=16, choices=JobStatus.choices, default=JobStatus.QUEUED)
    rows = models.JSONField(default=list, blank=True)
    errors = models.JSONField(default=list, blank=True)
    peer = models.JSONField(default=dict, blank=True)
    worker = models.CharField(max_length=200, blank=True)
    seconds = models.FloatField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "labelling_jobchunk"
        ordering = ("job", "index")
        constraints = (
            models.UniqueConstraint(fields=("job", "index"), name="job_chunk_unique"),
            models.CheckConstraint(condition=_in("status", JobStatus), name="job_chunk_status"),
        )

    def __str__(self) -> str:
        return f"{self.job_id}#{self.index} ({self.status})"


class Report(models.Model):
    """Stored figures: a corpus report or a records report, and how to reproduce it."""

    kind = models.CharField(max_length=16, choices=ReportKind.choices)
    title = models.CharField(max_length=300)
    corpus = models.ForeignKey(
        "labelling.Corpus",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="reports",
    )
    schema_name = models.CharField(max_length=100)
    command = models.TextField(help_text="The command that reproduces these figures.")
    figures = models.JSONField()
    job = models.OneToOneField(
        Job, null=True, blank=True, on_delete=models.SET_NULL, related_name="report"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "labelling_report"
        ordering = ("-created_at", "-id")
        constraints = (
            models.CheckConstraint(condition=_in("kind", ReportKind), name="report_kind"),
        )

    def __str__(self) -> str:
        return f"{self.get_kind_display()}: {self.title}"

    def get_absolute_url(self) -> str:
        return reverse("measurement:report", args=[self.pk])

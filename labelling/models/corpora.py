"""The evidence: a ``Corpus`` of ``Transcript`` rows as the compiler read them, and per
``CompileRun`` (one corpus under one schema digest and one compiler version) the
``Extraction`` rows — every value every slot held, with the turn that set it — and the
``Retirement`` rows, the turns a ``compact`` compile retired.

A run is identified by what made it, so asking again for the same run reuses it; the
transcripts keep their messages, so a recompile needs no file.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from labelling.models.choices import CorpusFormat, Provenance, Role, TurnKind, among


class Corpus(models.Model):
    """One imported file of transcripts. ``digest`` (SHA-256 of the bytes) makes a
    re-import of the same file a no-op."""

    name = models.CharField(max_length=200, unique=True)
    format = models.CharField(max_length=16, choices=CorpusFormat.choices)
    source = models.CharField(max_length=500, help_text="File name or address it came from.")
    provenance = models.TextField(blank=True, help_text="Who wrote it, licence, how it was cut.")
    digest = models.CharField(max_length=64, unique=True)
    size_bytes = models.PositiveBigIntegerField()
    warnings = models.JSONField(default=list, blank=True)  # [{transcript, line, message}]
    imported_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ("name",)
        verbose_name_plural = "corpora"
        constraints = (
            models.CheckConstraint(condition=among("format", CorpusFormat), name="corpus_format"),
            models.CheckConstraint(condition=~Q(name=""), name="corpus_name_not_empty"),
        )

    def __str__(self) -> str:
        return self.name


class Transcript(models.Model):
    """One transcript as the compiler read it. ``messages`` are the message dicts
    (``compiler.messages.message_to_dict``), enough to compile it again without the
    file. ``family`` groups transcripts that are not independent evidence (see
    ``labelling.importing.family_of``)."""

    corpus = models.ForeignKey(Corpus, on_delete=models.CASCADE, related_name="transcripts")
    external_id = models.CharField(max_length=255)
    family = models.CharField(max_length=255, db_index=True)
    position = models.PositiveIntegerField()  # order in the file
    format = models.CharField(max_length=16, choices=CorpusFormat.choices)
    messages = models.JSONField()
    turn_count = models.PositiveIntegerField()
    meta = models.JSONField(default=dict, blank=True)
    record = models.JSONField(null=True, blank=True)  # the raw JSON record, if any
    warnings = models.JSONField(default=list, blank=True)  # [{line, message}]

    class Meta:
        ordering = ("corpus", "position")
        constraints = (
            models.UniqueConstraint(fields=("corpus", "external_id"), name="transcript_unique_id"),
            models.UniqueConstraint(fields=("corpus", "position"), name="transcript_unique_pos"),
            models.CheckConstraint(
                condition=among("format", CorpusFormat), name="transcript_format"
            ),
        )

    def __str__(self) -> str:
        return f"{self.corpus.name}/{self.external_id}"


class CompileRun(models.Model):
    """One corpus compiled under one schema (name and digest) by one compiler version."""

    corpus = models.ForeignKey(Corpus, on_delete=models.CASCADE, related_name="runs")
    schema_name = models.CharField(max_length=100)
    schema_digest = models.CharField(max_length=64)
    compiler_version = models.CharField(max_length=32)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ("corpus", "schema_name", "-created_at")
        constraints = (
            models.UniqueConstraint(
                fields=("corpus", "schema_name", "schema_digest", "compiler_version"),
                name="compile_run_unique",
            ),
        )

    def __str__(self) -> str:
        return f"{self.corpus.name} × {self.schema_name} ({self.schema_digest[:8]})"


class Extraction(models.Model):
    """One value a slot took at a turn (a register history entry), with the role and
    kind of the registering turn and a quote of that turn and its neighbours
    (``quote``: ``[{turn, role, text}]``)."""

    run = models.ForeignKey(CompileRun, on_delete=models.CASCADE, related_name="extractions")
    transcript = models.ForeignKey(Transcript, on_delete=models.CASCADE, related_name="extractions")
    slot = models.CharField(max_length=100)
    value = models.TextField()
    turn = models.PositiveIntegerField()
    provenance = models.CharField(max_length=16, choices=Provenance.choices)
    role = models.CharField(max_length=16, choices=Role.choices)
    kind = models.CharField(max_length=16, choices=TurnKind.choices)
    quote = models.JSONField()
    superseded_by = models.PositiveIntegerField(null=True, blank=True)
    revoked_at = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        ordering = ("run", "transcript__position", "turn", "slot", "value")
        constraints = (
            models.UniqueConstraint(
                fields=("run", "transcript", "slot", "turn", "value"), name="extraction_unique"
            ),
            models.CheckConstraint(condition=among("provenance", Provenance), name="extr_prov"),
            models.CheckConstraint(condition=among("role", Role), name="extraction_role"),
            models.CheckConstraint(condition=among("kind", TurnKind), name="extraction_kind"),
        )
        indexes = (models.Index(fields=("run", "slot")),)

    def __str__(self) -> str:
        return f"{self.slot} = {self.value!r} (turn {self.turn})"

    @property
    def key(self) -> tuple[str, str, int, str]:
        """What identifies the extraction across runs: transcript, slot, turn, value."""
        return (self.transcript.external_id, self.slot, self.turn, self.value)


class Retirement(models.Model):
    """One turn the compiler retired in ``compact`` mode: which slots made it go and the
    turn that superseded (or revoked) each (``superseded_by``: ``{slot: turn}``), the
    compiler's ``reason``, and a quote of the retired turn and of each superseding turn
    (``quote``: ``[{turn, role, text, retired, superseding}]``)."""

    run = models.ForeignKey(CompileRun, on_delete=models.CASCADE, related_name="retirements")
    transcript = models.ForeignKey(Transcript, on_delete=models.CASCADE, related_name="retirements")
    turn = models.PositiveIntegerField()
    role = models.CharField(max_length=16, choices=Role.choices)
    superseded_by = models.JSONField()
    reason = models.TextField()
    quote = models.JSONField()

    class Meta:
        ordering = ("run", "transcript__position", "turn")
        constraints = (
            models.UniqueConstraint(fields=("run", "transcript", "turn"), name="retirement_unique"),
            models.CheckConstraint(condition=among("role", Role), name="retirement_role"),
        )

    def __str__(self) -> str:
        return f"turn {self.turn} retired ({self.reason})"

    @property
    def superseding_turns(self) -> list[int]:
        return sorted(set(self.superseded_by.values()))

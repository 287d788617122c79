"""The final judgements: a ``Label`` is the merged judgement of one extraction, a
``RetirementLabel`` of one retired turn — what export and import move in and out of
label files — and a ``LabelCorrection`` records a maintainer's change to a label's
verdict.

A label is keyed by what was judged (transcript, schema, slot, turn, value; or
transcript, schema, turn), not by the run that produced it, so it outlives a compiler
change and the precision report can say which labels no longer reproduce instead of
dropping them.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from labelling.models.choices import Provenance, Role, VerdictChoice, WorksheetKind, among
from labelling.models.corpora import Extraction, Transcript
from labelling.models.worksheets import Worksheet


class Label(models.Model):
    """The merged, final judgement of one extraction: what a label file holds.

    Keyed by transcript, schema, slot, turn and value, so it survives a recompile;
    ``extraction`` points at the row it was judged on while that still exists.
    """

    transcript = models.ForeignKey(Transcript, on_delete=models.CASCADE, related_name="labels")
    schema_name = models.CharField(max_length=100)
    schema_digest = models.CharField(max_length=64)
    compiler_version = models.CharField(max_length=32)
    slot = models.CharField(max_length=100)
    value = models.TextField()
    turn = models.PositiveIntegerField()
    provenance = models.CharField(max_length=16, choices=Provenance.choices)
    role = models.CharField(max_length=16, choices=Role.choices)
    verdict = models.CharField(max_length=16, choices=VerdictChoice.choices)
    note = models.TextField(blank=True)
    reviewers = models.JSONField(default=list)  # sorted usernames
    adjudicated_by = models.CharField(max_length=150, blank=True)
    quote = models.JSONField()
    suggestion_offered = models.BooleanField(default=False)
    extraction = models.ForeignKey(
        Extraction, null=True, blank=True, on_delete=models.SET_NULL, related_name="labels"
    )
    worksheet = models.ForeignKey(
        Worksheet, null=True, blank=True, on_delete=models.SET_NULL, related_name="labels"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    # Counts corrections: a correction names the version it saw (``labels.correct_label``).
    version = models.PositiveIntegerField(default=1)

    class Meta:
        ordering = ("transcript__position", "slot", "turn", "value")
        constraints = (
            models.UniqueConstraint(
                fields=("transcript", "schema_name", "slot", "turn", "value"),
                name="label_unique_extraction",
            ),
            models.CheckConstraint(condition=among("verdict", VerdictChoice), name="label_verdict"),
            models.CheckConstraint(condition=among("provenance", Provenance), name="label_prov"),
            models.CheckConstraint(condition=among("role", Role), name="label_role"),
            models.CheckConstraint(
                condition=~Q(quote=[]) & Q(quote__isnull=False), name="label_has_quote"
            ),
            models.CheckConstraint(condition=Q(version__gte=1), name="label_version"),
        )

    def __str__(self) -> str:
        return f"{self.slot} = {self.value!r} (turn {self.turn}): {self.verdict}"


class RetirementLabel(models.Model):
    """The merged, final judgement of one retired turn: is it safe to drop there?

    Keyed by transcript, schema and turn, so it survives a recompile; what a retirement
    label file holds (``labelling.labels``, kind ``retirement``).
    """

    transcript = models.ForeignKey(
        Transcript, on_delete=models.CASCADE, related_name="retirement_labels"
    )
    schema_name = models.CharField(max_length=100)
    schema_digest = models.CharField(max_length=64)
    compiler_version = models.CharField(max_length=32)
    turn = models.PositiveIntegerField()
    role = models.CharField(max_length=16, choices=Role.choices)
    superseded_by = models.JSONField()
    reason = models.TextField()
    verdict = models.CharField(max_length=16, choices=VerdictChoice.choices)
    note = models.TextField(blank=True)
    reviewers = models.JSONField(default=list)  # sorted usernames
    adjudicated_by = models.CharField(max_length=150, blank=True)
    quote = models.JSONField()
    worksheet = models.ForeignKey(
        Worksheet, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ("transcript__position", "turn")
        constraints = (
            models.UniqueConstraint(
                fields=("transcript", "schema_name", "turn"), name="retirement_label_unique"
            ),
            models.CheckConstraint(
                condition=Q(verdict__in=WorksheetKind.RETIREMENT.verdicts),
                name="retirement_label_verdict",
            ),
            models.CheckConstraint(condition=among("role", Role), name="retirement_label_role"),
            models.CheckConstraint(
                condition=~Q(quote=[]) & Q(quote__isnull=False), name="retirement_label_quote"
            ),
        )

    def __str__(self) -> str:
        return f"turn {self.turn} retired: {self.verdict}"


class LabelCorrection(models.Model):
    """A maintainer's correction of a stored label's verdict: who, when, from what to
    what and why. The label holds the corrected verdict (exports read it); these rows are
    its audit trail, oldest first."""

    label = models.ForeignKey(Label, on_delete=models.CASCADE, related_name="corrections")
    corrected_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="label_corrections"
    )
    corrected_at = models.DateTimeField(auto_now_add=True)
    old_verdict = models.CharField(max_length=16, choices=VerdictChoice.choices)
    new_verdict = models.CharField(max_length=16, choices=VerdictChoice.choices)
    reason = models.TextField()
    version = models.PositiveIntegerField()  # the label's version this correction made

    class Meta:
        ordering = ("label", "version")
        constraints = (
            models.UniqueConstraint(fields=("label", "version"), name="correction_one_per_version"),
            models.CheckConstraint(
                condition=among("old_verdict", VerdictChoice) & among("new_verdict", VerdictChoice),
                name="correction_verdicts",
            ),
            models.CheckConstraint(
                condition=~Q(old_verdict=models.F("new_verdict")), name="correction_changes"
            ),
            models.CheckConstraint(condition=~Q(reason=""), name="correction_has_reason"),
        )

    def __str__(self) -> str:
        return f"{self.label}: {self.old_verdict} → {self.new_verdict} (v{self.version})"

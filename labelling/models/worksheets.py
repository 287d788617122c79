"""The judgements in progress: a ``Worksheet`` samples one run's extractions (or retired
turns) into ``WorksheetRow`` rows, its ``Membership`` rows say who reviews and who
adjudicates, each reviewer records a ``Verdict`` per row, and an ``Adjudication``
settles a row the reviewers disagreed on.

A verdict carries a version: a save names the version it saw, so a stale tab gets a
conflict instead of overwriting.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from labelling.models.choices import MemberRole, VerdictChoice, WorksheetKind, among
from labelling.models.corpora import CompileRun, Corpus, Extraction, Retirement


class Worksheet(models.Model):
    """A sample of one run's extractions (or, for a ``retirement`` worksheet, of the turns
    it retired) for people to judge.

    ``sampling`` records how the rows were drawn (window, suggestions, what was
    skipped); ``shortfalls`` names the slots that got fewer rows than the budget.
    """

    name = models.CharField(max_length=200)
    kind = models.CharField(
        max_length=16, choices=WorksheetKind.choices, default=WorksheetKind.EXTRACTION
    )
    rule = models.TextField(blank=True, help_text="The rule reviewers apply; exported with it.")
    run = models.ForeignKey(CompileRun, on_delete=models.PROTECT, related_name="worksheets")
    schema_name = models.CharField(max_length=100)
    schema_digest = models.CharField(max_length=64)
    per_slot_budget = models.PositiveIntegerField()
    reviews_per_row = models.PositiveSmallIntegerField(default=1)
    sampling = models.JSONField(default=dict, blank=True)
    shortfalls = models.JSONField(default=list, blank=True)  # [{slot, budget, rows}]
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    members = models.ManyToManyField(
        settings.AUTH_USER_MODEL, through="Membership", related_name="worksheets"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ("-created_at", "-id")
        constraints = (
            models.CheckConstraint(condition=Q(per_slot_budget__gte=1), name="worksheet_budget"),
            models.CheckConstraint(condition=Q(reviews_per_row__gte=1), name="worksheet_reviews"),
            models.CheckConstraint(condition=among("kind", WorksheetKind), name="worksheet_kind"),
        )

    def __str__(self) -> str:
        return self.name

    @property
    def corpus(self) -> Corpus:
        return self.run.corpus

    @property
    def verdicts(self) -> tuple[VerdictChoice, ...]:
        return WorksheetKind(self.kind).verdicts

    def role_of(self, user) -> str | None:
        """The user's ``MemberRole`` on this worksheet, or None for an outsider."""
        if not user.is_authenticated:
            return None
        membership = self.memberships.filter(user=user).first()
        return membership.role if membership else None


class Membership(models.Model):
    """Who may work on a worksheet, and as what."""

    worksheet = models.ForeignKey(Worksheet, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    role = models.CharField(max_length=16, choices=MemberRole.choices)

    class Meta:
        ordering = ("worksheet", "role", "user__username")
        constraints = (
            models.UniqueConstraint(fields=("worksheet", "user"), name="membership_unique"),
            models.CheckConstraint(condition=among("role", MemberRole), name="membership_role"),
        )

    def __str__(self) -> str:
        return f"{self.user} as {self.role} on {self.worksheet}"


class WorksheetRow(models.Model):
    """One extraction (or, on a retirement worksheet, one retired turn) to judge.
    ``suggestion`` is the mechanical evidence shown beside it when the worksheet was built
    with suggestions (never a verdict), else null."""

    worksheet = models.ForeignKey(Worksheet, on_delete=models.CASCADE, related_name="rows")
    extraction = models.ForeignKey(
        Extraction, null=True, blank=True, on_delete=models.PROTECT, related_name="rows"
    )
    retirement = models.ForeignKey(
        Retirement, null=True, blank=True, on_delete=models.PROTECT, related_name="rows"
    )
    position = models.PositiveIntegerField()  # 1-based, the reviewer's order
    suggestion = models.JSONField(null=True, blank=True)

    class Meta:
        ordering = ("worksheet", "position")
        constraints = (
            models.UniqueConstraint(fields=("worksheet", "position"), name="row_unique_position"),
            models.UniqueConstraint(
                fields=("worksheet", "extraction"), name="row_unique_extraction"
            ),
            models.UniqueConstraint(
                fields=("worksheet", "retirement"), name="row_unique_retirement"
            ),
            models.CheckConstraint(condition=Q(position__gte=1), name="row_position_positive"),
            models.CheckConstraint(
                condition=Q(extraction__isnull=True) ^ Q(retirement__isnull=True),
                name="row_judges_one_thing",
            ),
        )

    def __str__(self) -> str:
        return f"{self.worksheet} #{self.position}"

    @property
    def judged(self) -> Extraction | Retirement:
        """What the row asks about: its extraction or its retired turn."""
        return self.extraction if self.extraction_id is not None else self.retirement


class Verdict(models.Model):
    """One reviewer's judgement of one row. ``version`` counts saves; a save names the
    version it saw, so a stale tab gets a conflict instead of overwriting."""

    row = models.ForeignKey(WorksheetRow, on_delete=models.CASCADE, related_name="verdicts")
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="verdicts"
    )
    verdict = models.CharField(max_length=16, choices=VerdictChoice.choices)
    note = models.TextField(blank=True)
    suggestion_offered = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    version = models.PositiveIntegerField(default=1)

    class Meta:
        ordering = ("row", "reviewer__username")
        constraints = (
            models.UniqueConstraint(fields=("row", "reviewer"), name="verdict_one_per_reviewer"),
            models.CheckConstraint(
                condition=among("verdict", VerdictChoice), name="verdict_choice"
            ),
            models.CheckConstraint(condition=Q(version__gte=1), name="verdict_version"),
        )

    def __str__(self) -> str:
        return f"{self.reviewer}: {self.verdict} on {self.row}"


class Adjudication(models.Model):
    """The final verdict on a row the reviewers disagreed on, and why."""

    row = models.OneToOneField(WorksheetRow, on_delete=models.CASCADE, related_name="adjudication")
    adjudicator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="adjudications"
    )
    verdict = models.CharField(max_length=16, choices=VerdictChoice.choices)
    reason = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = (
            models.CheckConstraint(condition=among("verdict", VerdictChoice), name="adj_choice"),
            models.CheckConstraint(condition=~Q(reason=""), name="adjudication_has_reason"),
        )

    def __str__(self) -> str:
        return f"{self.adjudicator}: {self.verdict} on {self.row}"

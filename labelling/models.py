"""Everything the labelling app stores.

Two halves. The *evidence*: a ``Corpus`` of ``Transcript`` rows as the compiler read
them, and per ``CompileRun`` (one corpus under one schema digest and one compiler
version) the ``Extraction`` rows — every value every slot held, with the turn that set
it. The *judgements*: a ``Worksheet`` samples extractions into ``WorksheetRow`` rows,
reviewers record a ``Verdict`` each, an ``Adjudication`` settles a disagreement, and a
``Label`` is the merged, final judgement of one extraction that export and import
move in and out of label files.

A ``Label`` is keyed by what was extracted (transcript, schema, slot, turn, value), not
by the run that extracted it, so a label outlives a compiler change and the precision
report can say which labels no longer reproduce instead of dropping them.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q


class CorpusFormat(models.TextChoices):
    """The shape a corpus file was read from (``compiler.formats.Format``)."""

    MESSAGES = "messages", "OpenAI messages"
    JSONL = "jsonl", "JSONL"
    TAU_BENCH = "tau-bench", "tau-bench records"
    SWE_AGENT = "swe-agent", "SWE-agent .traj"
    DISPLAY = "display", "few-shot display text"
    TEXT = "text", "role: text lines"
    MIXED = "mixed", "several formats"


class Role(models.TextChoices):
    SYSTEM = "system"
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"


class TurnKind(models.TextChoices):
    """What the compiler's classifier called a turn (``compiler.classify.Kind``)."""

    SPEECH = "speech"
    MACHINE = "machine_output", "machine output"
    MENU = "option_menu", "option menu"
    TOOL_CALL = "tool_call", "tool call"


class Provenance(models.TextChoices):
    DECLARED = "declared"
    ACTED = "acted"
    INFERRED = "inferred"


class VerdictChoice(models.TextChoices):
    CORRECT = "correct"
    INCORRECT = "incorrect"
    UNCLEAR = "unclear"
    SAFE_TO_DROP = "safe_to_drop", "safe to drop"
    STILL_NEEDED = "still_needed", "still needed"


class WorksheetKind(models.TextChoices):
    """What a worksheet's rows are: extracted values, or turns the compiler retired."""

    EXTRACTION = "extraction", "extracted values"
    RETIREMENT = "retirement", "retired turns"

    @property
    def verdicts(self) -> tuple[VerdictChoice, ...]:
        """The verdicts a row of this kind takes; the first is the one precision counts.

        Example:
            >>> [str(v) for v in WorksheetKind.RETIREMENT.verdicts]
            ['safe_to_drop', 'still_needed']
        """
        if self is WorksheetKind.RETIREMENT:
            return (VerdictChoice.SAFE_TO_DROP, VerdictChoice.STILL_NEEDED)
        return (VerdictChoice.CORRECT, VerdictChoice.INCORRECT, VerdictChoice.UNCLEAR)


class MemberRole(models.TextChoices):
    REVIEWER = "reviewer"
    ADJUDICATOR = "adjudicator"


def _in(field: str, choices: type[models.TextChoices]) -> Q:
    return Q(**{f"{field}__in": choices.values})


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
            models.CheckConstraint(condition=_in("format", CorpusFormat), name="corpus_format"),
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
            models.CheckConstraint(condition=_in("format", CorpusFormat), name="transcript_format"),
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
            models.CheckConstraint(condition=_in("provenance", Provenance), name="extr_prov"),
            models.CheckConstraint(condition=_in("role", Role), name="extraction_role"),
            models.CheckConstraint(condition=_in("kind", TurnKind), name="extraction_kind"),
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
            models.CheckConstraint(condition=_in("role", Role), name="retirement_role"),
        )

    def __str__(self) -> str:
        return f"turn {self.turn} retired ({self.reason})"

    @property
    def superseding_turns(self) -> list[int]:
        return sorted(set(self.superseded_by.values()))


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
            models.CheckConstraint(condition=_in("kind", WorksheetKind), name="worksheet_kind"),
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
            models.CheckConstraint(condition=_in("role", MemberRole), name="membership_role"),
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
            models.CheckConstraint(condition=_in("verdict", VerdictChoice), name="verdict_choice"),
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
            models.CheckConstraint(condition=_in("verdict", VerdictChoice), name="adj_choice"),
            models.CheckConstraint(condition=~Q(reason=""), name="adjudication_has_reason"),
        )

    def __str__(self) -> str:
        return f"{self.adjudicator}: {self.verdict} on {self.row}"


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
            models.CheckConstraint(condition=_in("verdict", VerdictChoice), name="label_verdict"),
            models.CheckConstraint(condition=_in("provenance", Provenance), name="label_prov"),
            models.CheckConstraint(condition=_in("role", Role), name="label_role"),
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
            models.CheckConstraint(condition=_in("role", Role), name="retirement_label_role"),
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
                condition=_in("old_verdict", VerdictChoice) & _in("new_verdict", VerdictChoice),
                name="correction_verdicts",
            ),
            models.CheckConstraint(
                condition=~Q(old_verdict=models.F("new_verdict")), name="correction_changes"
            ),
            models.CheckConstraint(condition=~Q(reason=""), name="correction_has_reason"),
        )

    def __str__(self) -> str:
        return f"{self.label}: {self.old_verdict} → {self.new_verdict} (v{self.version})"

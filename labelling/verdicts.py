"""Saving verdicts without losing one, and reading where each row stands.

A verdict is saved with the version the reviewer's page showed (0: none yet). The
save is one conditional statement — an INSERT that the one-verdict-per-reviewer
constraint refuses, or an UPDATE ``… WHERE version = expected`` — so two tabs
saving the same verdict cannot both win: the second gets ``VerdictConflict`` with
what is stored now, never a silent overwrite. The transaction asks PostgreSQL for a
synchronous commit, so a verdict acknowledged to the browser is in the WAL even if
the server is configured to trade durability for speed.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from enum import StrEnum

from django.db import IntegrityError, connection, transaction
from django.db.models import F
from django.utils import timezone

from labelling.models import Adjudication, Verdict, Worksheet, WorksheetRow


class VerdictConflict(Exception):
    """Someone (another tab) saved this verdict since the page was loaded."""

    def __init__(self, current: Verdict | None):
        self.current = current
        if current is None:
            super().__init__("this verdict changed since the page was loaded")
        else:
            super().__init__(
                f"already saved elsewhere as {current.verdict} (version {current.version}); "
                "yours was not saved — reload to see it, then save again"
            )


class NotDisputed(Exception):
    """Adjudication is for rows the reviewers disagree on."""


class RowStatus(StrEnum):
    UNLABELLED = "unlabelled"  # fewer verdicts than the worksheet asks for
    AGREED = "agreed"
    DISPUTED = "disputed"  # reviewers differ and nobody has adjudicated
    RESOLVED = "resolved"  # adjudicated


def durable_commit() -> None:
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL synchronous_commit TO on")


def _check(verdict: str, worksheet: Worksheet) -> None:
    """A verdict must be one the worksheet's kind takes (``WorksheetKind.verdicts``)."""
    allowed = [str(v) for v in worksheet.verdicts]
    if verdict not in allowed:
        raise ValueError(f"{verdict!r} is not one of {', '.join(allowed)}")


def record_verdict(
    row: WorksheetRow, reviewer, verdict: str, note: str = "", *, expected_version: int = 0
) -> Verdict:
    """Save ``reviewer``'s own verdict on ``row``; ``VerdictConflict`` if stale."""
    _check(verdict, row.worksheet)
    fields = {"verdict": verdict, "note": note.strip(), "suggestion_offered": bool(row.suggestion)}
    with transaction.atomic():
        durable_commit()
        if expected_version == 0:
            try:
                with transaction.atomic():
                    return Verdict.objects.create(row=row, reviewer=reviewer, **fields)
            except IntegrityError:
                raise VerdictConflict(_current(row, reviewer)) from None
        updated = Verdict.objects.filter(
            row=row, reviewer=reviewer, version=expected_version
        ).update(**fields, version=F("version") + 1, updated_at=timezone.now())
        if not updated:
            raise VerdictConflict(_current(row, reviewer))
        return Verdict.objects.get(row=row, reviewer=reviewer)


def _current(row, reviewer) -> Verdict | None:
    return Verdict.objects.filter(row=row, reviewer=reviewer).first()


def adjudicate(row: WorksheetRow, adjudicator, verdict: str, reason: str) -> Adjudication:
    """Record the final verdict on a disputed row (or change it), with its reason."""
    _check(verdict, row.worksheet)
    reason = reason.strip()
    if not reason:
        raise ValueError("an adjudication needs a reason")
    with transaction.atomic():
        durable_commit()
        WorksheetRow.objects.select_for_update().get(pk=row.pk)
        state = row_states(row.worksheet, rows=[row])[0]
        if state.status not in (RowStatus.DISPUTED, RowStatus.RESOLVED):
            raise NotDisputed(f"row {row.position} is {state.status}, not disputed")
        adjudication, _ = Adjudication.objects.update_or_create(
            row=row,
            defaults={"adjudicator": adjudicator, "verdict": verdict, "reason": reason},
        )
    return adjudication


@dataclass
class RowState:
    row: WorksheetRow
    verdicts: list[Verdict] = field(default_factory=list)
    adjudication: Adjudication | None = None
    required: int = 1

    @property
    def status(self) -> RowStatus:
        if self.adjudication is not None:
            return RowStatus.RESOLVED
        if len({v.verdict for v in self.verdicts}) > 1:
            return RowStatus.DISPUTED
        if len(self.verdicts) < self.required:
            return RowStatus.UNLABELLED
        return RowStatus.AGREED

    @property
    def final(self) -> str | None:
        """The verdict the row exports with, or None while it has none."""
        if self.adjudication is not None:
            return self.adjudication.verdict
        if self.status == RowStatus.AGREED:
            return self.verdicts[0].verdict
        return None


def row_states(worksheet: Worksheet, rows=None) -> list[RowState]:
    """Every row of ``worksheet`` (or just ``rows``) with its verdicts, in order."""
    if rows is None:
        rows = worksheet.rows.select_related(
            "extraction__transcript", "retirement__transcript"
        ).order_by("position")
    rows = list(rows)
    ids = [row.pk for row in rows]
    verdicts = defaultdict(list)
    for verdict in Verdict.objects.filter(row_id__in=ids).select_related("reviewer"):
        verdicts[verdict.row_id].append(verdict)
    adjudications = {
        a.row_id: a
        for a in Adjudication.objects.filter(row_id__in=ids).select_related("adjudicator")
    }
    return [
        RowState(
            row=row,
            verdicts=sorted(verdicts[row.pk], key=lambda v: v.reviewer.get_username()),
            adjudication=adjudications.get(row.pk),
            required=worksheet.reviews_per_row,
        )
        for row in rows
    ]


@dataclass(frozen=True)
class Progress:
    total: int
    done: int  # rows this reviewer has judged

    @property
    def percent(self) -> int:
        return round(100 * self.done / self.total) if self.total else 100


def progress_of(worksheet: Worksheet, reviewer) -> Progress:
    done = Verdict.objects.filter(row__worksheet=worksheet, reviewer=reviewer).count()
    return Progress(worksheet.rows.count(), done)

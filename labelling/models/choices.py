"""The choices the labelling models store, each a ``TextChoices``, and ``among``, the
check constraint that keeps a column to its choices in the database too.

``WorksheetKind`` knows the verdicts a row of its kind takes; the first is the one the
precision report counts.
"""

from __future__ import annotations

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


def among(field: str, choices: type[models.TextChoices]) -> Q:
    return Q(**{f"{field}__in": choices.values})

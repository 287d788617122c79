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

One module per idea: ``choices`` (the ``TextChoices`` the columns hold), ``corpora``
(the evidence), ``worksheets`` (judging in progress) and ``labels`` (the final
judgements and their corrections). Every model and choice is re-exported here, so
``from labelling.models import Label`` works and Django finds every model.
"""

from labelling.models.choices import (
    CorpusFormat,
    MemberRole,
    Provenance,
    Role,
    TurnKind,
    VerdictChoice,
    WorksheetKind,
)
from labelling.models.corpora import CompileRun, Corpus, Extraction, Retirement, Transcript
from labelling.models.labels import Label, LabelCorrection, RetirementLabel
from labelling.models.worksheets import Adjudication, Membership, Verdict, Worksheet, WorksheetRow

__all__ = [
    "Adjudication",
    "CompileRun",
    "Corpus",
    "CorpusFormat",
    "Extraction",
    "Label",
    "LabelCorrection",
    "MemberRole",
    "Membership",
    "Provenance",
    "Retirement",
    "RetirementLabel",
    "Role",
    "Transcript",
    "TurnKind",
    "Verdict",
    "VerdictChoice",
    "Worksheet",
    "WorksheetKind",
    "WorksheetRow",
]

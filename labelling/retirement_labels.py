"""Retirement label files: the final judgements of retired turns, out and back in.

The same file as an extraction label file (``labelling.labels``: format, fixed key order,
sorted rows, all-or-nothing import, refusal while a row is open) with ``"kind":
"retirement"``, the rule the reviewers applied and the corpus's provenance in its header,
and one row per retired turn: the turn, the slots and the turns that superseded it, the
compiler's reason, the verdict (``safe_to_drop`` or ``still_needed``) and the quote the
reviewer read. A row is keyed by transcript and turn, so it survives a recompile.
"""

from __future__ import annotations

import json
from pathlib import Path

from django.conf import settings
from django.db import IntegrityError, transaction

from compiler import canonical_dumps
from labelling.label_files import (
    FORMAT,
    ImportSummary,
    LabelImportRefused,
    finished_states,
    judged,
    parse,
    quote_problem,
    text_problem,
)
from labelling.models import Corpus, RetirementLabel, Role, Worksheet, WorksheetKind
from labelling.precision import figure_data, retirement_figures
from labelling.verdicts import RowState, durable_commit

# where the exported retirement label files are kept in the repository
LABEL_FILES = settings.BASE_DIR / "tests" / "bench" / "labels" / "retirement"

ROW_FIELDS = (
    "transcript",
    "family",
    "turn",
    "role",
    "superseded_by",
    "reason",
    "verdict",
    "note",
    "reviewers",
    "adjudicated_by",
    "schema_digest",
    "compiler_version",
    "quote",
)
_STORED = ("turn", "role", "superseded_by", "reason", "verdict", "note", "reviewers")
_STORED += ("adjudicated_by", "schema_digest", "compiler_version", "quote")
VERDICTS = [str(v) for v in WorksheetKind.RETIREMENT.verdicts]
POSITIVE = VERDICTS[0]  # what retirement precision counts: safe to drop


def _document(corpus: Corpus, schema_name: str, rule: str, rows: list[dict]) -> dict:
    rows = sorted(rows, key=lambda r: (r["transcript"], r["turn"]))
    rows = [{**row, "quote": json.loads(canonical_dumps(row["quote"]))} for row in rows]
    return {
        "format": FORMAT,
        "kind": str(WorksheetKind.RETIREMENT),
        "corpus": corpus.name,
        "corpus_digest": corpus.digest,
        "corpus_source": corpus.source,
        "provenance": corpus.provenance,
        "schema": schema_name,
        "rule": rule,
        "labels": rows,
    }


def _row_from_state(state: RowState, worksheet: Worksheet) -> dict:
    retirement = state.row.retirement
    values = {
        "transcript": retirement.transcript.external_id,
        "family": retirement.transcript.family,
        "turn": retirement.turn,
        "role": retirement.role,
        "superseded_by": retirement.superseded_by,
        "reason": retirement.reason,
        "quote": retirement.quote,
        **judged(state, worksheet),
    }
    return {key: values[key] for key in ROW_FIELDS}


def export_worksheet(worksheet: Worksheet) -> dict:
    """The retirement label file of a finished retirement worksheet."""
    rows = [_row_from_state(state, worksheet) for state in finished_states(worksheet)]
    return _document(worksheet.run.corpus, worksheet.schema_name, worksheet.rule, rows)


def _row_from_label(label: RetirementLabel) -> dict:
    values = {
        "transcript": label.transcript.external_id,
        "family": label.transcript.family,
        **{key: getattr(label, key) for key in _STORED},
    }
    return {key: values[key] for key in ROW_FIELDS}


def export_labels(corpus: Corpus, schema_name: str) -> dict:
    """The retirement label file of every stored retirement label of ``corpus``; its rule
    is the rule of the worksheets they were judged on."""
    labels = RetirementLabel.objects.filter(
        transcript__corpus=corpus, schema_name=schema_name
    ).select_related("transcript", "worksheet")
    rules = sorted({x.worksheet.rule for x in labels if x.worksheet is not None})
    return _document(corpus, schema_name, " | ".join(rules), [_row_from_label(x) for x in labels])


def _row_problems(index: int, row, transcripts: dict) -> list[str]:
    where = f"labels[{index}]"
    if not isinstance(row, dict):
        return [f"{where}: not an object"]
    if missing := [key for key in ROW_FIELDS if key not in row]:
        return [f"{where}: missing {', '.join(missing)}"]
    by = row["superseded_by"]
    reviewers = row["reviewers"]
    checks = [
        (row["verdict"] in VERDICTS, f"verdict {row['verdict']!r} is not one of {VERDICTS}"),
        (row["role"] in Role.values, f"unknown role {row['role']!r}"),
        (type(row["turn"]) is int and 0 <= row["turn"] < 2**31, "turn must be a whole number"),
        (
            isinstance(by, dict) and bool(by) and all(type(t) is int for t in by.values()),
            "superseded_by must map each slot to a turn",
        ),
        (
            isinstance(reviewers, list)
            and bool(reviewers)
            and all(isinstance(r, str) and r for r in reviewers),
            "reviewers must be a list of names",
        ),
        (
            isinstance(row["transcript"], str) and row["transcript"] in transcripts,
            f"transcript {row['transcript']!r} is not in the corpus",
        ),
    ]
    problems = [message for ok, message in checks if not ok]
    for name in ("reason", "note", "adjudicated_by", "schema_digest", "compiler_version"):
        if problem := text_problem(name, row[name], RetirementLabel):
            problems.append(problem)
    if quote := quote_problem(row["quote"]):
        problems.append(quote)
    return [f"{where}: {message}" for message in problems]


def import_labels(document: dict, corpus: Corpus, schema_name: str, worksheet) -> ImportSummary:
    """Store every row of a retirement label file as a ``RetirementLabel``; all or none."""
    transcripts = {t.external_id: t for t in corpus.transcripts.all()}
    problems, seen = [], set()
    for index, row in enumerate(document["labels"]):
        found = _row_problems(index, row, transcripts)
        problems += found
        if not found and (row["transcript"], row["turn"]) in seen:
            problems.append(f"labels[{index}]: the same retired turn is labelled twice")
        if not found:
            seen.add((row["transcript"], row["turn"]))
    if problems:
        raise LabelImportRefused(problems)
    try:
        return _store(document, transcripts, schema_name, worksheet)
    except IntegrityError:  # another import stored one of these rows after it was looked up
        raise LabelImportRefused(
            ["another import of these labels was stored at the same time; import again"]
        ) from None


def _store(document: dict, transcripts: dict, schema_name: str, worksheet) -> ImportSummary:
    problems, created, unchanged = [], 0, 0
    with transaction.atomic():
        durable_commit()
        for index, row in enumerate(document["labels"]):
            transcript = transcripts[row["transcript"]]
            stored = RetirementLabel.objects.filter(
                transcript=transcript, schema_name=schema_name, turn=row["turn"]
            ).first()
            if stored is None:
                RetirementLabel.objects.create(
                    transcript=transcript,
                    schema_name=schema_name,
                    worksheet=worksheet,
                    **{key: row[key] for key in _STORED},
                )
                created += 1
            elif (known := _row_from_label(stored)) == {key: row[key] for key in ROW_FIELDS}:
                unchanged += 1
            else:
                differ = ", ".join(key for key in ROW_FIELDS if known[key] != row[key])
                problems.append(
                    f"labels[{index}] ({row['transcript']} turn {row['turn']}): already "
                    f"labelled {stored.verdict}; this file differs in {differ}"
                )
        if problems:
            raise LabelImportRefused(problems)
    return ImportSummary(created, unchanged)


def read_files(directory: Path = LABEL_FILES) -> list[dict]:
    """Every retirement label file in ``directory``, in name order (none: empty)."""
    documents = [parse(path.read_bytes()) for path in sorted(directory.glob("*.json"))]
    return [d for d in documents if d.get("kind") == WorksheetKind.RETIREMENT]


def retirement_precision(directory: Path = LABEL_FILES) -> dict:
    """Retirement precision (safe to drop / judged) over the label files in ``directory``:
    over every file, then per corpus, each with its N and Wilson 95% interval over units."""
    documents = read_files(directory)
    return {
        "source": str(directory),
        "files": len(documents),
        "figures": [figure_data(f) for f in retirement_figures(documents)] if documents else [],
    }

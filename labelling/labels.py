"""Label files: the merged, final judgements, out of and back into the database.

A label file is JSON with a fixed key order and rows sorted by transcript, slot, turn
and value, so the same labels always give the same bytes. It is written from a
finished worksheet (``export_worksheet``) or from the stored labels of a corpus and
schema (``export_labels``); ``import_labels`` stores a file's rows as ``Label`` rows,
all or nothing, so importing an exported file and exporting again gives an equal file.

Export refuses while any row is unlabelled or disputed, naming each. Import refuses a
row without a quote, with an unknown verdict, for a transcript the corpus does not
hold, or that contradicts a label already stored — each named, nothing stored.
"""

from __future__ import annotations

import json

from django.db import IntegrityError, transaction

from compiler import canonical_dumps, list_schemas
from labelling import retirement_labels
from labelling.label_files import (
    FORMAT,
    ExportRefused,
    ImportSummary,
    LabelImportRefused,
    blockers,
    describe,
    dumps,
    finished_states,
    judged,
    parse,
    quote_problem,
    text_problem,
)
from labelling.models import (
    Corpus,
    Extraction,
    Label,
    Provenance,
    Role,
    Worksheet,
    WorksheetKind,
)
from labelling.verdicts import RowState, durable_commit

__all__ = [  # what callers import from here, the shared pieces of ``label_files`` included
    "FORMAT",
    "ExportRefused",
    "ImportSummary",
    "LabelImportRefused",
    "blockers",
    "describe",
    "dumps",
    "export_labels",
    "export_worksheet",
    "filename",
    "import_labels",
    "merge_worksheet",
    "parse",
]
EXTRACTION_VERDICTS = [str(v) for v in WorksheetKind.EXTRACTION.verdicts]
ROW_FIELDS = (
    "transcript",
    "family",
    "slot",
    "turn",
    "value",
    "provenance",
    "role",
    "verdict",
    "note",
    "reviewers",
    "adjudicated_by",
    "suggestion_offered",
    "schema_digest",
    "compiler_version",
    "quote",
)
_STORED = ("provenance", "role", "verdict", "note", "reviewers", "adjudicated_by", "quote")


def filename(document: dict) -> str:
    return f"labels-{document['corpus']}-{document['schema']}.json".replace("/", "_")


def _document(corpus: Corpus, schema_name: str, rows: list[dict]) -> dict:
    rows = sorted(rows, key=lambda r: (r["transcript"], r["slot"], r["turn"], r["value"]))
    # a quote's keys in one order on every backend (PostgreSQL's jsonb keeps its own)
    rows = [{**row, "quote": json.loads(canonical_dumps(row["quote"]))} for row in rows]
    return {
        "format": FORMAT,
        "corpus": corpus.name,
        "corpus_digest": corpus.digest,
        "schema": schema_name,
        "labels": rows,
    }


def _row_from_state(state: RowState, worksheet: Worksheet) -> dict:
    extraction = state.row.extraction
    values = {
        "transcript": extraction.transcript.external_id,
        "family": extraction.transcript.family,
        "slot": extraction.slot,
        "turn": extraction.turn,
        "value": extraction.value,
        "provenance": extraction.provenance,
        "role": extraction.role,
        "suggestion_offered": state.row.suggestion is not None
        or any(v.suggestion_offered for v in state.verdicts),
        "quote": extraction.quote,
        **judged(state, worksheet),
    }
    return {key: values[key] for key in ROW_FIELDS}


def export_worksheet(worksheet: Worksheet) -> dict:
    """The label file of a finished worksheet; ``ExportRefused`` naming what is open.
    A retirement worksheet gives a retirement label file (``retirement_labels``)."""
    if worksheet.kind == WorksheetKind.RETIREMENT:
        return retirement_labels.export_worksheet(worksheet)
    states = finished_states(worksheet)
    rows = [_row_from_state(state, worksheet) for state in states]
    return _document(worksheet.run.corpus, worksheet.schema_name, rows)


def _row_from_label(label: Label) -> dict:
    values = {
        "transcript": label.transcript.external_id,
        "family": label.transcript.family,
        **{key: getattr(label, key) for key in ("slot", "turn", "value", *_STORED)},
        "suggestion_offered": label.suggestion_offered,
        "schema_digest": label.schema_digest,
        "compiler_version": label.compiler_version,
    }
    return {key: values[key] for key in ROW_FIELDS}


def export_labels(corpus: Corpus, schema_name: str, kind: str = WorksheetKind.EXTRACTION) -> dict:
    """The label file of every stored label of ``kind`` of ``corpus`` under ``schema_name``."""
    if kind == WorksheetKind.RETIREMENT:
        return retirement_labels.export_labels(corpus, schema_name)
    labels = Label.objects.filter(transcript__corpus=corpus, schema_name=schema_name)
    return _document(
        corpus, schema_name, [_row_from_label(x) for x in labels.select_related("transcript")]
    )


_TURN_LIMIT = 2**31  # a PositiveIntegerField on PostgreSQL holds less
_TEXT_FIELDS = ("slot", "value", "note", "adjudicated_by", "schema_digest", "compiler_version")


def _row_problems(index: int, row, transcripts: dict) -> list[str]:
    """What keeps a row from being stored exactly as given: each field's type is checked,
    not coerced, so importing the file again finds it unchanged."""
    where = f"labels[{index}]"
    if not isinstance(row, dict):
        return [f"{where}: not an object"]
    missing = [key for key in ROW_FIELDS if key not in row]
    if missing:
        return [f"{where}: missing {', '.join(missing)}"]
    reviewers = row["reviewers"]
    named = isinstance(reviewers, list) and bool(reviewers)
    checks = [
        (
            row["verdict"] in EXTRACTION_VERDICTS,
            f"verdict {row['verdict']!r} is not one of " + ", ".join(EXTRACTION_VERDICTS),
        ),
        (row["provenance"] in Provenance.values, f"unknown provenance {row['provenance']!r}"),
        (row["role"] in Role.values, f"unknown role {row['role']!r}"),
        (
            type(row["turn"]) is int and 0 <= row["turn"] < _TURN_LIMIT,
            f"turn must be a whole number from 0 to {_TURN_LIMIT - 1}",
        ),
        (
            named and all(isinstance(r, str) and r and "\x00" not in r for r in reviewers),
            "reviewers must be a list of names",
        ),
        (type(row["suggestion_offered"]) is bool, "suggestion_offered must be true or false"),
        (
            isinstance(row["transcript"], str) and row["transcript"] in transcripts,
            f"transcript {row['transcript']!r} is not in the corpus",
        ),
    ]
    problems = [message for ok, message in checks if not ok]
    held = transcripts.get(row["transcript"]) if isinstance(row["transcript"], str) else None
    if held is not None and row["family"] != held.family:
        problems.append(f"family {row['family']!r} is not the corpus's {held.family!r}")
    problems += [p for name in _TEXT_FIELDS if (p := text_problem(name, row[name]))]
    if quote := quote_problem(row["quote"]):
        problems.append(quote)
    return [f"{where}: {message}" for message in problems]


def _label(row: dict, transcript, schema_name: str, worksheet) -> Label:
    extraction = Extraction.objects.filter(
        run__schema_name=schema_name,
        run__schema_digest=row["schema_digest"],
        transcript=transcript,
        slot=row["slot"],
        turn=row["turn"],
        value=row["value"],
    ).first()
    return Label(
        transcript=transcript,
        schema_name=schema_name,
        schema_digest=row["schema_digest"],
        compiler_version=row["compiler_version"],
        slot=row["slot"],
        value=row["value"],
        turn=row["turn"],
        suggestion_offered=row["suggestion_offered"],
        extraction=extraction,
        worksheet=worksheet,
        **{key: row[key] for key in _STORED},
    )


def import_labels(document: dict, *, worksheet: Worksheet | None = None) -> ImportSummary:
    """Store every row of a label file as a ``Label`` (a retirement label file's as a
    ``RetirementLabel``); all of them or none."""
    corpus, schema_name = label_set(document)
    if document.get("kind") == WorksheetKind.RETIREMENT:
        return retirement_labels.import_labels(document, corpus, schema_name, worksheet)
    transcripts = {t.external_id: t for t in corpus.transcripts.all()}
    return _import_extraction_labels(document, schema_name, transcripts, worksheet)


def label_set(document: dict) -> tuple[Corpus, str]:
    """The corpus and schema a label file names, or ``LabelImportRefused`` saying why not."""
    corpus = Corpus.objects.filter(name=document.get("corpus")).first()
    if corpus is None:
        raise LabelImportRefused([f"no corpus called {document.get('corpus')!r}: import it first"])
    if document.get("corpus_digest") not in (None, corpus.digest):
        raise LabelImportRefused(
            [f"corpus {corpus.name!r} here is not the file it was labelled on"]
        )
    schema_name = document.get("schema")
    if not isinstance(schema_name, str) or not schema_name:
        raise LabelImportRefused(['"schema" must name the schema the labels were made under'])
    if problem := text_problem("schema_name", schema_name):
        raise LabelImportRefused([f'"schema": {problem}'])
    if schema_name not in list_schemas():  # the pages that show labels offer only these
        shipped = ", ".join(list_schemas())
        raise LabelImportRefused([f'"schema": {schema_name!r} is not one of {shipped}'])
    return corpus, schema_name


def _import_extraction_labels(document, schema_name, transcripts, worksheet) -> ImportSummary:
    problems, seen = [], set()
    for index, row in enumerate(document["labels"]):
        found = _row_problems(index, row, transcripts)
        problems += found
        if not found:
            key = (row["transcript"], row["slot"], row["turn"], row["value"])
            if key in seen:
                problems.append(f"labels[{index}]: the same extraction is labelled twice")
            seen.add(key)
    if problems:
        raise LabelImportRefused(problems)
    try:
        return _store(document, transcripts, schema_name, worksheet)
    except IntegrityError:  # another import stored one of these rows after it was looked up
        raise LabelImportRefused(
            [
                "another import of these labels was stored at the same time; import again to see"
                " whether they are now unchanged"
            ]
        ) from None


def _store(document: dict, transcripts: dict, schema_name: str, worksheet) -> ImportSummary:
    problems, created, unchanged = [], 0, 0
    with transaction.atomic():
        durable_commit()  # the final judgements: as durable as the verdicts they merge
        for index, row in enumerate(document["labels"]):
            transcript = transcripts[row["transcript"]]
            stored = Label.objects.filter(
                transcript=transcript,
                schema_name=schema_name,
                slot=row["slot"],
                turn=row["turn"],
                value=row["value"],
            ).first()
            if stored is None:
                _label(row, transcript, schema_name, worksheet).save()
                created += 1
            elif (known := _row_from_label(stored)) == {key: row[key] for key in ROW_FIELDS}:
                unchanged += 1
            else:
                differ = ", ".join(key for key in ROW_FIELDS if known[key] != row[key])
                problems.append(
                    f"labels[{index}] ({row['slot']} = {row['value']!r}, {row['transcript']} "
                    f"turn {row['turn']}): already labelled {stored.verdict}; this file "
                    f"differs in {differ}"
                )
        if problems:  # raised inside the transaction: nothing of this file is kept
            raise LabelImportRefused(problems)
    return ImportSummary(created, unchanged)


def merge_worksheet(worksheet: Worksheet) -> ImportSummary:
    """Fold a finished worksheet's final verdicts into the stored labels."""
    return import_labels(export_worksheet(worksheet), worksheet=worksheet)

"""What every label file shares, whatever it judges: its format, its bytes, the refusals
of export and import, and the checks on a row's text and quote. ``labelling.labels``
(extractions) and ``labelling.retirement_labels`` (retired turns) build on it."""

from __future__ import annotations

import json
from dataclasses import dataclass

from labelling.models import Label, Worksheet
from labelling.verdicts import RowState, RowStatus, row_states

FORMAT = "contextgc-labels/1"


class ExportRefused(Exception):
    def __init__(self, reasons: list[str]):
        super().__init__("; ".join(reasons))
        self.reasons = reasons


class LabelImportRefused(Exception):
    def __init__(self, reasons: list[str]):
        super().__init__("; ".join(reasons))
        self.reasons = reasons


@dataclass(frozen=True)
class ImportSummary:
    created: int
    unchanged: int


def dumps(document: dict) -> str:
    """The file's bytes as text: stable key order, two-space indent, final newline."""
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def note_of(state: RowState) -> str:
    parts = [f"{v.reviewer.get_username()}: {v.note}" for v in state.verdicts if v.note]
    if state.adjudication is not None:
        name = state.adjudication.adjudicator.get_username()
        parts.append(f"adjudicated by {name}: {state.adjudication.reason}")
    return " | ".join(parts)


def judged(state: RowState, worksheet) -> dict:
    """What every label row says of how it was judged, whatever its kind: the verdict,
    the notes, who judged and adjudicated it, and the schema and compiler it was judged
    under."""
    return {
        "verdict": state.final,
        "note": note_of(state),
        "reviewers": sorted(v.reviewer.get_username() for v in state.verdicts),
        "adjudicated_by": (
            state.adjudication.adjudicator.get_username() if state.adjudication else ""
        ),
        "schema_digest": worksheet.schema_digest,
        "compiler_version": worksheet.run.compiler_version,
    }


def describe(state: RowState) -> str:
    if state.row.retirement_id is not None:
        r = state.row.retirement
        return f"row {state.row.position} (retired turn {r.turn} of {r.transcript.external_id})"
    e = state.row.extraction
    return (
        f"row {state.row.position} ({e.slot} = {e.value!r}, "
        f"{e.transcript.external_id} turn {e.turn})"
    )


def blockers(states: list[RowState]) -> list[str]:
    """Why a worksheet cannot be exported yet: each unlabelled or disputed row."""
    reasons = []
    for state in states:
        if state.status == RowStatus.UNLABELLED:
            have, need = len(state.verdicts), state.required
            reasons.append(f"{describe(state)}: unlabelled — {have} of {need} verdicts")
        elif state.status == RowStatus.DISPUTED:
            said = ", ".join(f"{v.reviewer.get_username()} {v.verdict}" for v in state.verdicts)
            reasons.append(f"{describe(state)}: reviewers disagree ({said}), not adjudicated")
    return reasons


def finished_states(worksheet: Worksheet) -> list[RowState]:
    """Every row's state, or ``ExportRefused`` naming each row still open."""
    states = row_states(worksheet)
    reasons = blockers(states)
    if not states:
        reasons = ["the worksheet has no rows"]
    if reasons:
        raise ExportRefused(reasons)
    return states


def parse(text: str | bytes) -> dict:
    """A label file's document, or ``LabelImportRefused`` saying where it is broken."""
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        raise LabelImportRefused(
            [f"line {error.lineno}, column {error.colno}: not valid JSON ({error.msg})"]
        ) from None
    except UnicodeDecodeError as error:
        raise LabelImportRefused([f"byte {error.start}: not UTF-8 text"]) from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise LabelImportRefused([f'not a label file: "format" must be "{FORMAT}"'])
    if not isinstance(document.get("labels"), list):
        raise LabelImportRefused(['"labels" must be a list of rows'])
    return document


def text_problem(name: str, text, model=Label) -> str | None:
    """Why ``text`` cannot be stored as ``model``'s field ``name`` on every backend, or None."""
    if not isinstance(text, str):
        return f"{name} must be text, not {type(text).__name__}"
    limit = getattr(model._meta.get_field(name), "max_length", None)
    if limit is not None and len(text) > limit:
        return f"{name} is {len(text)} characters; at most {limit} are stored"
    if "\x00" in text:
        return f"{name} holds a NUL character, which PostgreSQL cannot store"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return f"{name} holds a lone surrogate, which is not text"
    return None


def quote_problem(quote) -> str | None:
    if not isinstance(quote, list) or not quote:
        return "no quote: a label must carry the turn it judged"
    try:  # stored as JSON on every backend: NUL and lone surrogates are refused by some
        encoded = json.dumps(quote, ensure_ascii=False, allow_nan=False)
        encoded.encode("utf-8")
    except (ValueError, UnicodeEncodeError):
        return "quote holds a value JSON or UTF-8 cannot carry"
    if "\\u0000" in encoded:
        return "quote holds a NUL character, which PostgreSQL cannot store"
    return None

"""Corpora in, extractions out.

``import_corpus`` reads a file with the compiler's own reader (every format it reads),
refuses a bad file with the reader's line-numbered reasons, and stores its transcripts
in one transaction — a refused or failed import leaves nothing behind. The SHA-256 of
the bytes identifies a file, so importing it again adds nothing.

``compile_corpus`` compiles every transcript of a corpus under a schema with the
current compiler and stores each register history entry as an ``Extraction``; a run
is identified by corpus, schema name, schema digest and compiler version, so asking
again for the same run reuses it.

Example:
    >>> family_of("AnalogJ__lexicon-336#3"), family_of("task12-trial3"), family_of("line4")
    ('AnalogJ__lexicon-336', 'task12', 'line4')
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from django.db import IntegrityError, transaction

import compiler
from compiler import (
    Kind,
    Message,
    TranscriptError,
    formats_many,
    load_schema,
    message_from_dict,
    message_to_dict,
    run,
)
from labelling.models import CompileRun, Corpus, CorpusFormat, Extraction, Transcript

# A reader warning that means part of the file was thrown away, not merely tidied:
# a file like that is refused rather than half-imported.
_LOSSY = ("not valid JSON",)
_TAU_ID = re.compile(r"^(task[^-]+)-trial\d+$")
QUOTE_CHARS = 700  # of the registering turn, centred on the value
NEIGHBOUR_CHARS = 300  # of each neighbouring turn, the end nearest the registering turn


class ImportRefused(Exception):
    """A corpus file that will not be imported, with every reason (line-numbered)."""

    def __init__(self, reasons: list[str]):
        super().__init__("; ".join(reasons))
        self.reasons = reasons


@dataclass(frozen=True)
class ImportResult:
    corpus: Corpus
    created: bool  # False: the same bytes were imported before, nothing was added
    transcripts: int
    warnings: int


def family_of(external_id: str) -> str:
    """The group of transcripts that are not independent evidence of each other.

    nebius ids are ``<instance>#<n>``: every trajectory of one issue is one family.
    tau-bench ids are ``task<id>-trial<n>``: every trial of one task is one family.
    Anything else is its own family.
    """
    if "#" in external_id:
        return external_id.split("#", 1)[0]
    match = _TAU_ID.match(external_id)
    return match.group(1) if match else external_id


def read_corpus(data: bytes) -> tuple:
    """The ``(transcript_id, Parsed)`` pairs of a file, or ``ImportRefused``."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ImportRefused([f"byte {error.start}: not UTF-8 text ({error.reason})"]) from None
    try:
        found = formats_many(text)
    except TranscriptError as error:
        reasons = [f"line {error.line}, column {error.column}: {error.reason}"]
        reasons += [str(warning) for warning in error.warnings]
        raise ImportRefused(reasons) from None
    lossy = [
        f"{ident}: {warning}"
        for ident, parsed in found
        for warning in parsed.warnings
        if any(marker in warning.message for marker in _LOSSY)
    ]
    if lossy:
        raise ImportRefused(lossy)
    return found


def import_corpus(
    data: bytes,
    *,
    name: str,
    source: str,
    provenance: str = "",
    user=None,
    progress: Callable[[Iterable], Iterable] = iter,
) -> ImportResult:
    """Store the transcripts of ``data`` as a corpus called ``name``, all or nothing."""
    digest = hashlib.sha256(data).hexdigest()
    existing = Corpus.objects.filter(digest=digest).first()
    if existing is not None:
        return ImportResult(existing, False, existing.transcripts.count(), len(existing.warnings))
    found = read_corpus(data)
    if Corpus.objects.filter(name=name).exists():
        raise ImportRefused([f"a different corpus is already called {name!r}"])
    formats = {parsed.format for _, parsed in found}
    warnings = [
        {"transcript": ident, "line": warning.line, "message": warning.message}
        for ident, parsed in found
        for warning in parsed.warnings
    ]
    try:
        with transaction.atomic():
            corpus = Corpus.objects.create(
                name=name,
                format=formats.pop() if len(formats) == 1 else CorpusFormat.MIXED,
                source=source,
                provenance=provenance,
                digest=digest,
                size_bytes=len(data),
                warnings=warnings,
                imported_by=user if user is not None and user.is_authenticated else None,
            )
            Transcript.objects.bulk_create(
                _transcript(corpus, position, ident, parsed)
                for position, (ident, parsed) in enumerate(progress(found))
            )
    except IntegrityError:  # the same file, imported by someone else a moment ago
        existing = Corpus.objects.filter(digest=digest).first()
        if existing is None:
            raise
        return ImportResult(existing, False, existing.transcripts.count(), len(warnings))
    return ImportResult(corpus, True, len(found), len(warnings))


def _transcript(corpus: Corpus, position: int, ident: str, parsed) -> Transcript:
    return Transcript(
        corpus=corpus,
        external_id=ident,
        family=family_of(ident),
        position=position,
        format=parsed.format,
        messages=[message_to_dict(message) for message in parsed.messages],
        turn_count=len(parsed.messages),
        meta=dict(parsed.meta),
        record=parsed.record,
        warnings=[{"line": w.line, "message": w.message} for w in parsed.warnings],
    )


def messages_of(transcript: Transcript) -> tuple[Message, ...]:
    """The transcript's messages, as the compiler read them at import."""
    return tuple(message_from_dict(item) for item in transcript.messages)


def compile_transcript(transcript: Transcript, schema) -> list[Extraction]:
    """Unsaved ``Extraction`` rows: every register history entry of one transcript."""
    compilation = run(messages_of(transcript), schema=schema)
    originals, kinds = compilation.original, compilation.kinds
    return [
        Extraction(
            transcript=transcript,
            slot=entry.slot,
            value=entry.value,
            turn=entry.turn,
            provenance=str(entry.provenance),
            role=originals[entry.turn].role,
            kind=str(kinds[entry.turn]),
            quote=quote(originals, entry.turn, entry.value),
            superseded_by=entry.superseded_by,
            revoked_at=entry.revoked_at,
        )
        for entry in _unique_entries(compilation.register.history)
    ]


def _unique_entries(history):
    seen = set()
    for entry in history:
        key = (entry.slot, entry.turn, entry.value)
        if key not in seen:
            seen.add(key)
            yield entry


def reproduced_keys(transcript: Transcript, schema) -> set[tuple[str, int, str]]:
    """``(slot, turn, value)`` of every entry the current compiler registers."""
    compilation = run(messages_of(transcript), schema=schema)
    return {(e.slot, e.turn, e.value) for e in compilation.register.history}


def compile_corpus(
    corpus: Corpus,
    schema_name: str,
    *,
    progress: Callable[[Iterable], Iterable] = iter,
) -> CompileRun:
    """The run of ``corpus`` under ``schema_name`` and the current compiler, made once."""
    schema = load_schema(schema_name)
    identity = {
        "corpus": corpus,
        "schema_name": schema_name,
        "schema_digest": schema.digest,
        "compiler_version": compiler.__version__,
    }
    existing = CompileRun.objects.filter(**identity).first()
    if existing is not None:
        return existing
    try:
        with transaction.atomic():
            compile_run = CompileRun.objects.create(**identity)
            for transcript in progress(corpus.transcripts.order_by("position")):
                rows = compile_transcript(transcript, schema)
                for row in rows:
                    row.run = compile_run
                Extraction.objects.bulk_create(rows)
    except IntegrityError:  # compiled concurrently by another request
        return CompileRun.objects.get(**identity)
    return compile_run


def turn_text(message: Message | dict) -> str:
    """What a reviewer reads of a turn: its text, then any tool calls it made."""
    if isinstance(message, dict):
        message = message_from_dict(message)
    calls = [f"→ {call.name}({call.arguments})" for call in message.tool_calls]
    return "\n".join(part for part in (message.text, *calls) if part)


def quote(messages: tuple[Message, ...], turn: int, value: str) -> list[dict]:
    """The registering turn (centred on the value) and its two neighbours.

    Example:
        >>> ms = (Message("user", "hi"), Message("assistant", "editing `a.py`"))
        >>> [(q["turn"], q["role"], q["text"], q["registering"]) for q in quote(ms, 1, "a.py")]
        [(0, 'user', 'hi', False), (1, 'assistant', 'editing `a.py`', True)]
    """
    out = []
    for index in range(max(0, turn - 1), min(len(messages), turn + 2)):
        text = turn_text(messages[index])
        if index == turn:
            text = _window(text, value, QUOTE_CHARS)
        elif index < turn:
            text = text if len(text) <= NEIGHBOUR_CHARS else "…" + text[-NEIGHBOUR_CHARS:]
        else:
            text = text if len(text) <= NEIGHBOUR_CHARS else text[:NEIGHBOUR_CHARS] + "…"
        out.append(
            {
                "turn": index,
                "role": messages[index].role,
                "text": text,
                "registering": index == turn,
            }
        )
    return out


def _window(text: str, value: str, size: int) -> str:
    if len(text) <= size:
        return text
    at = text.casefold().find(value.casefold()) if value else -1
    start = 0 if at < 0 else max(0, min(at - size // 2, len(text) - size))
    piece = text[start : start + size]
    return ("…" if start else "") + piece + ("…" if start + size < len(text) else "")


KIND_MACHINE = str(Kind.MACHINE)

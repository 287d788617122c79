"""Corpus files in, transcripts stored — or the file refused with every reason.

``import_corpus`` reads a file with the compiler's own reader (every format it reads),
refuses a bad file with the reader's line-numbered reasons, refuses what PostgreSQL
cannot store (a NUL character, a lone surrogate, a number too large for JSON, an id
over its column's length) naming the transcript, message and field, and stores its
transcripts in one transaction with a synchronous commit, as durable as a verdict — a
refused or failed import leaves nothing behind. The SHA-256 of the bytes identifies a
file, so importing it again adds nothing. Compiling what was stored is
``labelling.compiling``'s work.

Example:
    >>> family_of("AnalogJ__lexicon-336#3"), family_of("task12-trial3"), family_of("line4")
    ('AnalogJ__lexicon-336', 'task12', 'line4')
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from itertools import islice

from django.db import IntegrityError, transaction

from compiler import TranscriptError, formats_many, message_to_dict
from labelling.models import Corpus, CorpusFormat, Transcript
from labelling.verdicts import durable_commit

# A reader warning that means part of the file was thrown away, not merely tidied:
# a file like that is refused rather than half-imported.
_LOSSY = ("not valid JSON",)
_TAU_ID = re.compile(r"^(task[^-]+)-trial\d+$")
INSERT_BATCH = 10  # transcripts a bulk insert takes: a progress step of a 100-transcript file
SHOWN_REASONS = 50  # a refusal lists this many reasons, then how many more there are


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
    unstorable = [reason for ident, parsed in found for reason in storage_problems(ident, parsed)]
    if unstorable:
        raise ImportRefused(_shown(unstorable))
    return found


def _shown(reasons: list[str]) -> list[str]:
    if len(reasons) <= SHOWN_REASONS:
        return reasons
    more = len(reasons) - SHOWN_REASONS
    return [*reasons[:SHOWN_REASONS], f"… and {more} more reasons of the same kinds"]


def _named(ident: str) -> str:
    """A transcript's id as a reason quotes it: escaped, and cut when long."""
    return repr(ident if len(ident) <= 80 else ident[:80] + "…")


def text_problem(text: str, limit: int | None = None) -> str | None:
    """Why PostgreSQL cannot store ``text`` (in a column of ``limit`` characters), or None.

    Example:
        >>> text_problem("a\\x00b")
        'holds a NUL character, which PostgreSQL cannot store'
        >>> text_problem("\\ud800"), text_problem("abc", limit=2), text_problem("abc")
        ('holds a lone surrogate, which is not text', 'is 3 characters; at most 2 are stored', None)
    """
    if limit is not None and len(text) > limit:
        return f"is {len(text)} characters; at most {limit} are stored"
    if "\x00" in text:
        return "holds a NUL character, which PostgreSQL cannot store"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "holds a lone surrogate, which is not text"
    return None


def value_problems(value, name: str) -> Iterator[str]:
    """Each string, key or number in a JSON value that PostgreSQL cannot store, named
    ``name`` and its path in the value.

    One encoding in C answers for the usual value; only a value that fails it is walked.

    Example:
        >>> for problem in value_problems({"n": [1, float("inf")], "k\\x00": 2}, "field"):
        ...     print(problem)
        field n[1]: inf is not a JSON number (a number too large to store)
        field key 'k\\x00': holds a NUL character, which PostgreSQL cannot store
    """
    try:
        encoded = json.dumps(value, ensure_ascii=False, allow_nan=False)
        encoded.encode("utf-8")
    except (ValueError, UnicodeEncodeError):
        pass
    else:
        if "\\u0000" not in encoded:
            return
    for path, problem in _walk(value, ""):
        yield f"{name} {path}: {problem}" if path else f"{name}: {problem}"


def _walk(value, path: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, str):
        if problem := text_problem(value):
            yield path, problem
    elif isinstance(value, float) and not math.isfinite(value):
        yield path, f"{value} is not a JSON number (a number too large to store)"
    elif isinstance(value, dict):
        for key, item in value.items():
            if problem := text_problem(str(key)):
                yield f"{path} key {str(key)!r}".strip(), problem
                continue
            yield from _walk(item, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            yield from _walk(item, f"{path}[{index}]")


def storage_problems(ident: str, parsed) -> list[str]:
    """What of one read transcript PostgreSQL cannot store, each reason naming the
    transcript, the message and the field; empty when all of it can be stored."""
    named = f"transcript {_named(ident)}"
    limit = Transcript._meta.get_field("external_id").max_length
    problems = [f"{named}: its id {p}" for p in [text_problem(ident, limit)] if p]
    for index, message in enumerate(parsed.messages):
        for problem in value_problems(message_to_dict(message, every_key=True), "field"):
            problems.append(f"{named}, message {index}, {problem}")
    for name, value in (("meta", dict(parsed.meta)), ("record", parsed.record)):
        problems += [f"{named}, {p}" for p in value_problems(value, name)]
    warnings = [w.message for w in parsed.warnings]
    problems += [f"{named}, {p}" for p in value_problems(warnings, "reader warning")]
    return problems


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
    fields = {"name": name, "source": source, "provenance": provenance}
    if given := _field_problems(fields):
        raise ImportRefused(given)
    formats = {parsed.format for _, parsed in found}
    warnings = [
        {"transcript": ident, "line": warning.line, "message": warning.message}
        for ident, parsed in found
        for warning in parsed.warnings
    ]
    try:
        with transaction.atomic():
            durable_commit()  # an acknowledged import survives a crash, as a verdict does
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
            rows = (
                _transcript(corpus, position, ident, parsed)
                for position, (ident, parsed) in enumerate(progress(found))
            )
            # inserted a batch at a time, so ``progress`` follows the inserts
            while batch := list(islice(rows, INSERT_BATCH)):
                Transcript.objects.bulk_create(batch)
    except IntegrityError:  # the same file, imported by someone else a moment ago
        existing = Corpus.objects.filter(digest=digest).first()
        if existing is None:
            raise
        return ImportResult(existing, False, existing.transcripts.count(), len(warnings))
    return ImportResult(corpus, True, len(found), len(warnings))


def _field_problems(fields: dict[str, str]) -> list[str]:
    """The corpus's own fields (name, source, provenance) that cannot be stored."""
    found = []
    for name, text in fields.items():
        limit = getattr(Corpus._meta.get_field(name), "max_length", None)
        if problem := text_problem(text, limit):
            found.append(f"the corpus's {name} {problem}")
    return found


def _transcript(corpus: Corpus, position: int, ident: str, parsed) -> Transcript:
    return Transcript(
        corpus=corpus,
        external_id=ident,
        family=family_of(ident),
        position=position,
        format=parsed.format,
        messages=[message_to_dict(message, every_key=True) for message in parsed.messages],
        turn_count=len(parsed.messages),
        meta=dict(parsed.meta),
        record=parsed.record,
        warnings=[{"line": w.line, "message": w.message} for w in parsed.warnings],
    )

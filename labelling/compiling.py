"""Stored transcripts in, extractions and retirements out, each with a quote to judge.

``compile_corpus`` compiles every transcript of a corpus under a schema with the
current compiler and stores each register history entry as an ``Extraction`` and each
turn a ``compact`` compile retires as a ``Retirement``; a run is identified by corpus,
schema name, schema digest and compiler version, so asking again for the same run
reuses it. A transcript is compiled from the messages stored at import
(``messages_of``), never from the file.

``quote`` and ``retirement_quote`` cut what a reviewer reads beside a row: the
registering turn centred on the value with the end of each neighbour nearest it, or the
retired turn with the turn before it and each superseding turn whole.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from django.db import IntegrityError, transaction

import compiler
from compiler import Message, load_schema, message_from_dict, run
from labelling.models import CompileRun, Corpus, Extraction, Retirement, Transcript

QUOTE_CHARS = 700  # of the registering turn, centred on the value
NEIGHBOUR_CHARS = 300  # of each neighbouring turn, the end nearest the registering turn


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


def compile_retirements(transcript: Transcript, schema) -> list[Retirement]:
    """Unsaved ``Retirement`` rows: every turn a ``compact`` compile of one transcript
    retires, with the turns that superseded it."""
    compilation = run(messages_of(transcript), schema=schema, mode="compact")
    originals = compilation.original
    return [
        Retirement(
            transcript=transcript,
            turn=retired.turn,
            role=originals[retired.turn].role,
            superseded_by=dict(retired.superseded),
            reason=retired.reason,
            quote=retirement_quote(originals, retired.turn, [by for _, by in retired.superseded]),
        )
        for retired in compilation.retired
    ]


def retirement_quote(messages: tuple[Message, ...], turn: int, by: list[int]) -> list[dict]:
    """The retired turn with the turn before it, and each superseding turn, whole.

    Example:
        >>> ms = (Message("user", "to 1 Elm"), Message("assistant", "ok"),
        ...       Message("user", "no, 9 Oak"), Message("assistant", "done"))
        >>> [(q["turn"], q["retired"], q["superseding"]) for q in retirement_quote(ms, 0, [2])]
        [(0, True, False), (2, False, True)]
    """
    shown = sorted({max(0, turn - 1), turn, *by})
    return [
        {
            "turn": index,
            "role": messages[index].role,
            "text": turn_text(messages[index]),
            "retired": index == turn,
            "superseding": index in by,
        }
        for index in shown
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
                retirements = compile_retirements(transcript, schema)
                for retirement in retirements:
                    retirement.run = compile_run
                Retirement.objects.bulk_create(retirements)
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

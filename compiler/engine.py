"""Run the stages in order and say exactly what was done.

    formats → strip_compiled → classify → extract → register → retire
            → compact → recall → emit → telemetry

Only this module reads the clock (it times the whole run).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from compiler.classify import Kind, classify
from compiler.compact import Compacted, compact
from compiler.emit import MODES, Emitted, Recall, emit, strip_compiled
from compiler.errors import OptionError
from compiler.extract import extract
from compiler.formats import formats, read_message_list
from compiler.messages import Message, ParseWarning, message_to_dict
from compiler.recall import recall
from compiler.register import Register, register
from compiler.retire import Retired, retire, retirement_violations
from compiler.schema import Schema, load_schema
from compiler.stale import elide, stale_reads
from compiler.telemetry import telemetry
from compiler.tokens import resolve_counter


@dataclass(frozen=True)
class Compilation:
    """Everything one run produced, for callers that want more than dicts."""

    original: tuple[Message, ...]
    input: tuple[Message, ...]
    kinds: tuple[Kind, ...]
    register: Register
    retired: tuple[Retired, ...]
    compacted: dict[int, Compacted]
    emitted: Emitted
    markup_stripped: int
    recall: Recall | None = None


def compile_messages(
    messages: list,
    *,
    schema: Any = None,
    mode: str = "compact",
    invariants=(),
    recall_query: str | None = None,
    token_counter: Any = None,
) -> tuple[list[dict], dict]:
    """Compile an OpenAI-style message list; return (messages, telemetry).

    Example:
        >>> msgs = [{"role": "user", "content": "Pay with my credit card."},
        ...         {"role": "assistant", "content": "Done."}]
        >>> out, tel = compile_messages(msgs, schema=load_schema("logistics"))
        >>> tel["active_state_slots"]
        {'payment_method': 'credit card'}
    """
    started = time.perf_counter()
    parsed = read_message_list(messages)
    return _finish(
        parsed.messages,
        parsed.warnings,
        started,
        schema,
        mode,
        invariants,
        recall_query,
        token_counter,
    )


def compile_transcript(text: str, **options) -> tuple[list[dict], dict, list[str]]:
    """Compile a transcript in any format ``formats`` reads.

    Returns (messages, telemetry, parse warnings). Raises ``TranscriptError``
    (with line and column) when the text holds no recognisable turn.

    Example:
        >>> out, tel, warnings = compile_transcript("user: hi\\nassistant: hello")
        >>> [m["role"] for m in out], warnings
        (['user', 'assistant'], [])
    """
    started = time.perf_counter()
    parsed = formats(text)
    out, tel = _finish(parsed.messages, parsed.warnings, started, **_named(options))
    return out, tel, [str(w) for w in parsed.warnings]


def _named(options: dict) -> dict:
    allowed = {"schema", "mode", "invariants", "recall_query", "token_counter"}
    unknown = sorted(set(options) - allowed)
    if unknown:
        raise OptionError(f"unknown option(s): {', '.join(unknown)}")
    return {
        "schema": options.get("schema"),
        "mode": options.get("mode", "compact"),
        "invariants": options.get("invariants", ()),
        "recall_query": options.get("recall_query"),
        "token_counter": options.get("token_counter"),
    }


def _finish(
    messages,
    warnings,
    started,
    schema=None,
    mode="compact",
    invariants=(),
    recall_query=None,
    token_counter=None,
):
    counter = resolve_counter(token_counter)
    result = run(
        messages, schema=schema, mode=mode, invariants=invariants, recall_query=recall_query
    )
    out = [message_to_dict(m) for m in result.emitted.messages]
    elapsed_ms = (time.perf_counter() - started) * 1000
    tel = telemetry(
        result, mode=mode, counter=counter, elapsed_ms=elapsed_ms, warnings=warnings, output=out
    )
    return out, tel


def run(
    messages: tuple[Message, ...],
    *,
    schema: Any = None,
    mode: str = "compact",
    invariants=(),
    recall_query: str | None = None,
) -> Compilation:
    """The stages, in order, over already-read messages."""
    if mode not in MODES:
        raise OptionError(f"unknown mode {mode!r}; expected one of {', '.join(MODES)}")
    loaded = _schema(schema)
    rules = _invariants(invariants)
    clean, stripped = strip_compiled(tuple(messages))
    kinds = classify(clean)
    reg = register(extract(clean, kinds, loaded), immutable=loaded.immutable if loaded else ())
    retired = retire(reg, kinds) if mode == "compact" else ()
    gone = frozenset(r.turn for r in retired)
    compacted = _compact(clean, kinds, gone) if mode == "compact" else {}
    hit = recall(recall_query, clean, tuple(sorted(gone)))
    emitted = emit(
        clean,
        register=reg,
        retired=gone,
        compacted={i: c.text for i, c in compacted.items()},
        mode=mode,
        invariants=rules,
        recall=hit,
    )
    return Compilation(
        tuple(messages), clean, kinds, reg, retired, compacted, emitted, stripped, hit
    )


def _compact(messages, kinds, gone) -> dict[int, Compacted]:
    """Stale reads become a notice; every other payload is compacted by its shape."""
    replaced = stale_reads(messages, kinds)
    done = {}
    for index, (message, kind) in enumerate(zip(messages, kinds, strict=True)):
        if kind is not Kind.MACHINE or index in gone or not message.content:
            continue
        if index in replaced:
            key, later = replaced[index]
            result = elide(message.content, replaced_by=later, key=key)
        else:
            result = compact(message.content, tool_name=message.name)
        if result.changed:
            done[index] = result
    return done


def _schema(schema: Any) -> Schema | None:
    if schema is None:
        return None
    if hasattr(schema, "schema") and isinstance(schema.schema, Schema):
        return schema.schema
    return load_schema(schema)


def _invariants(invariants) -> tuple[str, ...]:
    if isinstance(invariants, str):
        invariants = (invariants,)
    seen: list[str] = []
    for rule in invariants or ():
        if not isinstance(rule, str):
            raise OptionError(f"an invariant must be a string, got {type(rule).__name__}")
        text = " ".join(rule.split())
        if text and text not in seen:
            seen.append(text)
    return tuple(seen)


__all__ = [
    "Compilation",
    "ParseWarning",
    "compile_messages",
    "compile_transcript",
    "retirement_violations",
    "run",
]

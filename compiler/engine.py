"""Run the stages in order and say exactly what was done.

    formats → strip_compiled → declare → classify → extract → register
            → retire → compact → recall → emit → telemetry

Only this module reads the clock (it times the whole run).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from compiler.classify import Kind, classify
from compiler.compact import Compacted, compact
from compiler.declare import POLICIES, Declared, declare
from compiler.emit import MODES, Emitted, Recall, emit, strip_compiled
from compiler.errors import OptionError
from compiler.extract import PROVENANCE_RANK, extract
from compiler.formats import formats, read_message_list
from compiler.messages import Message, ParseWarning, message_to_dict
from compiler.protocol import render_instruction
from compiler.recall import recall
from compiler.register import Register, register
from compiler.retire import Retired, retire, retirement_violations
from compiler.schema import Schema, load_schema
from compiler.stale import elide, stale_reads
from compiler.telemetry import telemetry
from compiler.tokens import resolve_counter


@dataclass(frozen=True)
class Options:
    """What a caller may ask of one compile; validated before any stage runs."""

    schema: Schema | None = None
    mode: str = "compact"
    invariants: tuple[str, ...] = ()
    recall_query: str | None = None
    teach_protocol: bool = False
    declaration_policy: str = "flag"
    value_policy: str = "flag"

    @classmethod
    def build(cls, **given) -> Options:
        """Validated options; an unknown name or value raises ``OptionError``."""
        unknown = sorted(set(given) - set(cls.__dataclass_fields__))
        if unknown:
            raise OptionError(f"unknown option(s): {', '.join(unknown)}")
        raw = {**{name: f.default for name, f in cls.__dataclass_fields__.items()}, **given}
        _choice("mode", raw["mode"], MODES)
        _choice("declaration_policy", raw["declaration_policy"], POLICIES)
        _choice("value_policy", raw["value_policy"], POLICIES)
        return cls(
            **{
                **raw,
                "schema": _schema(raw["schema"]),
                "invariants": _invariants(raw["invariants"]),
                "teach_protocol": bool(raw["teach_protocol"]),
            }
        )


def _choice(name: str, value: Any, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise OptionError(f"unknown {name} {value!r}; expected one of {', '.join(allowed)}")


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
    declared: Declared
    options: Options
    recall: Recall | None = None
    instruction: str = ""


def compile_messages(messages: list, *, token_counter: Any = None, **options):
    """Compile an OpenAI-style message list; return (messages, telemetry).

    Options: ``schema``, ``mode`` ("compact" | "cache_friendly"), ``invariants``,
    ``recall_query``, ``teach_protocol``, ``declaration_policy`` and
    ``value_policy`` ("flag" | "reject" | "off"); ``token_counter`` ("chars",
    "exact", an encoding name, or an object with ``name`` and ``count``).

    Example:
        >>> msgs = [{"role": "user", "content": "Pay with my credit card."},
        ...         {"role": "assistant", "content": "Done."}]
        >>> out, tel = compile_messages(msgs, schema=load_schema("logistics"))
        >>> tel["active_state_slots"]
        {'payment_method': 'credit card'}
    """
    started = time.perf_counter()
    chosen = Options.build(**options)
    parsed = read_message_list(messages)
    return _finish(parsed.messages, parsed.warnings, started, chosen, token_counter)


def compile_transcript(text: str, *, token_counter: Any = None, **options):
    """Compile a transcript in any format ``formats`` reads.

    Returns (messages, telemetry, parse warnings). Raises ``TranscriptError``
    (with line and column) when the text holds no recognisable turn.

    Example:
        >>> out, tel, warnings = compile_transcript("user: hi\\nassistant: hello")
        >>> [m["role"] for m in out], warnings
        (['user', 'assistant'], [])
    """
    started = time.perf_counter()
    chosen = Options.build(**options)
    parsed = formats(text)
    out, tel = _finish(parsed.messages, parsed.warnings, started, chosen, token_counter)
    return out, tel, [str(w) for w in parsed.warnings]


def _finish(messages, warnings, started, options: Options, token_counter):
    counter = resolve_counter(token_counter)
    result = run(messages, options)
    out = [message_to_dict(m) for m in result.emitted.messages]
    elapsed_ms = (time.perf_counter() - started) * 1000
    tel = telemetry(result, counter=counter, elapsed_ms=elapsed_ms, warnings=warnings, output=out)
    return out, tel


def run(messages: tuple[Message, ...], options: Options | None = None, **given) -> Compilation:
    """The stages, in order, over already-read messages.

    Example:
        >>> from compiler.messages import Message
        >>> run((Message("user", "hi"),)).emitted.messages
        (Message(role='user', content='hi', ...),)
    """
    options = options or Options.build(**given)
    schema, compacting = options.schema, options.mode == "compact"
    clean, stripped = strip_compiled(tuple(messages))
    declared = declare(
        clean,
        schema,
        declaration_policy=options.declaration_policy,
        value_policy=options.value_policy,
    )
    clean = declared.messages
    kinds = classify(clean)
    inferred = extract(clean, kinds, schema, skip=declared.keys_by_turn)
    observations = sorted(
        (*inferred, *declared.observations),
        key=lambda o: (o.turn, PROVENANCE_RANK[o.provenance]),
    )
    reg = register(tuple(observations), immutable=schema.immutable if schema else ())
    retired = retire(reg, kinds) if compacting else ()
    gone = frozenset(r.turn for r in retired)
    compacted = _compact(clean, kinds, gone) if compacting else {}
    hit = recall(options.recall_query, clean, tuple(sorted(gone)))
    instruction = _instruction(options)
    emitted = emit(
        clean,
        register=reg,
        retired=gone,
        compacted={i: c.text for i, c in compacted.items()},
        mode=options.mode,
        invariants=options.invariants,
        recall=hit,
        instruction=instruction,
    )
    return Compilation(
        tuple(messages),
        clean,
        kinds,
        reg,
        retired,
        compacted,
        emitted,
        stripped,
        declared,
        options,
        hit,
        instruction,
    )


def _instruction(options: Options) -> str:
    if not options.teach_protocol:
        return ""
    return render_instruction(options.schema.slot_names if options.schema else ())


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
    "Options",
    "ParseWarning",
    "compile_messages",
    "compile_transcript",
    "retirement_violations",
    "run",
]

"""Run the stages in order and say exactly what was done.

    per message (compiler.fold):  strip_compiled_one → declare → classify
                                      → extract → register (a fold)
    whole history:                    retire → compact → recall → emit
    then:                             telemetry

Only this module reads the clock (it times the whole run).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from compiler.compact.compact import Compacted
from compiler.errors import OptionError, SchemaError
from compiler.fold import Fold
from compiler.frozen import build
from compiler.incremental import HISTORIES
from compiler.layout.emit import MODES, Emitted, Recall
from compiler.layout.telemetry import telemetry
from compiler.layout.tokens import resolve_counter
from compiler.protocol.declare import POLICIES, Declared
from compiler.read.formats import formats
from compiler.read.items import read_message_list
from compiler.read.messages import Message, ParseWarning, message_to_dict, owned
from compiler.read.pairing import unpaired
from compiler.state.classify import Kind
from compiler.state.register import Register
from compiler.state.retire import Retired, retirement_violations
from compiler.state.schema import Schema, load_schema


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

    @property
    def cache_key(self) -> tuple:
        """What the per-message stages depend on (the rest only shapes the layout)."""
        schema = self.schema
        return (
            schema.digest if schema else None,
            schema.name if schema else None,
            self.mode,
            self.declaration_policy,
            self.value_policy,
        )

    @classmethod
    def build(cls, **given) -> Options:
        """Validated options; an unknown name or value raises ``OptionError``."""
        if not given.keys() <= _DEFAULTS.keys():
            unknown = sorted(given.keys() - _DEFAULTS.keys())
            raise OptionError(f"unknown option(s): {', '.join(unknown)}")
        raw = {**_DEFAULTS, **given}
        _choice("mode", raw["mode"], MODES)
        _choice("declaration_policy", raw["declaration_policy"], POLICIES)
        _choice("value_policy", raw["value_policy"], POLICIES)
        query = raw["recall_query"]
        if query is not None and not isinstance(query, str):
            raise OptionError(f"recall_query must be a string, got {type(query).__name__}")
        teach = raw["teach_protocol"]
        if not isinstance(teach, bool | int) or teach not in (0, 1):
            raise OptionError(f"teach_protocol must be true or false, got {teach!r}")
        raw["schema"] = _schema(raw["schema"])
        raw["invariants"] = _invariants(raw["invariants"])
        raw["teach_protocol"] = bool(teach)
        return build(cls, **raw)  # every field given, validated: as cls(**raw) builds it


# every option and its default, read once rather than from the fields on every call
_DEFAULTS = {name: spec.default for name, spec in Options.__dataclass_fields__.items()}


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
    # each input turn's number as the caller counts it (its place in the caller's list),
    # where that is not its index in ``input``; telemetry and the text report these
    numbers: tuple[int, ...] | None = None
    # the place of the first item of the caller's list the reader skipped, if any
    skipped_at: int | None = None
    # None: no memo outlives this compile, so each dict and count is built once, and
    # remembering them would only cost
    token_memo: dict | None = field(default=None, compare=False)
    dict_memo: dict | None = field(default=None, compare=False)
    held: Any = field(default=None, compare=False)

    def is_held(self, message: Message, origin: int | None) -> bool:
        """Whether ``message`` stays alive with this compile's history (memo-safe)."""
        if self.held is not None:
            return self.held(message, origin)
        return origin is not None and message is self.input[origin]

    def output_dicts(self) -> list[dict]:
        """The compiled messages as dicts; held messages are built once per history."""
        if self.dict_memo is None:
            return list(map(message_to_dict, self.emitted.messages))
        out = []
        for message, origin in zip(self.emitted.messages, self.emitted.origins, strict=True):
            if self.is_held(message, origin):
                key = id(message)
                if key not in self.dict_memo:
                    self.dict_memo[key] = message_to_dict(message)
                out.append(owned(self.dict_memo[key]))  # the caller may change its copy
            else:
                out.append(message_to_dict(message))
        return out


def compile_messages(messages: list, *, token_counter: Any = None, cache: bool = True, **options):
    """Compile an OpenAI-style message list; return (messages, telemetry).

    Options: ``schema``, ``mode`` ("compact" | "cache_friendly"), ``invariants``,
    ``recall_query``, ``teach_protocol``, ``declaration_policy`` and
    ``value_policy`` ("flag" | "reject" | "off"); ``token_counter`` ("chars",
    "exact", an encoding name, or an object with ``name`` and ``count``).
    With ``cache`` (the default) a history that extends one compiled before
    resumes that work (``compiler.incremental``); the result is the same.

    Example:
        >>> msgs = [{"role": "user", "content": "Pay with my credit card."},
        ...         {"role": "assistant", "content": "Done."}]
        >>> out, tel = compile_messages(msgs, schema=load_schema("logistics"))
        >>> tel["active_state_slots"]
        {'payment_method': 'credit card'}
    """
    started = time.perf_counter()
    chosen = Options.build(**options)
    if _iterable(messages):  # a generator, a deque: read as the list it yields
        messages = list(messages)
    if cache and isinstance(messages, list | tuple):
        result, warnings = HISTORIES.compile(list(messages), chosen, chosen.cache_key)
    else:
        # The messages die with this call, and every dict it hands back is a new copy:
        # they need no copy of the caller's lists and dicts of their own.
        parsed = read_message_list(messages, own=False)
        items = len(messages) if isinstance(messages, list | tuple) else None
        progress = Fold(chosen, by_item=True).extend(parsed.messages, items=items)
        result = progress.finish(remember=False)
        warnings = (*parsed.warnings, *unpaired(result.original))  # as HISTORIES gives them
    return _finish(result, warnings, started, token_counter)


def compile_transcript(text: str, *, token_counter: Any = None, cache: bool = False, **options):
    """Compile a transcript in any format ``formats`` reads.

    Returns (messages, telemetry, parse warnings). Raises ``TranscriptError``
    (with line and column) when the text holds no recognisable turn. ``cache`` is
    accepted, as ``compile_messages`` takes it, and has nothing to resume: a text is
    read whole every time.

    Example:
        >>> out, tel, warnings = compile_transcript("user: hi\\nassistant: hello")
        >>> [m["role"] for m in out], warnings
        (['user', 'assistant'], [])
    """
    started = time.perf_counter()
    chosen = Options.build(**options)
    parsed = formats(text)
    out, tel = _finish(run(parsed.messages, chosen), parsed.warnings, started, token_counter)
    return out, tel, [str(w) for w in parsed.warnings]


def _iterable(messages: Any) -> bool:
    """An iterable of messages that is not already a list, tuple or one message or text."""
    plain = (list, tuple, str, bytes, bytearray, Mapping)
    return isinstance(messages, Iterable) and not isinstance(messages, plain)


def _finish(result: Compilation, warnings, started, token_counter):
    counter = resolve_counter(token_counter)
    out = result.output_dicts()
    elapsed_ms = (time.perf_counter() - started) * 1000
    tel = telemetry(result, counter=counter, elapsed_ms=elapsed_ms, warnings=warnings, output=out)
    return out, tel


def run(messages: tuple[Message, ...], options: Options | None = None, **given) -> Compilation:
    """The stages, in order, over already-read messages: the per-message fold
    (strip, declare, classify, extract, register), then the whole history
    (retire, compact, recall, emit).

    Example:
        >>> from compiler.read.messages import Message
        >>> run((Message("user", "hi"),)).emitted.messages
        (Message(role='user', content='hi', ...),)
    """
    options = options or Options.build(**given)
    return Fold(options).extend(messages).finish(remember=False)


def _schema(schema: Any) -> Schema | None:
    if schema is None or type(schema) is Schema:  # (asked of every call: spare it a hasattr)
        return schema
    if hasattr(schema, "schema") and isinstance(schema.schema, Schema):
        return schema.schema
    if not isinstance(schema, str | Path | dict | Schema):
        raise SchemaError(
            "a schema is a shipped name, a path, a mapping, a Schema or a StateDAG; "
            f"got {type(schema).__name__}"
        )
    return load_schema(schema)


def _invariants(invariants) -> tuple[str, ...]:
    """The caller's rules, whitespace collapsed, each once, in order.

    Example:
        >>> _invariants(["Never  refund", "never refund", "Never refund", ""])
        ('Never refund', 'never refund')
    """
    if isinstance(invariants, str):
        invariants = (invariants,)
    if invariants is not None and not isinstance(invariants, list | tuple):
        raise OptionError(f"invariants must be a list of strings, got {type(invariants).__name__}")
    seen: dict[str, None] = {}
    for rule in invariants or ():
        if not isinstance(rule, str):
            raise OptionError(f"an invariant must be a string, got {type(rule).__name__}")
        text = " ".join(rule.split())
        if text:
            seen.setdefault(text)
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

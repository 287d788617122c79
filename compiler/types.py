"""The shapes a compile takes in and gives back: ``Options`` and ``Compilation``.

``Options`` is what a caller may ask of one compile, validated before any stage runs;
``Compilation`` is everything one run produced. They live apart from the engine that
makes them so that the fold, the incremental cache and the OpenAI patch can name them
without importing the engine.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from compiler.compact import Compacted
from compiler.compact.checkpoints import DEFAULT_CACHED_RATE
from compiler.errors import OptionError, SchemaError
from compiler.frozen import build
from compiler.layout import MODES, Emitted, Recall
from compiler.protocol import POLICIES, Declared
from compiler.read import Message, message_to_dict, owned
from compiler.state import Kind, Register, Retired, Schema, load_schema


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
    # mark the end of the stable prefix with ``cache_control`` (explicit breakpoints);
    # off by default, so the output stays in the plain OpenAI message shape
    cache_marks: bool = False
    # the provider's cached rate, for a loop's calls: compact compiles for the loop
    # (``compiler.loop``), cache_friendly cuts old payloads where that pays
    # (``compact.checkpoints``); None: neither
    cached_rate: float | None = DEFAULT_CACHED_RATE

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
            self.cached_rate,
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
        marks = raw["cache_marks"]
        if not isinstance(marks, bool | int) or marks not in (0, 1):
            raise OptionError(f"cache_marks must be true or false, got {marks!r}")
        raw["cache_marks"] = bool(marks)
        raw["cached_rate"] = _rate(raw["cached_rate"])
        return build(cls, **raw)  # every field given, validated: as cls(**raw) builds it


# every option and its default, read once rather than from the fields on every call
_DEFAULTS = {name: spec.default for name, spec in Options.__dataclass_fields__.items()}


def _rate(rate: Any) -> float | None:
    """A cached rate: a number from 0 to 1, or None (no checkpoints).

    Example:
        >>> _rate(0.25), _rate(1), _rate(None)
        (0.25, 1.0, None)
        >>> _rate("0.1")
        Traceback (most recent call last):
        ...
        compiler.errors.OptionError: cached_rate must be a number from 0 to 1, got '0.1'
    """
    if rate is None:
        return None
    if isinstance(rate, bool) or not isinstance(rate, int | float) or not 0 <= rate <= 1:
        raise OptionError(f"cached_rate must be a number from 0 to 1, got {rate!r}")
    return float(rate)


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
        """The compiled messages as dicts; held messages are built once per history, and
        each call hands out a copy the caller may change (``_copier``)."""
        memo = self.dict_memo
        if memo is None:
            return list(map(message_to_dict, self.emitted.messages))
        out = []
        append, get, inputs = out.append, memo.get, self.input
        held = self.held if self.held is not None else self.is_held  # (one call, not two)
        for message, origin in zip(self.emitted.messages, self.emitted.origins, strict=True):
            if origin is not None and (message is inputs[origin] or held(message, origin)):
                found = get(id(message))
                if found is None:
                    made = message_to_dict(message)
                    found = memo[id(message)] = (_copier(made) or dict.copy, made)
                append(found[0](found[1]))
            else:
                append(message_to_dict(message))
        return out


def _copier(made: dict):
    """How a memoised output dict is copied for each call: None for one holding only
    text and nulls (``dict.copy``), else a copy of each list and dict in it made by a
    function built once for its shape (``_shaped_copy``; ``owned`` where it holds a
    subclass of either, or is nested past the stack). The memoised dict is never changed,
    so its shape holds. (On the airline dev corpus an assistant turn with a tool call:
    about 1.3 us so, 3.8 us through ``owned``; a tool turn 0.1 us copied, 0.7 us through
    ``owned``.)

    Example:
        >>> made = {"role": "assistant", "tool_calls": [{"id": "c1", "function": {}}]}
        >>> twin = _copier(made)(made)
        >>> twin == made, twin["tool_calls"] is made["tool_calls"]
        (True, False)
        >>> twin["tool_calls"][0]["function"] is made["tool_calls"][0]["function"]
        False
        >>> _copier({"role": "user", "content": "hi"}) is None
        True
    """
    if _PLAIN.issuperset(map(type, made.values())):
        return None
    try:
        return _shaped_copy(made)
    except (_Unshaped, RecursionError):
        return owned


class _Unshaped(Exception):
    """A list or dict subclass: copied as ``owned`` copies it (into a plain one)."""


def _shaped_copy(value):
    """A function that copies ``value`` (a plain dict or list) and every list and dict in
    it, sharing the rest, as ``owned`` does, for values of this very shape."""
    if type(value) is dict:
        pairs = value.items()
        copy = dict.copy
    elif type(value) is list:
        pairs = enumerate(value)
        copy = list.copy
    else:
        raise _Unshaped
    inner = []
    for key, item in pairs:
        if type(item) is dict or type(item) is list:
            inner.append((key, _shaped_copy(item)))
        elif isinstance(item, dict | list):
            raise _Unshaped
    if not inner:
        return copy
    if len(inner) == 1:  # (the usual case, a message's calls or a call's function)
        ((key, part),) = inner

        def copied_one(given):
            out = copy(given)
            out[key] = part(given[key])
            return out

        return copied_one

    def copied(given):
        out = copy(given)
        for key, part in inner:
            out[key] = part(given[key])
        return out

    return copied


_PLAIN = frozenset({str, type(None)})


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

"""One compile for the web layer: the API, the console and the proxy all call this.

It turns request fields into compiler options, runs the compiler, and returns
what a response needs. Nothing is stored. Errors are the compiler's typed ones
(``TranscriptError``, ``SchemaError``, ``OptionError``) plus ``RequestError``
for input the compiler never sees; ``playground.errors`` maps them to one shape.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from typing import Any

from compiler import (
    CharEstimator,
    ExactCounter,
    Schema,
    SchemaError,
    compile_messages,
    compile_transcript,
    list_schemas,
    load_schema,
    normalise_key,
)

OPTION_NAMES = (
    "mode",
    "invariants",
    "recall_query",
    "teach_protocol",
    "declaration_policy",
    "value_policy",
    "cache_marks",
    "cached_rate",
)


class RequestError(Exception):
    """Input rejected before or after the compiler runs: a status, a code, a reason."""

    def __init__(self, status: int, code: str, message: str, **extra: Any):
        super().__init__(message)
        self.status, self.code, self.message, self.extra = status, code, message, extra


@dataclass(frozen=True)
class Result:
    compiled_messages: list[dict]
    telemetry: dict
    parse_warnings: list[str] = field(default_factory=list)
    token_counter: str = "chars/4"

    def as_dict(self) -> dict:
        return {
            "compiled_messages": self.compiled_messages,
            "telemetry": self.telemetry,
            "parse_warnings": self.parse_warnings,
            "token_counter": self.token_counter,
        }


@cache
def shipped_schema(name: str) -> Schema:
    """A shipped schema by name, loaded once per process. Never a path.

    Example:
        >>> shipped_schema("logistics").slot_names
        ('active_order', 'delivery_address', 'payment_method', 'profile_address')
    """
    if name not in list_schemas():
        raise SchemaError(f"unknown schema {name!r}; shipped: {', '.join(list_schemas())}")
    return load_schema(name)


@cache
def exact_counter() -> ExactCounter | None:
    """The exact o200k counter when the ``exact`` extra is installed, else None."""
    try:
        return ExactCounter()
    except Exception:  # the extra is optional: without it only chars/4 is offered
        return None


# What a caller may ask for: the estimate (the default, as in the library), or exact
# o200k_base counts. The API and the console take the same names and the same default,
# so one transcript gives one count wherever it is compiled.
COUNTERS = ("chars/4", "exact")
DEFAULT_COUNTER = "chars/4"


def counter_named(name: str = DEFAULT_COUNTER) -> CharEstimator | ExactCounter:
    """The counter ``name`` asks for; a 422 when exact counts are asked of a server without
    the ``exact`` extra (no silent fallback: the figures would mean something else).

    Example:
        >>> counter_named("chars/4").name
        'chars/4'
    """
    if name == "chars/4":
        return CharEstimator()
    if name != "exact":
        raise RequestError(422, "invalid_option", f"token_counter is one of {', '.join(COUNTERS)}")
    counter = exact_counter()
    if counter is None:
        raise RequestError(
            422,
            "exact_counter_unavailable",
            "exact token counts need the rs-bpe package (the library's 'exact' extra), which "
            "this server does not have: leave token_counter out, or ask for 'chars/4'",
        )
    return counter


def counter_label(counter) -> str:
    """The short name a response gives its counter: ``chars/4`` or the encoding.

    Example:
        >>> counter_label(CharEstimator())
        'chars/4'
    """
    return getattr(counter, "encoding", None) or counter.name


def options(entity_schema: str | None = None, **given: Any) -> dict:
    """Compiler keyword arguments from request fields (``None`` means the default).

    Example:
        >>> options(entity_schema=None, mode="compact", recall_query=None)
        {'mode': 'compact'}
    """
    chosen = {name: value for name, value in given.items() if value is not None}
    unknown = sorted(set(chosen) - set(OPTION_NAMES))
    if unknown:
        raise RequestError(422, "invalid_option", f"unknown option(s): {', '.join(unknown)}")
    if entity_schema:
        chosen["schema"] = shipped_schema(entity_schema)
    return chosen


def run_compile(
    *,
    transcript: str | None = None,
    messages: list | None = None,
    token_counter: str = DEFAULT_COUNTER,
    **fields,
) -> Result:
    """Compile a transcript (text in any format) or a message array, counting tokens with
    the counter ``token_counter`` names (``COUNTERS``).

    Example:
        >>> result = run_compile(transcript="user: Pay with my credit card.\\nassistant: ok",
        ...                      entity_schema="logistics")
        >>> result.telemetry["active_state_slots"]
        {'payment_method': 'credit card'}
    """
    chosen = options(**fields)
    counter = counter_named(token_counter)
    label = counter_label(counter)
    if (transcript is None) == (messages is None):
        raise RequestError(
            422,
            "invalid_request",
            "give exactly one of 'transcript' (text in any format) or 'messages' (an array)",
        )
    if transcript is not None:
        out, tel, warnings = compile_transcript(transcript, token_counter=counter, **chosen)
        return Result(out, tel, list(warnings), label)
    if not messages:
        raise RequestError(422, "no_messages", "'messages' is empty: there is nothing to compile")
    out, tel = compile_messages(messages, token_counter=counter, **chosen)
    if tel["messages_in"] == 0:
        raise RequestError(
            422,
            "no_messages",
            "no item of 'messages' is a message object",
            parse_warnings=tel["parse_warnings"],
        )
    return Result(out, tel, list(tel["parse_warnings"]), label)


def instruction_slots(entity_schema: str | None, slots: list[str] | None) -> tuple[str, ...]:
    """The slots the protocol instruction names: a schema's, or the ones given, normalised.

    Given slots are normalised as the compiler normalises declared keys, so the
    answer lists the keys the instruction actually names; none left is a 422.

    Example:
        >>> instruction_slots(None, ["Delivery Address", "deliveryAddress", "!!!", "seat"])
        ('delivery_address', 'seat')
    """
    if entity_schema:
        return shipped_schema(entity_schema).slot_names
    if not slots:
        raise RequestError(
            422,
            "no_slots",
            "name an 'entity_schema' or list 'slots': "
            "the instruction names the keys an agent may declare",
        )
    names = tuple(dict.fromkeys(key for key in map(normalise_key, slots) if key))
    if not names:
        raise RequestError(
            422,
            "no_slots",
            "no slot in 'slots' has a letter or digit: a slot name is kept as "
            "snake_case letters and digits (e.g. 'Delivery Address' is delivery_address)",
        )
    return names


def telemetry_header(tel: dict) -> str:
    """The ``X-ContextGC-Telemetry`` value: raw, compiled, saved %, growth, compile ms.

    ``saved`` never goes below 0%, so a context the compile made larger (the
    protocol instruction or invariants added to a short history) says so in
    ``grew=``, the tokens it gained; the field is there only when it grew.

    Example:
        >>> telemetry_header({"raw_token_count": 200, "compiled_token_count": 80,
        ...                   "compression_ratio_pct": 60.0, "compile_time_ms": 1.234})
        'raw=200; compiled=80; saved=60.0%; compile_ms=1.234'
        >>> telemetry_header({"raw_token_count": 6, "compiled_token_count": 24,
        ...                   "compression_ratio_pct": 0.0, "compile_time_ms": 0.5})
        'raw=6; compiled=24; saved=0.0%; grew=18; compile_ms=0.5'
    """
    raw, compiled = tel["raw_token_count"], tel["compiled_token_count"]
    grew = f"grew={compiled - raw}; " if compiled > raw else ""
    return (
        f"raw={raw}; compiled={compiled}; saved={tel['compression_ratio_pct']}%; "
        f"{grew}compile_ms={tel['compile_time_ms']}"
    )

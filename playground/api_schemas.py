"""Input and output shapes of the API, kept apart so output never echoes input-only fields.

The allowed values of ``mode``, the policies and the schema names are the compiler's
own, so the OpenAPI document and the compiler cannot disagree. The document says
exactly which bodies are accepted — one of ``transcript`` and ``messages``, a schema
or slots for the instruction, booleans as JSON booleans — so a client generated from
it sends nothing the API refuses for its shape (``tests/site/test_site_openapi_contract.py``
runs schemathesis over it).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from ninja import Field, Schema
from pydantic import BaseModel, ConfigDict, StrictBool, WithJsonSchema, WrapValidator

from compiler import DEFAULT_CACHED_RATE, MODES, POLICIES, list_schemas
from playground.service import COUNTERS, DEFAULT_COUNTER

Mode = Literal[MODES]  # type: ignore[valid-type]
Counter = Literal[COUNTERS]  # type: ignore[valid-type]
Policy = Literal[POLICIES]  # type: ignore[valid-type]

CURL_TRANSCRIPT = "user: deliver to Tower B\nuser: actually use Gate 2, code 4921"

# A shipped schema's name; "" (as null) names none. Any other name is refused with 422.
SchemaName = Annotated[str, WithJsonSchema({"type": "string", "enum": ["", *list_schemas()]})]

# What the reader takes for a message: an object with a role, content or tool calls.
A_MESSAGE = {
    "type": "object",
    "anyOf": [{"required": ["role"]}, {"required": ["content"]}, {"required": ["tool_calls"]}],
}
# Exactly one history: a transcript, or an array holding at least one message; the other
# absent or null. (Both, or neither, is a 422.)
ONE_HISTORY = {
    "oneOf": [
        {
            "required": ["transcript"],
            "properties": {"transcript": {"type": "string"}, "messages": {"type": "null"}},
        },
        {
            "required": ["messages"],
            "properties": {
                "messages": {"type": "array", "minItems": 1, "contains": A_MESSAGE},
                "transcript": {"type": "null"},
            },
        },
    ]
}

# A shipped schema, or at least one slot with an ASCII letter or digit (a slot name keeps
# only those, see compiler's normalise_key); without either there is nothing to teach.
SCHEMA_OR_SLOTS = {
    "anyOf": [
        {
            "required": ["entity_schema"],
            "properties": {"entity_schema": {"enum": list(list_schemas())}},
        },
        {
            "required": ["slots"],
            "properties": {
                "slots": {"type": "array", "contains": {"type": "string", "pattern": "[A-Za-z0-9]"}}
            },
        },
    ]
}


def _objects_as_given(value, handler):
    """A JSON array of objects as parsed, without validating each message into a copy.

    Copying every message costs more than the rest of the request's validation; a
    JSON object's keys are always strings, so only the types are checked here. Anything
    else goes through pydantic and fails with its usual, positioned message.

    Example:
        >>> CompileIn(messages=[{"role": "user", "content": "x"}]).messages
        [{'role': 'user', 'content': 'x'}]
    """
    if type(value) is list and all(type(item) is dict for item in value):
        return value
    return handler(value)


Messages = Annotated[list[dict[str, Any]], WrapValidator(_objects_as_given)]


class CompileOptions(BaseModel):
    """The compile options: ``/api/compile``'s, and the proxy's ``contextgc`` object.

    Booleans are JSON booleans: ``"false"`` is a string, refused rather than guessed at.

    Example:
        >>> CompileOptions.model_validate({"teach_protocol": False}).teach_protocol
        False
        >>> CompileOptions.model_validate({"teach_protocol": "false"})
        Traceback (most recent call last):
        ...
        pydantic_core._pydantic_core.ValidationError: 1 validation error for CompileOptions
        ...
    """

    # A plain pydantic model: ninja's Schema adds a root validator for ORM objects that
    # costs more than validating the whole body; a body is never an ORM object here.
    model_config = ConfigDict(extra="forbid")

    mode: Mode = Field("compact", description="compact, or cache_friendly to keep the prefix.")
    entity_schema: SchemaName | None = Field(
        None, description="A shipped schema (see /api/schemas). Without one, no state is tracked."
    )
    invariants: list[str] = Field(default_factory=list, description="Rules restated once.")
    recall_query: str | None = Field(None, description="Recall a retired turn by words.")
    teach_protocol: StrictBool = Field(False, description="Add the state-protocol instruction.")
    declaration_policy: Policy = Field("flag", description="Off-schema declared keys.")
    value_policy: Policy = Field("flag", description="Declared values of the wrong shape.")
    cached_rate: float | None = Field(
        DEFAULT_CACHED_RATE,
        ge=0,
        le=1,
        strict=True,
        description="The provider's cached rate (0 to 1), for a loop's calls. compact: its "
        "decisions about earlier turns are taken only at checkpoints that pay at it, the state "
        "in notes, so each call's prompt extends the last between them; cache_friendly: old "
        "tool payloads are cut at checkpoints that pay at it. Without it, neither.",
    )


class History(BaseModel):
    model_config = ConfigDict(extra="forbid")

    transcript: str | None = Field(
        None,
        description="A transcript as text, in any format the compiler reads: plain "
        "'role: text' lines, an OpenAI message array as JSON, JSONL, a SWE-agent .traj, "
        "tau-bench records. Give this or 'messages'.",
        examples=[CURL_TRANSCRIPT],
    )
    messages: Messages | None = Field(
        None, description="OpenAI-style messages (role, content, tool_calls, …)."
    )


# A loop's history compiled to keep its prefix, the prefix's end marked for the cache.
CACHE_MARKS_EXAMPLE = {
    "mode": "cache_friendly",
    "cache_marks": True,
    "entity_schema": "logistics",
    "transcript": "user: Deliver order ORD-1 to 402 Oak Street, Apt 5, Springfield, IL 62704.\n"
    "assistant: Confirmed: 402 Oak Street, Apt 5.\nuser: Actually reroute to 900 Pine "
    "Avenue, Suite 12, Chicago, IL 60601.",
}

# The README's curl body: what "Try it out" on /api/docs sends unless it is edited.
README_EXAMPLE = {
    "entity_schema": "logistics",
    "transcript": "user: Deliver order ORD-1 to 402 Oak Street, Apt 5, Springfield, IL 62704. "
    "Pay with my credit card.\nassistant: Confirmed: 402 Oak Street, Apt 5, on the credit "
    "card.\nuser: Actually reroute to 900 Pine Avenue, Suite 12, Chicago, IL 60601.\n"
    "assistant: Rerouted to 900 Pine Avenue, Suite 12.\nuser: Thanks.",
}


class CompileIn(CompileOptions, History):
    """A history and the options to compile it with (pydantic lists History's fields first)."""

    model_config = ConfigDict(
        extra="forbid", json_schema_extra={**ONE_HISTORY, "example": README_EXAMPLE}
    )

    cache_marks: StrictBool = Field(
        False,
        description="Mark the end of the stable prefix (the last compiled message) with "
        "cache_control, for targets that take explicit cache breakpoints (Anthropic, or "
        "LiteLLM in front of it); pair it with mode cache_friendly, whose compile at each "
        "call is a prefix of the next. The telemetry is counted before the mark is added.",
        examples=[True],
    )
    token_counter: Counter = Field(
        DEFAULT_COUNTER,
        description="How tokens are counted: chars/4 (the default, as in the console), or "
        "exact (o200k_base; 422 exact_counter_unavailable where the server lacks it).",
    )


class CompileOut(Schema):
    compiled_messages: list[dict[str, Any]]
    telemetry: dict[str, Any]
    parse_warnings: list[str]
    token_counter: str = Field(description="The counter the figures used: chars/4 or o200k_base.")


class ErrorOut(Schema):
    model_config = ConfigDict(extra="allow")

    error: str = Field(description="A stable code: body_too_large, unparseable_transcript, …")
    message: str = Field(description="What went wrong, in a sentence.")


class SlotFiguresOut(Schema):
    slot: str
    observations: int | None
    transcripts_fired: int | None
    of_transcripts: int | None
    change_rate: float | None
    measured: bool
    precision_note: str


class SchemaOut(Schema):
    name: str
    summary: str
    slots: list[str]
    digest: str
    measured: bool
    note: str
    slot_figures: list[SlotFiguresOut]
    measurement: dict[str, Any]


class SchemasOut(Schema):
    schemas: list[SchemaOut]


class ExamplesOut(Schema):
    read_path_example: dict[str, Any] = Field(description="A body for POST /api/compile.")
    write_path_example: dict[str, Any] = Field(description="A body for POST /api/compile.")
    sources: dict[str, str]


class InstructionIn(Schema):
    model_config = ConfigDict(extra="forbid", json_schema_extra=SCHEMA_OR_SLOTS)

    entity_schema: SchemaName | None = None
    slots: list[str] | None = None


class InstructionOut(Schema):
    instruction: str
    slots: list[str]
    chars: int


class HealthOut(Schema):
    status: Literal["ok", "unavailable"]
    compiler: str
    database: Literal["ok", "unavailable"]


class LiveOut(Schema):
    status: Literal["ok"]
    compiler: str

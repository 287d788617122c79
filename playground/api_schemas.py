"""Input and output shapes of the API, kept apart so output never echoes input-only fields.

The allowed values of ``mode`` and the policies are the compiler's own tuples,
so the OpenAPI document and the compiler cannot disagree.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from ninja import Field, Schema
from pydantic import BaseModel, ConfigDict, WrapValidator

from compiler.declare import POLICIES
from compiler.emit import MODES

Mode = Literal[MODES]  # type: ignore[valid-type]
Policy = Literal[POLICIES]  # type: ignore[valid-type]

CURL_TRANSCRIPT = "user: deliver to Tower B\nuser: actually use Gate 2, code 4921"


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

    Example:
        >>> CompileOptions.model_validate({"teach_protocol": "false"}).teach_protocol
        False
    """

    # A plain pydantic model: ninja's Schema adds a root validator for ORM objects that
    # costs more than validating the whole body; a body is never an ORM object here.
    model_config = ConfigDict(extra="forbid")

    mode: Mode = Field("compact", description="compact, or cache_friendly to keep the prefix.")
    entity_schema: str | None = Field(
        None, description="A shipped schema (see /api/schemas). Without one, no state is tracked."
    )
    invariants: list[str] = Field(default_factory=list, description="Rules restated once.")
    recall_query: str | None = Field(None, description="Recall a retired turn by words.")
    teach_protocol: bool = Field(False, description="Add the state-protocol instruction.")
    declaration_policy: Policy = Field("flag", description="Off-schema declared keys.")
    value_policy: Policy = Field("flag", description="Declared values of the wrong shape.")


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


class CompileIn(CompileOptions, History):
    """A history and the options to compile it with (pydantic lists History's fields first)."""


class CompileOut(Schema):
    compiled_messages: list[dict[str, Any]]
    telemetry: dict[str, Any]
    parse_warnings: list[str]


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
    model_config = ConfigDict(extra="forbid")

    entity_schema: str | None = None
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

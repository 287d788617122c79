"""contextgc: a deterministic context compiler for AI agent transcripts.

No model call, no network, no runtime dependency. Same input, same output.

The API is ``compile_messages`` / ``compile_transcript`` / ``run``, the schemas
(``load_schema``, ``list_schemas``, ``schema_summary``), ``StateDAG``, ``patch_openai``
and the typed errors. The names after them are the pieces the site and the labelling
app reuse: reading corpora and messages, the layout modes and declaration policies,
token counters, the bill of a loop's calls under prefix caching (and the cached rate
``cache_friendly`` assumes by default), and the classifier's and the register's shapes.
"""

from compiler.compact.checkpoints import DEFAULT_CACHED_RATE
from compiler.engine import compile_messages, compile_transcript, run
from compiler.errors import CompilerError, OptionError, SchemaError, TranscriptError
from compiler.facts import Provenance
from compiler.layout import (
    MODES,
    Account,
    Bill,
    Call,
    CharEstimator,
    ExactCounter,
    Meter,
    PriceModel,
    bill,
    message_tokens,
    price_model,
    render_message,
    replay,
    strip_compiled_one,
)
from compiler.openai import patch_openai
from compiler.protocol import POLICIES, normalise_key, render_instruction
from compiler.protocol.protocol import protocol as parse_declaration
from compiler.read import (
    Message,
    canonical_dumps,
    content_text,
    formats_many,
    message_from_dict,
    message_to_dict,
)
from compiler.read.formats import formats
from compiler.state import (
    Entry,
    Kind,
    Schema,
    StateDAG,
    argument_at,
    iso_date,
    list_schemas,
    load_schema,
    looks_like_machine_output,
    satisfies,
    schema_summary,
)
from compiler.state import retirement_violations as get_retirement_violations

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_CACHED_RATE",
    "MODES",
    "POLICIES",
    "Account",
    "Bill",
    "Call",
    "CharEstimator",
    "CompilerError",
    "Entry",
    "ExactCounter",
    "Kind",
    "Message",
    "Meter",
    "OptionError",
    "PriceModel",
    "Provenance",
    "Schema",
    "SchemaError",
    "StateDAG",
    "TranscriptError",
    "argument_at",
    "bill",
    "canonical_dumps",
    "compile_messages",
    "compile_transcript",
    "content_text",
    "formats",
    "formats_many",
    "get_retirement_violations",
    "iso_date",
    "list_schemas",
    "load_schema",
    "looks_like_machine_output",
    "message_from_dict",
    "message_to_dict",
    "message_tokens",
    "normalise_key",
    "parse_declaration",
    "patch_openai",
    "price_model",
    "render_instruction",
    "render_message",
    "replay",
    "run",
    "satisfies",
    "schema_summary",
    "strip_compiled_one",
]

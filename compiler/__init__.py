"""contextgc: a deterministic context compiler for AI agent transcripts.

No model call, no network, no runtime dependency. Same input, same output.
"""

from compiler.engine import compile_messages, compile_transcript, run
from compiler.errors import CompilerError, OptionError, SchemaError, TranscriptError
from compiler.openai import patch_openai
from compiler.state.retire import retirement_violations as get_retirement_violations
from compiler.state.schema import list_schemas, load_schema, schema_summary
from compiler.state.statedag import StateDAG

__version__ = "0.1.0"

__all__ = [
    "CompilerError",
    "OptionError",
    "SchemaError",
    "StateDAG",
    "TranscriptError",
    "compile_messages",
    "compile_transcript",
    "get_retirement_violations",
    "list_schemas",
    "load_schema",
    "patch_openai",
    "run",
    "schema_summary",
]

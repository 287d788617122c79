"""What the conversation settled on: each message classified (speech, machine output, an
options menu, a tool call), values read from speech by the schema's patterns (the read
path) and from tool calls (the action path), folded into the register (last write wins,
pins, revokes, unsure, caps, entities), and the turns whose every fact was superseded
retired. Schemas, value contracts, dates and the literal prefilters that keep the patterns
cheap live here too, as does ``StateDAG``, the register fed turn by turn.
"""

from compiler.state.classify import Kind, classify_next, looks_like_machine_output
from compiler.state.contracts import satisfies
from compiler.state.dates import iso_date
from compiler.state.extract import argument_at, extract_message, extract_parts
from compiler.state.prefilter import (
    admits,
    ascii_letters,
    checking_order,
    fold,
    required_literals,
)
from compiler.state.register import Entry, Refusal, Register, RegisterFold
from compiler.state.retire import Retired, retirement_violations
from compiler.state.schema import Schema, list_schemas, load_schema, schema_summary
from compiler.state.starts import (
    anchored_finditer,
    leading_literals,
)
from compiler.state.statedag import StateDAG

__all__ = [
    "Entry",
    "Kind",
    "Refusal",
    "Register",
    "RegisterFold",
    "Retired",
    "Schema",
    "StateDAG",
    "admits",
    "anchored_finditer",
    "argument_at",
    "ascii_letters",
    "checking_order",
    "classify_next",
    "extract_message",
    "extract_parts",
    "fold",
    "iso_date",
    "leading_literals",
    "list_schemas",
    "load_schema",
    "looks_like_machine_output",
    "required_literals",
    "retirement_violations",
    "satisfies",
    "schema_summary",
]

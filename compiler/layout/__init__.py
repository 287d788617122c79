"""The compiled context laid out: the state header, the register and the invariants placed
by mode (``compact`` or ``cache_friendly``), retired turns recalled by a lexical query,
and the telemetry and token counts that say what one compile did.
"""

from compiler.layout.emit import (
    MODES,
    REGISTER_MARKER,
    STATE_MARKER,
    STRIPPED_ROLES,
    Emitted,
    Recall,
    declared_in_header,
    strip_compiled_one,
)
from compiler.layout.telemetry import message_tokens
from compiler.layout.tokens import CharEstimator, ExactCounter, resolve_counter

__all__ = [
    "MODES",
    "REGISTER_MARKER",
    "STATE_MARKER",
    "STRIPPED_ROLES",
    "CharEstimator",
    "Emitted",
    "ExactCounter",
    "Recall",
    "declared_in_header",
    "message_tokens",
    "resolve_counter",
    "strip_compiled_one",
]

"""The compiled context laid out: the state header, the register and the invariants placed
by mode (``compact`` or ``cache_friendly``), retired turns recalled by a lexical query,
the telemetry and token counts that say what one compile did, and the bill of an agent
loop's calls under a provider's prefix caching.
"""

from compiler.layout.billing import (
    Account,
    Bill,
    Breakpoints,
    Call,
    Measure,
    Meter,
    PriceModel,
    Provider,
    bill,
    price_model,
    render_message,
    replay,
)
from compiler.layout.emit import (
    MODES,
    STATE_MARKER,
    STRIPPED_ROLES,
    Emitted,
    Recall,
    declared_in_header,
    strip_compiled_one,
)
from compiler.layout.marks import mark_cache_breakpoint
from compiler.layout.notes import CHANGES_MARKER, REGISTER_MARKER
from compiler.layout.telemetry import message_tokens
from compiler.layout.tokens import CharEstimator, ExactCounter, resolve_counter

__all__ = [
    "CHANGES_MARKER",
    "MODES",
    "REGISTER_MARKER",
    "STATE_MARKER",
    "STRIPPED_ROLES",
    "Account",
    "Bill",
    "Breakpoints",
    "Call",
    "CharEstimator",
    "Emitted",
    "ExactCounter",
    "Measure",
    "Meter",
    "PriceModel",
    "Provider",
    "Recall",
    "bill",
    "declared_in_header",
    "mark_cache_breakpoint",
    "message_tokens",
    "price_model",
    "render_message",
    "replay",
    "resolve_counter",
    "strip_compiled_one",
]

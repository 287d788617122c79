"""Compaction of tool payloads: each payload read by its content as JSON records, a listing,
test-runner output, a trace, a diff or long text, and cut to fewer characters with every
safety signal kept and every omission disclosed; a read that a later one replaced is
elided, and what another visible payload already shows is not repeated.
"""

from compiler.compact.checkpoints import Checkpoints
from compiler.compact.compact import (
    Compacted,
    compacts_longer_than,
    has_review_checklist,
    omit_review_checklist,
)
from compiler.compact.read_keys import next_read_key
from compiler.compact.repeats import (
    Repeat,
    drop_repeated_status,
    first_shown,
    inner_values,
    json_values,
    nested_fields,
    status_values,
    write_pointers,
)
from compiler.compact.safety import has_safety_signal
from compiler.compact.stale import (
    elide,
    elide_record,
    fresh_payloads,
    replaced_reads,
)

__all__ = [
    "Checkpoints",
    "Compacted",
    "Repeat",
    "compacts_longer_than",
    "drop_repeated_status",
    "elide",
    "elide_record",
    "first_shown",
    "fresh_payloads",
    "has_review_checklist",
    "has_safety_signal",
    "inner_values",
    "json_values",
    "nested_fields",
    "next_read_key",
    "omit_review_checklist",
    "replaced_reads",
    "status_values",
    "write_pointers",
]

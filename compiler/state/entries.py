"""What the register folds into: the entries a slot held, the writes it refused, and the
register itself. They sit apart from the fold (``register``) so that the stages reading a
register (retire, emit, telemetry) name them without the fold's machinery.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from compiler.facts import Provenance

MAX_VALUE_CHARS = 512


@dataclass(frozen=True)
class Entry:
    """One value a slot held, from the turn that set it until it was replaced."""

    slot: str
    value: str
    turn: int
    provenance: Provenance
    supports: tuple[int, ...]
    superseded_by: int | None = None
    revoked_at: int | None = None
    pinned: bool = False
    unsure: bool = False

    @property
    def live(self) -> bool:
        return self.superseded_by is None and self.revoked_at is None


@dataclass(frozen=True)
class Conflict:
    slot: str
    kept: Entry
    refused_value: str
    refused_turn: int
    refused_provenance: Provenance


@dataclass(frozen=True)
class Refusal:
    """A write the register would not apply, and why."""

    slot: str
    turn: int
    kind: str
    reason: str
    value: str | None = None
    dropped: bool | None = None


@dataclass(frozen=True)
class Register:
    """The folded state: every entry ever set, and what is live now."""

    history: tuple[Entry, ...]
    active: tuple[Entry, ...]
    dropped_over_limit: tuple[str, ...] = ()
    truncated_values: tuple[str, ...] = ()
    conflicts: tuple[Conflict, ...] = ()
    refusals: tuple[Refusal, ...] = ()
    reaffirmations: int = 0
    revoked: tuple[str, ...] = field(default=())

    def shown_value(self, entry: Entry) -> str:
        """The value as the model receives it: capped at 512 characters."""
        if len(entry.value) <= MAX_VALUE_CHARS:
            return entry.value
        return entry.value[: MAX_VALUE_CHARS - 1] + "…"

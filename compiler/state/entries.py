"""What the register folds into: the entries a slot held, the writes it refused, and the
register itself. They sit apart from the fold (``register``) so that the stages reading a
register (retire, emit, telemetry) name them without the fold's machinery.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

from compiler.facts import Provenance
from compiler.state.dates import iso_date

MAX_VALUE_CHARS = 512


@dataclass(frozen=True)
class Entry:
    """One value a slot held, from the turn that set it until it was replaced. A slot
    the schema scopes by another (``scope``) holds a value per entity: ``entity`` is the
    value the entity slot held when this one was set (None: it held none)."""

    slot: str
    value: str
    turn: int
    provenance: Provenance
    supports: tuple[int, ...]
    superseded_by: int | None = None
    revoked_at: int | None = None
    pinned: bool = False
    unsure: bool = False
    entity: str | None = None

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
    """The folded state: every entry ever set, and what is live now: ``active``, one
    entry per slot, a scoped slot's for the current entity; ``others``, a scoped slot's
    live entries for the other entities (not those a tool call ended)."""

    history: tuple[Entry, ...]
    active: tuple[Entry, ...]
    dropped_over_limit: tuple[str, ...] = ()
    truncated_values: tuple[str, ...] = ()
    conflicts: tuple[Conflict, ...] = ()
    refusals: tuple[Refusal, ...] = ()
    reaffirmations: int = 0
    revoked: tuple[str, ...] = field(default=())
    others: tuple[Entry, ...] = ()
    scopes: tuple[tuple[str, str], ...] = ()  # scoped slot, its entity slot
    # indices into ``history`` of the entries a tool call starting a new entity displaced
    # (a booking of a new reservation): the old entity still exists, nothing replaced it
    displaced: tuple[int, ...] = ()

    def shown_value(self, entry: Entry) -> str:
        """The value as the model receives it: capped at 512 characters."""
        if len(entry.value) <= MAX_VALUE_CHARS:
            return entry.value
        return entry.value[: MAX_VALUE_CHARS - 1] + "…"


_DATE_CHARS = 30  # longer than any date ``iso_date`` reads ("September 30th, 2024")
_YEAR = re.compile(r"\d{4}")  # a date the register compares carries its year


def value_key(value: str) -> str:
    """What makes two values the same value: case and Unicode composition aside, and a
    date with its year however it is written (a date without one is compared as text:
    May 20 of which year is not for the register to guess).

    Example:
        >>> value_key("Zu\u0308rich") == value_key("ZÜRICH")
        True
        >>> value_key("May 13, 2024") == value_key("2024-05-13") != value_key("May 13")
        True
    """
    if len(value) <= _DATE_CHARS and _YEAR.search(value) is not None:
        date = iso_date(value)
        if date is not None:
            return date
    if value.isascii():
        return value.casefold()
    return unicodedata.normalize("NFC", value).casefold()

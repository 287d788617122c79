"""The shipped schemas' figures, read from their measurement files (``<name>.measurement.json``).

No number on the site is typed into a template: the overview, the console's
schema notes and ``GET /api/schemas`` all come from here, and here they come
from ``compiler.schema_summary``. A missing field shows as unknown, never as 0.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from compiler import list_schemas, schema_summary


@dataclass(frozen=True)
class SlotFigures:
    slot: str
    observations: int | None
    transcripts_fired: int | None
    of_transcripts: int | None
    change_rate: float | None
    judged: int | None
    correct: int | None
    units: int | None  # independent (family, turn, slot) units the judged rows make
    units_correct: int | None
    interval: tuple[float, float] | None  # over units when they are given, else rows
    unmeasured: str | None  # why precision is unmeasured, when it is

    @property
    def measured(self) -> bool:
        return self.unmeasured is None

    @property
    def precision_note(self) -> str:
        """``10/11 units judged correct (18 rows; 95% CI 62.3–98.4%)`` or why it is
        unmeasured. A block without units (an older or a custom schema) reads by rows."""
        if self.unmeasured is not None:
            return self.unmeasured
        details = []
        if self.units is not None and self.units_correct is not None:
            note = f"{self.units_correct}/{self.units} units judged correct"
            if self.judged != self.units:
                details.append(f"{self.judged} rows")
        else:
            note = f"{self.correct}/{self.judged} judged correct"
        if self.interval:
            low, high = self.interval
            details.append(f"95% CI {low * 100:.1f}–{high * 100:.1f}%")
        return f"{note} ({'; '.join(details)})" if details else note


@dataclass(frozen=True)
class SchemaFigures:
    name: str
    summary: str
    slots: tuple[SlotFigures, ...]
    corpus: tuple[str, ...]
    transcripts: int | None
    independent_units: int | None
    turns: int | None
    digest: str

    @property
    def measured_slots(self) -> int:
        return sum(1 for s in self.slots if s.measured)

    @property
    def note(self) -> str:
        """One line for the console: what it was fitted on, how much was judged."""
        if not self.corpus:
            return f"{self.name}: no measurement block; its extractions are unmeasured"
        return (
            f"{self.name}: fitted on {_count(self.transcripts)} real transcripts "
            f"({_count(self.turns)} turns); precision judged for "
            f"{self.measured_slots} of {len(self.slots)} slots"
        )


def _count(value: int | None) -> str:
    return "an unknown number of" if value is None else f"{value:,}"


def _int(value) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _interval(value) -> tuple[float, float] | None:
    if isinstance(value, list | tuple) and len(value) == 2:
        return float(value[0]), float(value[1])
    return None


def _slot(name: str, observed: dict, precision) -> SlotFigures:
    change = observed.get("change_rate") if isinstance(observed.get("change_rate"), dict) else {}
    rate = change.get("rate")
    judged = precision if isinstance(precision, dict) else {}
    if isinstance(precision, str):
        unmeasured = precision
    elif not judged:
        unmeasured = "unmeasured: no judged sample recorded"
    else:
        unmeasured = None
    return SlotFigures(
        slot=name,
        observations=_int(observed.get("observations")),
        transcripts_fired=_int(observed.get("transcripts_fired")),
        of_transcripts=_int(observed.get("of_transcripts")),
        change_rate=float(rate) if isinstance(rate, int | float) else None,
        judged=_int(judged.get("judged")),
        correct=_int(judged.get("correct")),
        units=_int(judged.get("units")),
        units_correct=_int(judged.get("units_correct")),
        interval=_interval(judged.get("wilson95")),
        unmeasured=unmeasured,
    )


def figures_of(summary: dict) -> SchemaFigures:
    """Figures from one ``schema_summary`` dict.

    Example:
        >>> f = figures_of({"name": "x", "slots": ["a"], "summary": "A. B.", "digest": "d",
        ...                 "measurement": {"corpus": ["c.json"], "transcripts": 3,
        ...                                 "slots": {"a": {"observations": 5}},
        ...                                 "precision": {"a": {"judged": 4, "correct": 4}}}})
        >>> f.slots[0].precision_note
        '4/4 judged correct'
        >>> f.note
        'x: fitted on 3 real transcripts (an unknown number of turns); precision judged for...'
    """
    measurement = summary.get("measurement") or {}
    observed = measurement.get("slots") if isinstance(measurement.get("slots"), dict) else {}
    precision = measurement.get("precision")
    precision = precision if isinstance(precision, dict) else {}
    corpus = measurement.get("corpus") if isinstance(measurement.get("corpus"), list) else []
    return SchemaFigures(
        name=summary["name"],
        summary=(summary.get("summary") or "").split(". ")[0].rstrip(".") + ".",
        slots=tuple(
            _slot(slot, observed.get(slot) or {}, precision.get(slot)) for slot in summary["slots"]
        ),
        corpus=tuple(str(c) for c in corpus),
        transcripts=_int(measurement.get("transcripts")),
        independent_units=_int(measurement.get("independent_units")),
        turns=_int(measurement.get("turns")),
        digest=summary.get("digest", ""),
    )


@cache
def shipped_figures() -> tuple[SchemaFigures, ...]:
    """Figures of every shipped schema, computed once per process."""
    return tuple(figures_of(schema_summary(name)) for name in list_schemas())


def figures_for(name: str) -> SchemaFigures | None:
    return next((f for f in shipped_figures() if f.name == name), None)


def schema_json(name: str) -> dict:
    """A shipped schema for ``GET /api/schemas``: slots, figures, and the raw block."""
    summary = schema_summary(name)
    figures = figures_of(summary)
    return {
        "name": figures.name,
        "summary": figures.summary,
        "slots": [s.slot for s in figures.slots],
        "digest": figures.digest,
        "measured": summary["measured"],
        "note": figures.note,
        "slot_figures": [
            {
                "slot": s.slot,
                "observations": s.observations,
                "transcripts_fired": s.transcripts_fired,
                "of_transcripts": s.of_transcripts,
                "change_rate": s.change_rate,
                "measured": s.measured,
                "precision_note": s.precision_note,
            }
            for s in figures.slots
        ],
        "measurement": summary["measurement"],
    }

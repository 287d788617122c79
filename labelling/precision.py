"""Precision from the stored labels, with an honest interval.

Two denominators, always side by side:

- **rows**: every judged label (``unclear`` is counted, never judged);
- **independent units**: one per (transcript family, turn, slot). Trajectories of
  one issue (nebius ``<instance>#<n>``) or trials of one task (tau-bench
  ``task<id>-trial<n>``) are one family; reading the same turn of the same issue
  twice is one piece of evidence, and any incorrect row sinks its unit.

The interval is Wilson's at 95% over units. A warning goes with a small n (under 20
units) or a wide interval (over 30 points), because then the interval is the finding
and the point estimate is not.

Label drift: every label's transcript is compiled again with the current compiler
and schema. A label whose extraction (slot, turn, value) no longer comes out is
listed with its verdict — kept as a regression record, never silently dropped — and
is left out of the figures, which describe what the compiler does now.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

import compiler
from compiler import SchemaError, load_schema
from labelling.bench.stats import wilson
from labelling.compiling import reproduced_keys
from labelling.models import Corpus, Label, VerdictChoice

SMALL_N = 20
WIDE = 0.30


@dataclass
class Figure:
    """Precision of one slot (or all of them).

    Example:
        >>> f = Figure("cabin_class")
        >>> for unit, verdict in [(("task1", 3, "cabin_class"), "correct"),
        ...                       (("task1", 3, "cabin_class"), "incorrect"),
        ...                       (("task2", 5, "cabin_class"), "correct"),
        ...                       (("task2", 7, "cabin_class"), "unclear")]:
        ...     f.add(unit, verdict)
        >>> f.rows, f.unclear, f.unit_n, f.unit_correct, f.unit_precision
        (3, 1, 2, 1, 0.5)
        >>> [round(x, 3) for x in f.interval]
        [0.095, 0.905]
    """

    name: str
    correct: int = 0
    incorrect: int = 0
    unclear: int = 0
    units: dict = field(default_factory=dict)  # unit key → every judged row correct?
    # the verdict that counts as a hit: ``correct`` for extractions, ``safe_to_drop`` for
    # retired turns (``retirement_figure``)
    positive: str = VerdictChoice.CORRECT

    def add(self, unit: tuple, verdict: str) -> None:
        if verdict == VerdictChoice.UNCLEAR:
            self.unclear += 1
            return
        ok = verdict == self.positive
        self.correct += ok
        self.incorrect += not ok
        self.units[unit] = self.units.get(unit, True) and ok

    @property
    def rows(self) -> int:
        return self.correct + self.incorrect

    @property
    def row_precision(self) -> float | None:
        return self.correct / self.rows if self.rows else None

    @property
    def unit_n(self) -> int:
        return len(self.units)

    @property
    def unit_correct(self) -> int:
        return sum(self.units.values())

    @property
    def unit_precision(self) -> float | None:
        return self.unit_correct / self.unit_n if self.unit_n else None

    @property
    def interval(self) -> tuple[float, float] | None:
        return wilson(self.unit_correct, self.unit_n)

    @property
    def warnings(self) -> list[str]:
        out = []
        if self.unit_n == 0:
            return ["nothing judged: no precision can be stated"]
        if self.rows > self.unit_n:
            out.append(
                f"n is inflated: {self.rows} rows collapse to {self.unit_n} independent units"
            )
        if self.unit_n < SMALL_N:
            out.append(
                f"n is small ({self.unit_n} < {SMALL_N} units): read the interval, not the point"
            )
        low, high = self.interval
        if high - low > WIDE:
            out.append(f"the 95% interval is {round(100 * (high - low))} points wide")
        return out


@dataclass
class Report:
    corpus: Corpus
    schema_name: str
    schema_digest: str | None
    compiler_version: str
    labels: int
    overall: Figure
    slots: list[Figure]
    drifted: list[Label]
    notes: list[str]

    def as_dict(self) -> dict:
        """The figures as plain data (the command's ``--json``)."""

        def figure(f: Figure) -> dict:  # ``figure_data``, under this command's names
            data = figure_data(f)
            interval = data.pop("wilson95")
            return {"slot": data.pop("name"), **data, "ci95": interval}

        return {
            "corpus": self.corpus.name,
            "schema": self.schema_name,
            "schema_digest": self.schema_digest,
            "compiler_version": self.compiler_version,
            "labels": self.labels,
            "overall": figure(self.overall),
            "slots": [figure(f) for f in self.slots],
            "drifted": [
                {
                    "transcript": x.transcript.external_id,
                    "slot": x.slot,
                    "turn": x.turn,
                    "value": x.value,
                    "verdict": x.verdict,
                    "note": x.note,
                }
                for x in self.drifted
            ],
            "notes": self.notes,
        }


def unit_of(label: Label) -> tuple[str, int, str]:
    return (label.transcript.family, label.turn, label.slot)


def precision_report(corpus: Corpus, schema_name: str) -> Report:
    labels = list(
        Label.objects.filter(transcript__corpus=corpus, schema_name=schema_name)
        .select_related("transcript")
        .order_by("transcript__position", "slot", "turn", "value")
    )
    notes: list[str] = []
    try:
        schema = load_schema(schema_name)
    except (SchemaError, KeyError, FileNotFoundError):
        schema = None
        notes.append(f"schema {schema_name!r} no longer ships: every label is listed as drifted")
    current, drifted = _split_by_reproduction(labels, schema)
    overall, slots = Figure("all slots"), {}
    for label in current:
        overall.add(unit_of(label), label.verdict)
        slots.setdefault(label.slot, Figure(label.slot)).add(unit_of(label), label.verdict)
    digests = sorted({x.schema_digest for x in labels})
    if schema is not None and any(d != schema.digest for d in digests):
        notes.append(
            f"labels were made under schema digests {', '.join(digests)}; "
            f"the current digest is {schema.digest}"
        )
    return Report(
        corpus=corpus,
        schema_name=schema_name,
        schema_digest=schema.digest if schema else None,
        compiler_version=compiler.__version__,
        labels=len(labels),
        overall=overall,
        slots=[slots[name] for name in sorted(slots)],
        drifted=drifted,
        notes=notes,
    )


def _split_by_reproduction(labels: list[Label], schema) -> tuple[list[Label], list[Label]]:
    if schema is None:
        return [], labels
    by_transcript = defaultdict(list)
    for label in labels:
        by_transcript[label.transcript_id].append(label)
    current, drifted = [], []
    for group in by_transcript.values():
        keys = reproduced_keys(group[0].transcript, schema)
        for label in group:
            (current if (label.slot, label.turn, label.value) in keys else drifted).append(label)
    order = {id(x): i for i, x in enumerate(labels)}
    return sorted(current, key=lambda x: order[id(x)]), sorted(drifted, key=lambda x: order[id(x)])


def retirement_figure(documents: list[dict], name: str = "retired turns") -> Figure:
    """Retirement precision (safe to drop / judged) over retirement label files: a unit is
    one turn of one transcript family of one corpus (trials of one task retiring the same
    turn are one piece of evidence), and any ``still_needed`` row sinks its unit.

    Example:
        >>> row = lambda t, turn, v: {"family": t, "turn": turn, "verdict": v}
        >>> doc = {"corpus": "c", "labels": [row("task1", 3, "safe_to_drop"),
        ...        row("task1", 3, "safe_to_drop"), row("task2", 5, "still_needed")]}
        >>> f = retirement_figure([doc])
        >>> f.rows, f.correct, f.unit_n, f.unit_correct
        (3, 2, 2, 1)
    """
    figure = Figure(name, positive=VerdictChoice.SAFE_TO_DROP)
    for document in documents:
        for row in document["labels"]:
            figure.add((document["corpus"], row["family"], row["turn"]), row["verdict"])
    return figure


def retirement_figures(documents: list[dict]) -> list[Figure]:
    """The figure over every file, then one per schema (the corpora of one domain: travel
    for airline, logistics for retail, coding)."""
    schemas = sorted({d["schema"] for d in documents})
    return [retirement_figure(documents, "all corpora")] + [
        retirement_figure([d for d in documents if d["schema"] == s], f"{s} schema")
        for s in schemas
    ]


def figure_data(f: Figure) -> dict:
    """One figure as plain data, in the shape the corpus report's precision rows take
    (``wilson95`` is Wilson's 95% interval over units)."""
    return {
        "name": f.name,
        "rows": f.rows,
        "correct": f.correct,
        "incorrect": f.incorrect,
        "unclear": f.unclear,
        "row_precision": f.row_precision,
        "units": f.unit_n,
        "units_correct": f.unit_correct,
        "unit_precision": f.unit_precision,
        "wilson95": list(f.interval) if f.unit_n else None,
        "warnings": f.warnings,
    }

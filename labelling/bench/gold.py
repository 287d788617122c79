"""The one gold scorer: a register value against the gold actions of a tau-bench task.

tau-bench airline records carry the task's gold actions (``info.task.actions``).
Per transcript and per slot the gold actions give a value for, the FINAL register
value is a match (equal to any gold value after normalising case, separators and
dates), a mismatch, or missing. The benchmark (``tests/bench/measure.py``), the
schema fit (``tests/bench/fit_schemas.py``), the corpus report
(``labelling.measurement.measure``) and the records scorer
(``labelling.bench.records``) all score with this module.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Protocol

import compiler

# Gold action argument → register slot; ``flights[]`` items carry two more.
GOLD_ARGS = {
    "cabin": "cabin_class",
    "reservation_id": "active_reservation",
    "origin": "origin_airport",
    "destination": "destination_airport",
    "user_id": "passenger_id",
    "date": "flight_date",  # search_direct_flight / search_onestop_flight
}
GOLD_FLIGHT_ARGS = {"flight_number": "flight_number", "date": "flight_date"}
GOLD_SLOTS = (
    "active_reservation",
    "cabin_class",
    "destination_airport",
    "flight_date",
    "flight_number",
    "origin_airport",
    "passenger_id",
)
VERDICTS = ("match", "mismatch", "missing")
# The corpus's "current time" is May 2024; a date said without a year is scored as
# 2024. That is an assumption of the scorer, not of the schema.
CORPUS_YEAR = 2024


class Scored(Protocol):
    """A transcript as the scorer reads it (``corpus.Transcript`` is one)."""

    ident: str
    gold: dict[str, frozenset[str]] | None


class Registered(Protocol):
    """A compile's outcome as the scorer reads it (``compare.Outcome`` is one)."""

    register: dict


def gold_values(record) -> dict[str, frozenset[str]] | None:
    """Slot → every value the gold actions give it; None without gold actions.

    Example:
        >>> flights = [{"flight_number": "HAT1", "date": "2024-05-20"},
        ...            {"flight_number": "HAT2", "date": "2024-05-20"}]
        >>> action = {"name": "book", "kwargs": {"cabin": "economy", "flights": flights}}
        >>> gold = gold_values({"info": {"task": {"actions": [action]}}})
        >>> for slot, values in gold.items():
        ...     print(slot, sorted(values))
        cabin_class ['economy']
        flight_date ['2024-05-20']
        flight_number ['HAT1', 'HAT2']
        >>> gold_values({"traj": []}) is None
        True
    """
    actions = _dig(record, "info", "task", "actions")
    if not isinstance(actions, list):
        return None
    gold: dict[str, set[str]] = {}
    for action in actions:
        kwargs = _dig(action, "kwargs")
        if not isinstance(kwargs, dict):
            continue
        _gather(gold, kwargs, GOLD_ARGS)
        for flight in kwargs.get("flights") or ():
            if isinstance(flight, dict):
                _gather(gold, flight, GOLD_FLIGHT_ARGS)
    return {slot: frozenset(values) for slot, values in sorted(gold.items())}


def _dig(value, *keys):
    for key in keys:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


def _gather(gold: dict[str, set[str]], kwargs: dict, mapping: dict[str, str]) -> None:
    for arg, slot in mapping.items():
        value = kwargs.get(arg)
        if isinstance(value, str | int) and not isinstance(value, bool) and str(value).strip():
            gold.setdefault(slot, set()).add(str(value))


# -- normalising values for the gold comparison -----------------------------


def iso_date(text: str) -> str | None:
    """``text`` as an ISO date if it is one, a date without a year read as the corpus's.

    Example:
        >>> [iso_date(t) for t in ("May 20", "May 20, 2024", "2024-05-20", "20th of May")]
        ['2024-05-20', '2024-05-20', '2024-05-20', '2024-05-20']
        >>> iso_date("Sept. 3rd"), iso_date("5/20/2025")
        ('2024-09-03', '2025-05-20')
        >>> iso_date("May 32"), iso_date("economy")
        (None, None)
    """
    return compiler.iso_date(text, year=CORPUS_YEAR)


def normalise(slot: str, value: str) -> str:
    """The form two values of ``slot`` are compared in.

    Example:
        >>> normalise("cabin_class", "Basic_Economy"), normalise("cabin_class", "basic economy")
        ('basic economy', 'basic economy')
        >>> normalise("cabin_class", "Business class")
        'business'
        >>> normalise("flight_date", "May 20th"), normalise("flight_number", " hat136. ")
        ('2024-05-20', 'hat136')
    """
    text = str(value).strip().strip(".,;:*`'\"()").strip()
    if slot == "flight_date" and iso_date(text):
        return iso_date(text)
    text = " ".join(re.split(r"[\s_-]+", text.casefold())).strip()
    if slot == "cabin_class":
        text = text.removesuffix(" class")
    return text


def verdict(slot: str, value, golds: frozenset[str]) -> str:
    """match, mismatch or missing, for one register value against its gold values.

    Example:
        >>> verdict("flight_date", "May 20", frozenset({"2024-05-20"}))
        'match'
        >>> verdict("flight_number", "HAT137", frozenset({"HAT136"}))
        'mismatch'
        >>> verdict("cabin_class", None, frozenset({"economy"})), verdict("cabin_class", " ", {"x"})
        ('missing', 'missing')
    """
    if value is None or not str(value).strip():
        return "missing"
    wanted = {normalise(slot, g) for g in golds}
    return "match" if normalise(slot, value) in wanted else "mismatch"


def gold_figures(outcomes: Sequence[Registered], corpus: Sequence[Scored]) -> dict:
    """Per-slot and total match / mismatch / missing, and every mismatch.

    ``outcomes[i].register`` is the final register of ``corpus[i]``, whose ``gold``
    is what ``gold_values`` read (None: not scored).

    Example:
        >>> from types import SimpleNamespace as NS
        >>> corpus = [NS(ident="t1", gold={"cabin_class": frozenset({"economy"}),
        ...                                "flight_number": frozenset({"HAT1"})}),
        ...           NS(ident="t2", gold=None)]
        >>> outcomes = [NS(register={"cabin_class": "Economy", "flight_number": "HAT2"}),
        ...             NS(register={})]
        >>> got = gold_figures(outcomes, corpus)
        >>> got["total"], got["slots"]["cabin_class"]
        ({'match': 1, 'mismatch': 1, 'missing': 0}, {'match': 1, 'mismatch': 0, 'missing': 0})
        >>> got["mismatches"]
        [{'transcript': 't1', 'slot': 'flight_number', 'register': 'HAT2', 'gold': ['HAT1']}]
    """
    slots = {slot: dict.fromkeys(VERDICTS, 0) for slot in GOLD_SLOTS}
    mismatches = []
    for transcript, outcome in zip(corpus, outcomes, strict=True):
        for slot, golds in (transcript.gold or {}).items():
            value = outcome.register.get(slot)
            found = verdict(slot, value, golds)
            slots[slot][found] += 1
            if found == "mismatch":
                mismatches.append(
                    {
                        "transcript": transcript.ident,
                        "slot": slot,
                        "register": value,
                        "gold": sorted(golds),
                    }
                )
    total = {v: sum(counts[v] for counts in slots.values()) for v in VERDICTS}
    return {"slots": slots, "total": total, "mismatches": mismatches}

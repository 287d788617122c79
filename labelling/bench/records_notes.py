"""What a person reading a contradicted register entry would want pointed out.

``labelling.bench.records`` scores every entry against the environment's records; an
entry that comes out contradicted carries these notes beside it. Each is a mechanical
fact, never a verdict: the entry stays contradicted.

- ``unapplied``: the agent made a committing tool call with the value, and the record
  that call returned still holds the old one (the environment did not apply it);
- ``gold_agrees``: the task's gold actions give this value;
- ``leg_airport``: an airport of one leg of a reservation the conversation showed, not
  an endpoint of the trip.
"""

from __future__ import annotations

import json

from compiler import Entry, argument_at
from labelling.bench.gold import normalise, verdict
from labelling.bench.records_db import FIELDS, Database, Kind, Note, Snapshot
from labelling.bench.records_values import same


def notes(entry: Entry, messages, states: list[Snapshot], schema, gold, db: Database):
    """What a person reading a contradicted entry would want pointed out.

    Each note is a mechanical fact, never a verdict: the entry stays contradicted.
    """
    found = []
    if _unapplied(entry, messages, states, schema, db):
        found.append(Note.UNAPPLIED)
    if (
        gold
        and entry.slot in gold
        and verdict(entry.slot, entry.value, gold[entry.slot]) == "match"
    ):
        found.append(Note.GOLD_AGREES)
    if entry.slot in ("origin_airport", "destination_airport"):
        legs = {
            normalise(entry.slot, str(f.get(end)))
            for s in states
            if s.kind is Kind.RESERVATION
            for f in s.record.get("flights") or ()
            for end in ("origin", "destination")
        }
        if normalise(entry.slot, entry.value) in legs:
            found.append(Note.LEG_AIRPORT)
    return tuple(found)


def _unapplied(entry: Entry, messages, states: list[Snapshot], schema, db: Database) -> bool:
    """A committing call at or after the entry's turn carried its value, and the record
    the call returned does not hold it."""
    slot = next((s for s in schema.slots if s.name == entry.slot), None)
    spec = FIELDS.get(schema.name, {}).get(entry.slot)
    if slot is None or spec is None:
        return False
    committing = {a.tool: a.argument for a in slot.actions if a.commits}
    by_turn = {s.turn: s for s in states if s.turn >= 0}
    for turn in range(entry.turn, len(messages)):
        for call in messages[turn].tool_calls:
            if call.name not in committing:
                continue
            given = argument_at(_json(call.arguments), committing[call.name])
            if given is None or not same(entry.slot, entry.value, given):
                continue
            answer = by_turn.get(_answer_turn(messages, turn, call.id))
            if answer is not None:
                recorded = spec.values(answer, db)
                if recorded and not any(same(entry.slot, entry.value, r) for r in recorded):
                    return True
    return False


def _answer_turn(messages, turn: int, call_id: str | None) -> int:
    for at in range(turn + 1, len(messages)):
        if messages[at].role != "tool":
            break
        if call_id is None or messages[at].tool_call_id == call_id:
            return at
    return -1


def _json(text: str):
    try:
        return json.loads(text) if text else None
    except ValueError:
        return None

"""Ground truth that is not a person: the environment's own records.

A tau-bench conversation runs against a database (``<corpora>/<domain>/db/``), and
every tool result inside it is a read of that database at that moment. Together
they are a timeline of what was booked, ordered or changed, held aside from the
compiler under test: the compiler never reads a machine payload, the scorer reads
nothing else.

    score_records(corpora_dir, "airline") -> a JSON-ready report

Each register history entry (every value any slot held, with the turn that set it
and its provenance) lands in one bucket:

- **corroborated**: the value equals the slot's field in the record state just
  before its turn, or in any state recorded at or after it (the agent applies a
  change, the next tool result shows it);
- **contradicted**: it matches none of them, and some record at or after the turn
  holds the slot's field, so the outcome was seen and disagrees;
- **unverifiable**: it matches nothing and no record at or after the turn holds
  the field (the conversation ended before the change could show), or no record
  in the conversation holds the field at all: silence, not disagreement;
- **unchecked**: the slot has no record field.

The rate is corroborated over corroborated + contradicted, with its N and a 95%
Wilson interval; unverifiable is reported beside it, never folded in. What a
record state is: the database entry of every reservation, order or user the
conversation touched (read in a tool result or named in a tool-call argument),
at turn -1, and every tool result that is such a record, at its own turn.

What means the same is compared as the same (``labelling.bench.records_values``): dates
in any spelling, cabins with spaces or underscores, a payment method id
(``credit_card_4421486``) against its kind and card brand ("credit card", "Visa"), an
address on its house number and street only. The final register is also checked
against the task's gold actions (``info.task.actions``, scored by
``labelling.bench.gold``), an independent statement of what the customer wanted.

A record says a value was real. It cannot say the sentence meant it: a
hypothetical that happens to name the booked cabin scores corroborated.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compiler import Entry, Message, formats_many, run
from labelling.bench.gold import gold_values
from labelling.bench.records_db import (
    FIELDS,
    NO_FIELD,
    NO_RECORD_AFTER,
    NO_RECORD_FIELD,
    Bucket,
    Database,
    Domain,
    Field,
    Kind,
    Note,
    Snapshot,
)
from labelling.bench.records_notes import notes
from labelling.bench.records_values import ADDRESS_SLOTS, same, street_line_only

QUOTE_CHARS = 600


# -- the snapshots of the database a conversation shows ---------------------------


_ID_ARGUMENTS = {"reservation_id": Kind.RESERVATION, "order_id": Kind.ORDER, "user_id": Kind.USER}


def snapshots(messages: tuple[Message, ...], db: Database) -> list[Snapshot]:
    """Every record state the conversation shows, and the database state of each
    record it touched, in turn order.

    Example:
        >>> db = Database.of({Kind.RESERVATION: {"ABC123": {"reservation_id": "ABC123",
        ...     "flights": [], "cabin": "economy"}}, Kind.USER: {}})
        >>> after = {"reservation_id": "ABC123", "flights": [], "cabin": "business"}
        >>> msgs = (Message("user", "change ABC123"), Message("tool", json.dumps(after)))
        >>> [(s.turn, s.kind.value, s.key, s.record["cabin"]) for s in snapshots(msgs, db)]
        [(-1, 'reservation', 'ABC123', 'economy'), (1, 'reservation', 'ABC123', 'business')]
    """
    seen: list[Snapshot] = []
    touched: set[tuple[Kind, str]] = set()
    for turn, message in enumerate(messages):
        for call in message.tool_calls:
            touched.update(_named_ids(call.arguments))
        if message.role != "tool":
            continue
        found = _record_of(message.text, db)
        if found is None:
            if message.text.strip() in db.records.get(Kind.USER, {}):
                touched.add((Kind.USER, message.text.strip()))  # a user id looked up
            continue
        kind, key, record = found
        seen.append(Snapshot(turn, kind, key, record))
        touched.add((kind, key))
    initial = [
        Snapshot(-1, k, key, db.get(k, key)) for k, key in touched if db.get(k, key) is not None
    ]
    return sorted(initial, key=lambda s: (s.kind, s.key)) + seen


def _named_ids(arguments: str) -> Iterable[tuple[Kind, str]]:
    try:
        parsed = json.loads(arguments) if arguments else None
    except ValueError:
        return ()
    if not isinstance(parsed, dict):
        return ()
    return [
        (kind, parsed[name])
        for name, kind in _ID_ARGUMENTS.items()
        if isinstance(parsed.get(name), str)
    ]


def _record_of(text: str, db: Database) -> tuple[Kind, str, dict] | None:
    if not text.lstrip().startswith("{"):
        return None
    try:
        record = json.loads(text)
    except ValueError:
        return None
    if not isinstance(record, dict):
        return None
    if isinstance(record.get("reservation_id"), str) and "flights" in record:
        return Kind.RESERVATION, record["reservation_id"], record
    if isinstance(record.get("order_id"), str) and "items" in record:
        return Kind.ORDER, record["order_id"], record
    if "payment_methods" in record and isinstance(record.get("email"), str):
        # A user record does not carry its own id; the database knows it by e-mail.
        key = db.user_by_email.get(record["email"].casefold(), f"email:{record['email']}")
        return Kind.USER, key, record
    return None


# -- scoring ----------------------------------------------------------------------


@dataclass(frozen=True)
class Seen:
    """The slot's values in one record state."""

    turn: int
    source: str
    record: str
    values: tuple[str, ...]


@dataclass(frozen=True)
class Scored:
    """One register history entry and what the records say about it."""

    transcript: str
    slot: str
    value: str
    turn: int
    provenance: str
    live: bool
    bucket: Bucket
    reason: str = ""
    matched: Seen | None = None
    before: tuple[Seen, ...] = ()
    after: tuple[Seen, ...] = ()
    partial: bool = False
    quote: tuple[dict, ...] = ()
    notes: tuple[Note, ...] = ()


def score_entry(
    entry: Entry, states: list[Snapshot], db: Database, schema: str
) -> tuple[Bucket, str, Seen | None, tuple[Seen, ...], tuple[Seen, ...]]:
    """The bucket of one entry, the reason, the state it matched, and the states used.

    Example:
        >>> from compiler import Provenance
        >>> db = Database.of({Kind.RESERVATION: {}, Kind.USER: {}})
        >>> booked = {"reservation_id": "R1", "flights": [], "cabin": "business"}
        >>> states = [Snapshot(7, Kind.RESERVATION, "R1", booked)]
        >>> entry = Entry("cabin_class", "Business", 3, Provenance.INFERRED, (3,))
        >>> score_entry(entry, states, db, "travel")[:2]
        (<Bucket.CORROBORATED: 'corroborated'>, '')
        >>> late = Entry("cabin_class", "economy", 9, Provenance.INFERRED, (9,))
        >>> score_entry(late, states, db, "travel")[:2]
        (<Bucket.UNVERIFIABLE: 'unverifiable'>, 'no record at or after the turn')
    """
    spec = FIELDS.get(schema, {}).get(entry.slot)
    if spec is None:
        return Bucket.UNCHECKED, NO_FIELD, None, (), ()
    latest: dict[tuple[Kind, str], Snapshot] = {}
    for state in states:
        if state.turn < entry.turn:
            latest[(state.kind, state.key)] = state
    before = _seen(latest.values(), spec, db)
    after = _seen((s for s in states if s.turn >= entry.turn), spec, db)
    for seen in (*before, *after):
        if any(same(entry.slot, entry.value, raw) for raw in seen.raw):
            return Bucket.CORROBORATED, "", seen.public, _public(before), _public(after)
    if after:
        return Bucket.CONTRADICTED, "", None, _public(before), _public(after)
    reason = NO_RECORD_AFTER if before else NO_RECORD_FIELD
    return Bucket.UNVERIFIABLE, reason, None, _public(before), ()


@dataclass(frozen=True)
class _Raw:
    public: Seen
    raw: tuple


def _seen(states: Iterable[Snapshot], spec: Field, db: Database) -> tuple[_Raw, ...]:
    out = []
    for state in states:
        raw = tuple(v for v in spec.values(state, db) if v not in (None, ""))
        if raw:
            shown = tuple(_show(v) for v in raw)
            label = f"{state.kind.value} {state.key}"
            out.append(_Raw(Seen(state.turn, state.source, label, shown), raw))
    return tuple(out)


def _public(seen: tuple[_Raw, ...]) -> tuple[Seen, ...]:
    return tuple(s.public for s in seen)


def _show(value: Any) -> str:
    if isinstance(value, dict):
        parts = (value.get(k) for k in ("address1", "address2", "city", "state", "zip"))
        return ", ".join(p for p in parts if p)
    if isinstance(value, tuple):
        return value[0] + (f" ({value[1]})" if value[1] else "")
    return str(value)


def quote(messages: tuple[Message, ...], turn: int) -> tuple[dict, ...]:
    """The turn and its neighbours, as a person reads them (600 characters each)."""
    rows = []
    for at in range(max(0, turn - 1), min(len(messages), turn + 2)):
        message = messages[at]
        text = message.text
        if message.tool_calls and not text:
            text = "; ".join(
                f"{c.name or '(unnamed tool)'}({c.arguments})" for c in message.tool_calls
            )
        clipped = text if len(text) <= QUOTE_CHARS else text[: QUOTE_CHARS - 1] + "…"
        rows.append({"turn": at, "role": message.role, "text": clipped})
    return tuple(rows)


@dataclass(frozen=True)
class TranscriptScore:
    ident: str
    scored: tuple[Scored, ...]
    final: dict[str, tuple[str, str]]  # slot → (value, provenance) of the live register
    gold: dict[str, frozenset[str]] | None
    named_calls: int
    unnamed_calls: int


def score_transcript(ident: str, parsed, schema, db: Database) -> TranscriptScore:
    """Every history entry of one transcript, scored against its records."""
    result = run(parsed.messages, schema=schema)
    states = snapshots(result.input, db)
    gold = gold_values(parsed.record) if parsed.record is not None else None
    scored = []
    for entry in result.register.history:
        bucket, reason, matched, before, after = score_entry(entry, states, db, schema.name)
        contradicted = bucket is Bucket.CONTRADICTED
        partial = (
            entry.slot in ADDRESS_SLOTS
            and bucket is Bucket.CORROBORATED
            and street_line_only(entry.value)
        )
        scored.append(
            Scored(
                transcript=ident,
                slot=entry.slot,
                value=entry.value,
                turn=entry.turn,
                provenance=entry.provenance.value,
                live=entry.live,
                bucket=bucket,
                reason=reason,
                matched=matched,
                before=before,
                after=after,
                partial=partial,
                quote=quote(result.input, entry.turn) if contradicted else (),
                notes=notes(entry, result.input, states, schema, gold, db) if contradicted else (),
            )
        )
    calls = [c for m in result.input for c in m.tool_calls]
    named = sum(1 for c in calls if c.name)
    return TranscriptScore(
        ident=ident,
        scored=tuple(scored),
        final={e.slot: (e.value, e.provenance.value) for e in result.register.active},
        gold=gold,
        named_calls=named,
        unnamed_calls=len(calls) - named,
    )


def read_domain(corpora: Path, domain: Domain, limit: int | None = None):
    """(ident, Parsed) for each transcript of the domain's files, in file order."""
    found = []
    for relative in domain.transcripts:
        path = corpora / relative
        if not path.is_file():
            raise FileNotFoundError(f"no corpus file {path}")
        for ident, parsed in formats_many(path.read_text(encoding="utf-8")):
            found.append((f"{relative}#{ident}", parsed))
            if limit is not None and len(found) >= limit:
                return found
    return found

"""The environment's records: the two tau-bench domains, their databases, a record as it
stood at a turn (``Snapshot``), where each slot's value sits in a record (``FIELDS``),
and the words a score is given in (``Bucket``, ``Note``).

Plain data and lookups, no compiler: ``labelling.bench.records`` reads the
conversations and scores the register against these.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path


class Bucket(StrEnum):
    CORROBORATED = "corroborated"
    CONTRADICTED = "contradicted"
    UNVERIFIABLE = "unverifiable"
    UNCHECKED = "unchecked"


BUCKETS = tuple(Bucket)
PROVENANCES = ("declared", "acted", "inferred")
NO_RECORD_AFTER = "no record at or after the turn"
NO_RECORD_FIELD = "no record in the conversation holds this slot"
NO_FIELD = "the slot has no record field"


class Note(StrEnum):
    """What reading a contradicted entry beside its records shows, found mechanically."""

    UNAPPLIED = "unapplied"
    GOLD_AGREES = "gold_agrees"
    LEG_AIRPORT = "leg_airport"


NOTES = {
    Note.UNAPPLIED: "the agent made a committing tool call with this value, and the record "
    "that call returned still holds the old value: the environment did not apply it",
    Note.GOLD_AGREES: "the task's gold actions give this value",
    Note.LEG_AIRPORT: "the airport of one leg (a connection, or a leg of an odd itinerary), "
    "not an endpoint of the trip",
}


class Kind(StrEnum):
    """What a record is a record of."""

    RESERVATION = "reservation"
    ORDER = "order"
    USER = "user"
    FLIGHT = "flight"


@dataclass(frozen=True)
class Domain:
    """One tau-bench environment: its transcripts, its database, the schema scored."""

    name: str
    schema: str
    transcripts: tuple[str, ...]
    database: tuple[tuple[Kind, str], ...]


DOMAINS = {
    "airline": Domain(
        "airline",
        "travel",
        ("airline/gpt-4o-trajectories-dev.json", "airline/few_shot.jsonl"),
        (
            (Kind.RESERVATION, "airline/db/reservations.json"),
            (Kind.USER, "airline/db/users.json"),
            (Kind.FLIGHT, "airline/db/flights.json"),
        ),
    ),
    "retail": Domain(
        "retail",
        "logistics",
        ("retail/few_shot-dev.jsonl",),
        ((Kind.ORDER, "retail/db/orders.json"), (Kind.USER, "retail/db/users.json")),
    ),
}


# -- the database and a record as it stood at a turn ---------------------------------


@dataclass(frozen=True)
class Database:
    """The environment's records before any conversation: kind → id → record."""

    records: dict[Kind, dict[str, dict]]
    user_by_email: dict[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, records: dict[Kind, dict[str, dict]]) -> Database:
        users = records.get(Kind.USER, {})
        emails = {r["email"].casefold(): key for key, r in users.items() if r.get("email")}
        return cls(records, emails)

    def get(self, kind: Kind, key: str) -> dict | None:
        return self.records.get(kind, {}).get(key)

    def card_brand(self, payment_id: str) -> str | None:
        """The brand of a stored card (``visa``), searched across every user."""
        for user in self.records.get(Kind.USER, {}).values():
            method = (user.get("payment_methods") or {}).get(payment_id)
            if method:
                return method.get("brand")
        return None


def load_database(corpora: Path, domain: Domain) -> Database:
    records = {}
    for kind, relative in domain.database:
        records[kind] = json.loads((corpora / relative).read_text(encoding="utf-8"))
    return Database.of(records)


@dataclass(frozen=True)
class Snapshot:
    """One record as it stood at ``turn`` (-1: the database before the conversation)."""

    turn: int
    kind: Kind
    key: str
    record: dict = field(compare=False, repr=False)

    @property
    def source(self) -> str:
        return "database" if self.turn < 0 else "tool result"


# -- where a slot's value sits in a record ------------------------------------------


@dataclass(frozen=True)
class Field:
    """Where a slot's value sits in a record, said in words for the report."""

    where: str
    values: Callable[[Snapshot, Database], list]


def _reservation(pick):
    return lambda s, db: pick(s.record) if s.kind is Kind.RESERVATION else []


def _legs(name: str):
    return _reservation(lambda r: [f.get(name) for f in r.get("flights") or ()])


def _endpoint(near: str, far: str):
    def pick(record):
        round_trip = record.get("flight_type") == "round_trip"
        return [record.get(near), *([record.get(far)] if round_trip else [])]

    return _reservation(pick)


def _user_or_reservation_ids(s: Snapshot, db: Database) -> list:
    if s.kind is Kind.RESERVATION:
        return [s.record.get("user_id")]
    if s.kind is Kind.USER and not s.key.startswith("email:"):
        return [s.key]
    return []


def _reservation_ids(s: Snapshot, db: Database) -> list:
    if s.kind is Kind.RESERVATION:
        return [s.key]
    if s.kind is Kind.USER:
        return list(s.record.get("reservations") or ())
    return []


def _addresses(s: Snapshot, db: Database) -> list:
    return [s.record.get("address")] if s.kind in (Kind.ORDER, Kind.USER) else []


def _user_address(s: Snapshot, db: Database) -> list:
    return [s.record.get("address")] if s.kind is Kind.USER else []


def _payments(s: Snapshot, db: Database) -> list:
    if s.kind is not Kind.ORDER:
        return []
    record = s.record
    ids = [p.get("payment_method_id") for p in record.get("payment_history") or ()]
    ids += [record.get("exchange_payment_method_id"), record.get("return_payment_method_id")]
    return [(i, db.card_brand(i)) for i in ids if isinstance(i, str)]


def priced_cabin(record: dict, db: Database) -> str | None:
    """The cabin every flight of a reservation record is priced in, by the flight
    table's price for that flight and date; None when a flight has no price there or
    the prices name no single cabin.

    The airline environment's ``update_reservation_flights(cabin=...)`` prices every
    flight of the new itinerary in the cabin asked for, bills the difference, and returns
    the record without writing its ``cabin`` field, so after a cabin change the field
    still names the old one while the prices show the new. Records loaded from the
    database were priced apart from the flight table and show no cabin this way.

    Example:
        >>> table = {"HAT1": {"dates": {"2024-05-24": {"prices": {"economy": 105,
        ...     "business": 496}}}}}
        >>> db = Database.of({Kind.FLIGHT: table})
        >>> changed = {"cabin": "business", "flights": [
        ...     {"flight_number": "HAT1", "date": "2024-05-24", "price": 105}]}
        >>> priced_cabin(changed, db)
        'economy'
        >>> priced_cabin({**changed, "flights": [{**changed["flights"][0], "price": 80}]}, db)
    """
    flights = db.records.get(Kind.FLIGHT, {})
    cabins: set[str] | None = None
    for leg in record.get("flights") or ():
        table = flights.get(leg.get("flight_number"), {}).get("dates", {}).get(leg.get("date"))
        prices = (table or {}).get("prices") or {}
        matching = {cabin for cabin, price in prices.items() if price == leg.get("price")}
        cabins = matching if cabins is None else cabins & matching
        if not cabins:
            return None
    return next(iter(cabins)) if cabins and len(cabins) == 1 else None


def _cabin(s: Snapshot, db: Database) -> list:
    if s.kind is not Kind.RESERVATION:
        return []
    return [priced_cabin(s.record, db) or s.record.get("cabin")]


FIELDS: dict[str, dict[str, Field]] = {
    "travel": {
        "cabin_class": Field(
            "reservation.cabin, or the one cabin its flights are priced in (flight table)",
            _cabin,
        ),
        "active_reservation": Field(
            "reservation.reservation_id; user.reservations", _reservation_ids
        ),
        "origin_airport": Field(
            "reservation.origin (and .destination of a round trip)",
            _endpoint("origin", "destination"),
        ),
        "destination_airport": Field(
            "reservation.destination (and .origin of a round trip)",
            _endpoint("destination", "origin"),
        ),
        "flight_number": Field("reservation.flights[].flight_number", _legs("flight_number")),
        "flight_date": Field("reservation.flights[].date", _legs("date")),
        "passenger_id": Field(
            "reservation.user_id; the id of a user record (found by e-mail)",
            _user_or_reservation_ids,
        ),
    },
    "logistics": {
        "delivery_address": Field(
            "order.address; user.address (house number and street)", _addresses
        ),
        "profile_address": Field("user.address (house number and street)", _user_address),
        "payment_method": Field(
            "order.payment_history[].payment_method_id, exchange_/return_payment_method_id "
            "(kind, and card brand from the user's stored methods)",
            _payments,
        ),
    },
}

"""The records report for one domain: tallies by bucket, provenance and slot, the
contradicted cases with their turns, and the gold check (``score_records``)."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from compiler import load_schema
from labelling.bench.gold import verdict
from labelling.bench.records import Scored, TranscriptScore, read_domain, score_transcript
from labelling.bench.records_db import (
    BUCKETS,
    DOMAINS,
    FIELDS,
    NOTES,
    PROVENANCES,
    Bucket,
    Database,
    Domain,
    Kind,
    Note,
    load_database,
)
from labelling.bench.stats import wilson95


def score_records(corpora: Path, domain_name: str, limit: int | None = None) -> dict:
    """The whole report for one domain, as a JSON-ready dict."""
    domain = DOMAINS[domain_name]
    for relative in (*domain.transcripts, *(r for _, r in domain.database)):
        if not (corpora / relative).is_file():
            raise FileNotFoundError(f"no corpus file {corpora / relative}")
    schema = load_schema(domain.schema)
    db = load_database(corpora, domain)
    transcripts = read_domain(corpora, domain, limit)
    scores = [score_transcript(ident, parsed, schema, db) for ident, parsed in transcripts]
    return report(domain, schema, db, scores)


# -- the report ---------------------------------------------------------------------


def tally(scored: Iterable[Scored]) -> dict:
    """Bucket counts, and the rate over the decidable ones with N and a Wilson interval.

    Example:
        >>> rows = [Scored("t", "s", "v", 0, "inferred", True, b) for b in
        ...         (Bucket.CORROBORATED,) * 9 + (Bucket.CONTRADICTED, Bucket.UNVERIFIABLE)]
        >>> tally(rows)["rate"]
        {'corroborated': 9, 'decidable': 10, 'rate': 0.9, 'wilson95': [0.596, 0.982]}
    """
    counts = Counter(s.bucket for s in scored)
    out: dict[str, Any] = {b.value: counts.get(b, 0) for b in BUCKETS}
    out["n"] = sum(counts.values())
    good, bad = counts.get(Bucket.CORROBORATED, 0), counts.get(Bucket.CONTRADICTED, 0)
    decidable = good + bad
    out["rate"] = {
        "corroborated": good,
        "decidable": decidable,
        "rate": round(good / decidable, 4) if decidable else None,
        "wilson95": wilson95(good, decidable),
    }
    return out


def report(domain: Domain, schema, db: Database, scores: list[TranscriptScore]) -> dict:
    scored = [s for t in scores for s in t.scored]
    by_prov = {p: tally(s for s in scored if s.provenance == p) for p in PROVENANCES}
    slots = [slot.name for slot in schema.slots]
    fields = FIELDS.get(schema.name, {})
    return {
        "domain": domain.name,
        "schema": schema.name,
        "schema_digest": schema.digest,
        "files": list(domain.transcripts),
        "database": [relative for _, relative in domain.database],
        "database_records": {k.value: len(v) for k, v in db.records.items()},
        "transcripts": len(scores),
        "extractions": len(scored),
        "live_extractions": sum(1 for s in scored if s.live),
        "fields": {slot: fields[slot].where if slot in fields else None for slot in slots},
        "total": tally(scored),
        "by_provenance": by_prov,
        "provenance_notes": _provenance_notes(scores, by_prov),
        "by_slot": {slot: tally(s for s in scored if s.slot == slot) for slot in slots},
        "by_slot_and_provenance": {
            slot: {
                p: tally(s for s in scored if s.slot == slot and s.provenance == p)
                for p in PROVENANCES
            }
            for slot in slots
        },
        "unverifiable_reasons": dict(
            sorted(Counter(s.reason for s in scored if s.bucket is Bucket.UNVERIFIABLE).items())
        ),
        "addresses": _addresses_note(scored) if "delivery_address" in slots else None,
        "record_vocabulary": _vocabulary(db, schema.name),
        "contradicted": [_case(s) for s in scored if s.bucket is Bucket.CONTRADICTED],
        "contradicted_notes": {
            note.value: {
                "count": sum(1 for s in scored if note in s.notes),
                "means": NOTES[note],
            }
            for note in Note
        },
        "gold": gold_check(scores),
    }


def _provenance_notes(scores: list[TranscriptScore], by_prov: dict) -> dict:
    named = sum(t.named_calls for t in scores)
    unnamed = sum(t.unnamed_calls for t in scores)
    notes = {}
    if by_prov["declared"]["n"] == 0:
        notes["declared"] = (
            "none: no assistant turn in this corpus carries a <contextgc-state> block, "
            "so the write path has nothing to score here"
        )
    if unnamed and not named:
        notes["acted"] = (
            f"not available: all {unnamed} tool calls in this corpus are display text "
            "('assistant: None') with no tool name or arguments, so the action path "
            "cannot fire; this is not a measured zero"
        )
    elif unnamed:
        notes["acted"] = (
            f"from the {named} named tool calls only; {unnamed} further calls are display "
            "text without a name or arguments and cannot be read"
        )
    return notes


def _addresses_note(scored: list[Scored]) -> dict:
    good = [s for s in scored if s.slot == "delivery_address" and s.bucket is Bucket.CORROBORATED]
    return {
        "corroborated": len(good),
        "street_line_only": sum(1 for s in good if s.partial),
        "note": "compared on house number and street; a value that stops at the street "
        "line is corroborated, and counted here",
    }


def _vocabulary(db: Database, schema: str) -> dict:
    if schema != "travel":
        return {}
    cabins = Counter(r.get("cabin") for r in db.records.get(Kind.RESERVATION, {}).values())
    return {"cabin_class": {"values": sorted(c for c in cabins if c), "records": cabins.total()}}


def _case(s: Scored) -> dict:
    return {
        "transcript": s.transcript,
        "slot": s.slot,
        "value": s.value,
        "turn": s.turn,
        "provenance": s.provenance,
        "live": s.live,
        "before": [vars(x) | {"values": list(x.values)} for x in s.before],
        "after": [vars(x) | {"values": list(x.values)} for x in s.after],
        "quote": list(s.quote),
        "notes": [n.value for n in s.notes],
    }


GOLD_VERDICTS = ("match", "mismatch", "missing")


def gold_check(scores: list[TranscriptScore]) -> dict:
    """The final register against the task's gold actions, per slot and provenance.

    A value is a match when it equals any gold value for its slot after the same
    normalisation the benchmark uses (dates, cabins, case).
    """
    with_gold = [t for t in scores if t.gold]
    if not with_gold:
        return {
            "available": False,
            "why": "no transcript in this corpus carries info.task.actions",
        }
    slots: dict[str, Counter] = defaultdict(Counter)
    by_prov: dict[str, Counter] = defaultdict(Counter)
    mismatches = []
    for t in with_gold:
        for slot, golds in t.gold.items():
            value, provenance = t.final.get(slot, (None, "none"))
            found = verdict(slot, value, golds)
            slots[slot][found] += 1
            by_prov[provenance][found] += 1
            if found == "mismatch":
                mismatches.append(
                    {
                        "transcript": t.ident,
                        "slot": slot,
                        "register": value,
                        "provenance": provenance,
                        "gold": sorted(golds),
                    }
                )
    total = Counter()
    for counts in slots.values():
        total.update(counts)
    return {
        "available": True,
        "transcripts": len(with_gold),
        "pairs": total.total(),
        "total": {v: total[v] for v in GOLD_VERDICTS},
        "slots": {s: {v: c[v] for v in GOLD_VERDICTS} for s, c in sorted(slots.items())},
        "by_provenance": {p: {v: c[v] for v in GOLD_VERDICTS} for p, c in sorted(by_prov.items())},
        "mismatches": mismatches,
    }

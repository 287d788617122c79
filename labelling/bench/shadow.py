"""Shadow replay: what a capture's declarations would have done to the compiled state.

A capture (``labelling.bench.capture``, read back by ``labelling.bench.capture_files``)
holds, per assistant turn, what a model declared. Shadow puts those declarations back
into the very transcripts they were asked about and compiles each transcript twice — as
it is (the read path alone) and with every captured block appended to its turn — then
splits what it finds:

- turns with a block, and malformed blocks;
- declared keys that name a schema slot, and those that do not;
- each in-schema value declared at a turn against the read path's value at that turn (the
  same, another, none), compiled from that transcript's own prefix;
- for each key a transcript's declarations named, its value in the final state of the two
  compiles: **added** (only the declarations give it; in schema or off it), **changed**
  (both hold it, differently), **agreed** (both hold the same value), **removed** (the
  read path holds it, the declarations leave none);
- declared values of the wrong shape, per the schema's value contracts (a contract checks
  shape, never truth);
- with environment records (``--records``: tau-bench airline or retail), each declared
  value corroborated, contradicted, unverifiable or unchecked by the records, scored by
  ``labelling.bench.records`` exactly as the read path's values are.

Only the parsed blocks go back into a turn (rebuilt from what the write path read), not the
model's other words, so the read path's own reading of the transcript is unchanged.

The corpus must be the one the capture was made over, under the capture's id scheme:
every captured transcript id must be in it (and, where the capture recorded one, with the
same digest), and every captured turn must be an assistant turn there. Otherwise shadow
refuses (``ShadowRefused``): comparing a capture with transcripts it was not made over
would print a clean comparison of nothing.

The figures are printed by ``labelling.bench.shadow_render`` and gathered per capture file
for the captures page by ``labelling.bench.captures_summary``.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from compiler import compile_messages, message_to_dict, satisfies
from labelling.bench import records as scoring
from labelling.bench import records_db
from labelling.bench.capture_files import (
    Capture,
    corpus_transcripts,
    key_figures,
    schema_of,
    transcript_digest,
)
from labelling.bench.declarations import declaration_of, declared_keys, declared_values

SHOWN_PROBLEMS = 5


class ShadowRefused(Exception):
    """The capture cannot be replayed against this corpus (or without a schema)."""


@dataclass(frozen=True)
class Records:
    """Environment records to score declared values against: the corpora folder and domain."""

    corpora: Path
    domain: str


# how each way a declaration left a key in the final state is named, in this order
FINAL_LABELS = (
    ("added_in_schema", "added, in the schema"),
    ("added_off_schema", "added, off the schema"),
    ("changed", "changed (read path held another value)"),
    ("agreed", "agreed with the read path"),
    ("removed", "removed (read path held a value)"),
    ("no_value", "named, no value either way"),
)


def aligned(capture: Capture, corpus_text: str) -> dict[str, tuple]:
    """The corpus transcripts the capture was made over; ``ShadowRefused`` if they differ."""
    corpus = corpus_transcripts(corpus_text, capture.id_scheme)
    problems = []
    for ident, digest in capture.transcripts.items():
        if ident not in corpus:
            problems.append(f"transcript {ident!r} is not in the corpus")
        elif digest and transcript_digest(corpus[ident]) != digest:
            problems.append(f"transcript {ident!r} has other messages than when captured")
    for turn in capture.turns:
        if turn.transcript not in capture.transcripts:
            problems.append(f"{turn.transcript} turn {turn.index}: a transcript it does not list")
            continue
        messages = corpus.get(turn.transcript)
        if messages is None:
            continue
        if not 0 <= turn.index < len(messages) or messages[turn.index].role != "assistant":
            problems.append(f"{turn.transcript} turn {turn.index} is not an assistant turn here")
    if not capture.turns:
        problems.append("the capture holds no turn")
    if problems:
        shown = "; ".join(problems[:SHOWN_PROBLEMS])
        more = len(problems) - SHOWN_PROBLEMS
        raise ShadowRefused(
            f"{capture.name} was not made over this corpus (id scheme {capture.id_scheme}; "
            f"{len(capture.transcripts)} captured transcripts, {len(corpus)} in the corpus): "
            f"{shown}{f'; and {more} more' if more > 0 else ''}"
        )
    return {ident: corpus[ident] for ident in capture.transcripts}


def shadow(capture: Capture, corpus_text: str, records: Records | None = None) -> dict:
    """Every figure of one capture's replay against its corpus, JSON-ready."""
    if not capture.schema:
        raise ShadowRefused(f"{capture.name} names no schema: nothing to replay it against")
    schema = schema_of(capture)
    transcripts = aligned(capture, corpus_text)
    slots = set(schema.slot_names)
    by_transcript: dict[str, list] = {ident: [] for ident in transcripts}
    for turn in capture.turns:
        by_transcript[turn.transcript].append((turn, declaration_of(turn.content)))
    final = Counter({k: 0 for k in FINAL})
    at_turn = Counter({k: 0 for k in AT_TURN})
    changes = []
    for ident, messages in transcripts.items():
        for row in final_state(messages, by_transcript[ident], schema, slots):
            final[row["outcome"]] += 1
            if row["outcome"] != "agreed":
                changes.append({"transcript": ident, **row})
        at_turn.update(against_read_path(messages, by_transcript[ident], schema, slots))
    keys = key_figures(capture)
    return {
        "capture": capture.name,
        "format": capture.format,
        "model": capture.model,
        "endpoints": list(capture.endpoints),
        "schema": schema.name,
        "id_scheme": capture.id_scheme,
        "transcripts": len(transcripts),
        **keys,
        "off_schema": keys["declared"] - keys["in_schema"],
        "final": dict(final),
        "final_changes": changes,
        "at_turn": dict(at_turn),
        "values": value_shapes(by_transcript, schema),
        "records": score_records(transcripts, by_transcript, schema, records) if records else None,
    }


FINAL = ("added_in_schema", "added_off_schema", "changed", "agreed", "removed", "no_value")


def final_state(messages, turns, schema, slots: set[str]) -> list[dict]:
    """Each key the declarations named, with its final value with and without them."""
    dicts = [message_to_dict(m) for m in messages]
    declared = [dict(m) for m in dicts]
    named: dict[str, None] = {}
    for turn, d in turns:
        named.update(dict.fromkeys(declared_keys(d)))
        block = clean_block(d)
        if block:
            target = declared[turn.index]
            target["content"] = f"{target.get('content') or ''}\n{block}".lstrip("\n")
    read = compile_messages(dicts, schema=schema, cache=False)[1]["active_state_slots"]
    both = compile_messages(declared, schema=schema, cache=False)[1]["active_state_slots"]
    rows = []
    for key in named:
        before, after = read.get(key), both.get(key)
        if after is None:
            outcome = "removed" if before is not None else "no_value"
        elif before is None:
            outcome = "added_in_schema" if key in slots else "added_off_schema"
        else:
            outcome = "agreed" if before == after else "changed"
        rows.append({"key": key, "outcome": outcome, "read_path": before, "declared": after})
    return rows


AT_TURN = ("same", "other", "read_path_none", "recorded_read_path_differs")


def against_read_path(messages, turns, schema, slots: set[str]) -> Counter:
    """Each in-schema value declared at a turn against the read path's value at that turn.

    The read path is compiled again from the transcript's own prefix; where the capture
    recorded what it had, a turn whose recorded state differs is counted (the compiler
    has changed since the capture).
    """
    dicts = [message_to_dict(m) for m in messages]
    counts = Counter()
    for turn, d in turns:
        values = [(k, v) for k, v in declared_values(d) if k in slots]
        if not values and turn.read_path is None:
            continue
        _, tel = compile_messages(dicts[: turn.index + 1], schema=schema)
        read = tel["active_state_slots"]
        if turn.read_path is not None and turn.read_path != read:
            counts["recorded_read_path_differs"] += 1
        for key, value in values:
            held = read.get(key)
            counts["read_path_none" if held is None else "same" if held == value else "other"] += 1
    return counts


def clean_block(declaration: dict) -> str:
    """The block the write path read, rebuilt without the model's other words ("" if empty).

    Example:
        >>> clean_block({"assert": {"a": "1"}, "pin": {}, "unsure": {}, "revoke": ["b"]})
        '<contextgc-state>{"assert":{"a":"1"},"revoke":["b"]}</contextgc-state>'
    """
    body = {op: declaration[op] for op in ("assert", "pin", "unsure", "revoke") if declaration[op]}
    if not body:
        return ""
    text = json.dumps(body, ensure_ascii=False, separators=(",", ":"))
    return f"<contextgc-state>{text}</contextgc-state>"


def value_shapes(by_transcript: dict[str, list], schema) -> dict:
    """Declared values, those in a slot with a value contract, and those of the wrong shape."""
    figures = {"declared": 0, "with_contract": 0, "wrong_shape": 0, "wrong": []}
    for ident, turns in by_transcript.items():
        for turn, d in turns:
            for key, value in declared_values(d):
                figures["declared"] += 1
                slot = schema.slot(key)
                if slot is None or slot.contract is None:
                    continue
                figures["with_contract"] += 1
                if not satisfies(slot.contract, value):
                    figures["wrong_shape"] += 1
                    figures["wrong"].append([ident, turn.index, key, value])
    return figures


def score_records(transcripts, by_transcript, schema, records: Records) -> dict:
    """Each declared value, bucketed by the environment's records at its turn."""
    domain = records_db.DOMAINS.get(records.domain)
    if domain is None:
        known = ", ".join(records_db.DOMAINS)
        raise ShadowRefused(f"no records for domain {records.domain!r} (known: {known})")
    if domain.schema != schema.name:
        raise ShadowRefused(
            f"the {domain.name} records score the {domain.schema} schema, "
            f"and this capture was made with {schema.name}"
        )
    try:
        db = records_db.load_database(records.corpora, domain)
    except (OSError, ValueError) as error:
        raise ShadowRefused(f"the {domain.name} records cannot be read ({error})") from None
    counts = Counter({b.value: 0 for b in records_db.BUCKETS})
    contradicted = []
    for ident, messages in transcripts.items():
        states = scoring.snapshots(tuple(messages), db)
        for turn, d in by_transcript[ident]:
            for key, value in declared_values(d):
                entry = _Declared(key, value, turn.index)
                bucket = scoring.score_entry(entry, states, db, schema.name)[0]
                counts[bucket.value] += 1
                if bucket is records_db.Bucket.CONTRADICTED:
                    contradicted.append([ident, turn.index, key, value])
    return {"domain": domain.name, **dict(counts), "contradicted_values": contradicted}


@dataclass(frozen=True)
class _Declared:
    """A declared value, shaped as the records scorer reads a register entry."""

    slot: str
    value: str
    turn: int


def records_for(schema: str | None, corpora: Path | None) -> tuple[Records | None, str]:
    """The records that score a capture made with ``schema``, or why there are none.

    Example:
        >>> records_for("coding", Path("corpora"))
        (None, 'no environment has records for the coding schema')
    """
    if corpora is None:
        return None, "no records folder given"
    domain = next((d for d in records_db.DOMAINS.values() if d.schema == schema), None)
    if domain is None:
        return None, f"no environment has records for the {schema} schema"
    missing = [relative for _, relative in domain.database if not (corpora / relative).is_file()]
    if missing:
        return None, f"{corpora} has no {', '.join(missing)}"
    return Records(corpora, domain.name), ""

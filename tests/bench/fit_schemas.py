"""Measure the shipped schemas on the real corpora, and write down what was measured.

    python tests/bench/fit_schemas.py /work/shared/corpora              # report
    python tests/bench/fit_schemas.py /work/shared/corpora --write      # and update the schemas
    python tests/bench/fit_schemas.py /work/shared/corpora --worksheet travel --per-slot 25

Per schema and slot it prints: observations read from speech, distinct values,
transcripts where the slot fired, transcripts where its value changed at least
once (the supersession rate), how many machine-output and options-menu turns the
same patterns would have matched (what the read path's exclusions cost), and a
sample of extractions with the sentence around each, for reading. For the airline
corpus it also scores each transcript's final register against the gold actions
(``record["info"]["task"]["actions"]``), with the benchmark's scorer
(``labelling/bench/gold.py``).

Precision is never computed from the corpus. It comes from the label file
``tests/bench/labels/<schema>.json``: rows a developer judged by reading the
turn. This script counts them, rows and independent units (one per transcript family,
turn and slot), and puts a Wilson interval around the count of units.
With ``--write`` every figure lands in the generated file beside the schema,
``compiler/schemas/<schema>.measurement.json``, so no figure there is typed by hand;
a label row that no longer reproduces (the patterns changed under it) stops the write
until it is judged again.

Output is deterministic: no clock, no randomness, corpus files read in sorted order.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from compiler import run  # noqa: E402
from compiler.read.formats import formats_many  # noqa: E402
from compiler.state.classify import Kind  # noqa: E402
from compiler.state.extract import extract, extract_turn  # noqa: E402
from compiler.state.schema import SCHEMA_DIR, Schema, load_schema, measurement_path  # noqa: E402
from labelling.bench.corpus import cluster_of  # noqa: E402
from labelling.bench.gold import VERDICTS, gold_values, verdict  # noqa: E402
from labelling.bench.stats import wilson95  # noqa: E402

LABELS = Path(__file__).resolve().parent / "labels"

# Which corpus files measure which schema, as globs under the corpus directory.
CORPORA = {
    "coding": ("coding/nebius-sample.txt", "coding/swe-agent/*.traj"),
    "travel": ("airline/gpt-4o-trajectories-dev.json", "airline/few_shot.jsonl"),
    "logistics": ("retail/few_shot-dev.jsonl",),
}
SPEAKERS = frozenset({"user", "assistant"})
CONTEXT_CHARS = 90


@dataclass(frozen=True)
class Transcript:
    """One transcript as the compiler saw it, and the unit it is not independent of."""

    id: str
    cluster: str
    messages: tuple
    kinds: tuple
    register: Any
    record: Any = None


@dataclass
class SlotFigures:
    observations: int = 0
    values: set = field(default_factory=set)
    fired: set = field(default_factory=set)
    changed: set = field(default_factory=set)
    in_machine_output: int = 0
    in_menus: int = 0
    samples: list = field(default_factory=list)


# -- reading the corpora ------------------------------------------------------


def corpus_files(corpus_dir: Path, schema_name: str) -> list[Path]:
    files: list[Path] = []
    for pattern in CORPORA[schema_name]:
        found = sorted(corpus_dir.glob(pattern))
        if not found:
            raise SystemExit(f"no corpus file matches {corpus_dir / pattern}")
        files.extend(found)
    return files


def load_transcripts(corpus_dir: Path, schema: Schema) -> list[Transcript]:
    """Every transcript of the schema's corpora, compiled once under the schema."""
    out = []
    for path in corpus_files(corpus_dir, schema.name):
        source = path.relative_to(corpus_dir).as_posix()
        for transcript_id, parsed in formats_many(path.read_text(encoding="utf-8")):
            result = run(parsed.messages, schema=schema, mode="cache_friendly")
            ident = f"{source}#{transcript_id}"
            out.append(
                Transcript(
                    id=ident,
                    cluster=cluster_of(source, transcript_id, parsed.record),
                    messages=result.input,
                    kinds=result.kinds,
                    register=result.register,
                    record=parsed.record,
                )
            )
    return out


# -- measuring ----------------------------------------------------------------


def measure(schema: Schema, transcripts: list[Transcript]) -> dict[str, SlotFigures]:
    figures = {slot: SlotFigures() for slot in schema.slot_names}
    for transcript in transcripts:
        _count_speech(schema, transcript, figures)
        _count_excluded(schema, transcript, figures)
    return figures


def _count_speech(schema: Schema, transcript: Transcript, figures: dict[str, SlotFigures]) -> None:
    for entry in transcript.register.history:
        slot = figures[entry.slot]
        slot.fired.add(transcript.id)
        if entry.superseded_by is not None:
            slot.changed.add(transcript.id)
    for obs in extract(transcript.messages, transcript.kinds, schema):
        slot = figures[obs.slot]
        slot.observations += 1
        slot.values.add(obs.value.casefold())
        slot.samples.append((transcript, obs.turn, obs))


def _count_excluded(schema: Schema, transcript: Transcript, figures) -> None:
    """Turns the patterns would have matched had machine output and menus been read."""
    for turn, message, kind in _turns(transcript):
        if kind not in (Kind.MACHINE, Kind.MENU):
            continue
        for obs in extract_turn(message.text, turn, schema):
            if kind is Kind.MACHINE:
                figures[obs.slot].in_machine_output += 1
            else:
                figures[obs.slot].in_menus += 1


def _turns(transcript: Transcript):
    for turn, (message, kind) in enumerate(zip(transcript.messages, transcript.kinds, strict=True)):
        yield turn, message, kind


def spread_sample(samples: list, limit: int) -> list:
    """Up to ``limit`` extractions, round-robin over independent units.

    One row per transcript-turn (the extractor gives one value per slot per
    turn), the same sentence read in two replays counted once, and each
    cluster visited before any is visited twice.
    """
    by_cluster: dict[str, list] = defaultdict(list)
    seen_sentences = set()
    for transcript, turn, obs in samples:
        key = (obs.value.casefold(), quote(transcript.messages[turn].text, obs))
        if key in seen_sentences:
            continue
        seen_sentences.add(key)
        by_cluster[transcript.cluster].append((transcript, turn, obs))
    picked: list = []
    queues = [by_cluster[c] for c in sorted(by_cluster)]
    depth = 0
    while len(picked) < limit and any(depth < len(q) for q in queues):
        picked.extend(q[depth] for q in queues if depth < len(q))
        depth += 1
    return picked[:limit]


def quote(text: str, obs) -> str:
    before = text[max(0, obs.start - CONTEXT_CHARS) : obs.start]
    after = text[obs.end : obs.end + CONTEXT_CHARS // 2]
    body = f"{before}[[{text[obs.start : obs.end]}]]{after}"
    return " ".join(body.split())


# -- gold actions (airline) -----------------------------------------------------


def score_gold(schema: Schema, transcripts: list[Transcript]) -> dict[str, dict[str, int]]:
    """Per slot: final value among the gold values / not among them / no final value,
    as ``labelling.bench.gold.verdict`` decides (the benchmark's scorer).

    ``no_gold``: transcripts whose gold actions set nothing for the slot (not scored).
    """
    table = {slot: dict.fromkeys((*VERDICTS, "no_gold"), 0) for slot in schema.slot_names}
    for transcript in transcripts:
        gold = gold_values(transcript.record)
        if gold is None:
            continue
        final = {e.slot: e.value for e in transcript.register.active}
        for slot in schema.slot_names:
            golds = gold.get(slot)
            table[slot][verdict(slot, final.get(slot), golds) if golds else "no_gold"] += 1
    return table


def has_gold(transcript: Transcript) -> bool:
    """Whether the transcript's record carries gold actions (``info.task.actions``)."""
    return gold_values(transcript.record) is not None


def scored_transcripts(transcripts: list[Transcript]) -> int:
    return sum(1 for t in transcripts if has_gold(t))


# -- precision from the label file ------------------------------------------------


def read_labels(schema_name: str) -> dict:
    path = LABELS / f"{schema_name}.json"
    if not path.is_file():
        return {"rows": [], "unmeasured": {}}
    return json.loads(path.read_text(encoding="utf-8"))


def precision_block(schema: Schema, labels: dict) -> dict:
    """Per slot: judged rows and how many were correct, the independent units they make
    and how many were correct, the Wilson 95% interval over those units, and how many
    transcript families the units come from; or why the slot is unmeasured.

    A unit is one (transcript family, turn, slot), as in ``labelling.precision``: the same
    turn of two replays of one task is one piece of evidence, not two, and an incorrect
    row sinks its unit. The interval is over units, so rows read twice do not narrow it.

    Example:
        >>> from compiler import load_schema
        >>> rows = [{"cluster": "f", "turn": 3, "slot": "current_file", "verdict": v}
        ...         for v in ("correct", "correct")]
        >>> rows.append({"cluster": "g", "turn": 1, "slot": "current_file", "verdict": "correct"})
        >>> block = precision_block(load_schema("coding"), {"rows": rows, "method": "read"})
        >>> {k: block["current_file"][k] for k in ("judged", "units", "units_correct", "families")}
        {'judged': 3, 'units': 2, 'units_correct': 2, 'families': 2}
    """
    block = {}
    for slot in schema.slot_names:
        rows = [r for r in labels.get("rows", ()) if r["slot"] == slot]
        if not rows:
            reason = labels.get("unmeasured", {}).get(slot, "no judged rows")
            block[slot] = f"unmeasured: {reason}"
            continue
        units: dict[tuple, bool] = {}
        for r in rows:
            unit = (r["cluster"], r["turn"], r["slot"])
            units[unit] = units.get(unit, True) and r["verdict"] == "correct"
        correct_units = sum(units.values())
        block[slot] = {
            "judged": len(rows),
            "correct": sum(1 for r in rows if r["verdict"] == "correct"),
            "units": len(units),
            "units_correct": correct_units,
            "families": len({r["cluster"] for r in rows}),
            "method": labels["method"],
            "wilson95": wilson95(correct_units, len(units)),
        }
    return block


def stale_labels(labels: dict, transcripts: list[Transcript], schema: Schema) -> list[dict]:
    """Label rows whose value the current patterns no longer extract at that turn."""
    by_id = {t.id: t for t in transcripts}
    stale = []
    for row in labels.get("rows", ()):
        transcript = by_id.get(row["transcript"])
        value = None
        if transcript is not None and row["turn"] < len(transcript.messages):
            text = transcript.messages[row["turn"]].text
            for obs in extract_turn(text, row["turn"], schema):
                if obs.slot == row["slot"]:
                    value = obs.value
        if value != row["value"]:
            stale.append({**row, "now": value})
    return stale


# -- reporting and writing -------------------------------------------------------


def measurement_block(schema, transcripts, figures, labels, corpus_dir) -> dict:
    speech = sum(
        1 for t in transcripts for _, m, k in _turns(t) if k is Kind.SPEECH and m.role in SPEAKERS
    )
    block: dict[str, Any] = {
        "corpus": [
            p.relative_to(corpus_dir).as_posix() for p in corpus_files(corpus_dir, schema.name)
        ],
        "transcripts": len(transcripts),
        "independent_units": len({t.cluster for t in transcripts}),
        "turns": sum(len(t.messages) for t in transcripts),
        "speech_turns": speech,
        "slots": {slot: _slot_block(fig, len(transcripts)) for slot, fig in figures.items()},
        "computed_by": "python tests/bench/fit_schemas.py <corpus-dir> --write",
    }
    if scored_transcripts(transcripts):
        block["gold_actions"] = {
            "transcripts": scored_transcripts(transcripts),
            "per_slot": score_gold(schema, transcripts),
        }
    block["precision"] = precision_block(schema, labels)
    return block


def _slot_block(fig: SlotFigures, n_transcripts: int) -> dict:
    return {
        "observations": fig.observations,
        "distinct_values": len(fig.values),
        "transcripts_fired": len(fig.fired),
        "change_rate": {
            "changed": len(fig.changed),
            "of_transcripts_fired": len(fig.fired),
            "rate": round(len(fig.changed) / len(fig.fired), 3) if fig.fired else None,
        },
        "matches_in_machine_output": fig.in_machine_output,
        "matches_in_menus": fig.in_menus,
        "of_transcripts": n_transcripts,
    }


def report(schema, block, figures, per_slot_samples: int) -> str:
    lines = [
        f"== {schema.name}: {block['transcripts']} transcripts "
        f"({block['independent_units']} independent units), {block['turns']} turns, "
        f"{block['speech_turns']} speech turns",
        f"   corpus: {', '.join(block['corpus'])}",
    ]
    for slot, fig in figures.items():
        s = block["slots"][slot]
        c = s["change_rate"]
        lines.append(
            f"-- {slot}: {s['observations']} observations, {s['distinct_values']} distinct, "
            f"fired in {s['transcripts_fired']}/{s['of_transcripts']} transcripts, "
            f"changed in {c['changed']}/{c['of_transcripts_fired']}; "
            f"excluded matches: {s['matches_in_machine_output']} machine output, "
            f"{s['matches_in_menus']} menus"
        )
        lines.append(f"   precision: {json.dumps(block['precision'][slot])}")
        for transcript, turn, obs in spread_sample(fig.samples, per_slot_samples):
            role = transcript.messages[turn].role
            text = transcript.messages[turn].text
            lines.append(f"   {transcript.id} t{turn} {role}: {obs.value!r}")
            lines.append(f"      “{quote(text, obs)}”")
    if "gold_actions" in block:
        gold = block["gold_actions"]
        lines.append(f"-- final register vs gold actions ({gold['transcripts']} transcripts)")
        for slot, row in gold["per_slot"].items():
            lines.append(f"   {slot}: {json.dumps(row)}")
    return "\n".join(lines)


def worksheet(schema, figures, per_slot: int) -> list[dict]:
    """Unlabelled rows to judge: the spread sample of every slot, with its sentence."""
    rows = []
    for slot, fig in figures.items():
        for transcript, turn, obs in spread_sample(fig.samples, per_slot):
            rows.append(
                {
                    "transcript": transcript.id,
                    "cluster": transcript.cluster,
                    "turn": turn,
                    "role": transcript.messages[turn].role,
                    "slot": slot,
                    "value": obs.value,
                    "context": quote(transcript.messages[turn].text, obs),
                    "verdict": None,
                    "note": "",
                }
            )
    return rows


def write_measurement(schema_name: str, block: dict) -> Path:
    """Write ``block`` to the measurement file beside the authored schema; the authored
    file is left as it is."""
    path = measurement_path(SCHEMA_DIR / f"{schema_name}.json")
    path.write_text(json.dumps(block, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus_dir", type=Path)
    parser.add_argument("--write", action="store_true", help="write each schema's measurement file")
    parser.add_argument("--schema", choices=sorted(CORPORA), action="append")
    parser.add_argument("--samples", type=int, default=8, help="extractions shown per slot")
    parser.add_argument("--worksheet", choices=sorted(CORPORA), help="print rows to judge")
    parser.add_argument("--per-slot", type=int, default=25)
    args = parser.parse_args(argv)
    corpus_dir = args.corpus_dir.resolve()
    names = [args.worksheet] if args.worksheet else (args.schema or sorted(CORPORA))
    status = 0
    for name in names:
        schema = load_schema(name)
        transcripts = load_transcripts(corpus_dir, schema)
        figures = measure(schema, transcripts)
        if args.worksheet:
            print(
                json.dumps(worksheet(schema, figures, args.per_slot), indent=1, ensure_ascii=False)
            )
            continue
        labels = read_labels(name)
        block = measurement_block(schema, transcripts, figures, labels, corpus_dir)
        print(report(schema, block, figures, args.samples))
        stale = stale_labels(labels, transcripts, schema)
        for row in stale:
            print(
                f"   STALE LABEL {row['transcript']} t{row['turn']} {row['slot']}: "
                f"labelled {row['value']!r}, now {row['now']!r}"
            )
        if args.write and stale:
            print(f"   not written: {len(stale)} label row(s) no longer reproduce")
            status = 1
        elif args.write:
            path = write_measurement(name, block)
            print(f"   written to {path.relative_to(ROOT)}")
    return status


if __name__ == "__main__":
    raise SystemExit(main())

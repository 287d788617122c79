"""The corpus report: every figure the overview shows, reproducible, each with its N.

``corpus_report`` folds the rows ``labelling.measurement.measure.measure_items`` made
(in one process or in many background jobs, in any order) into one JSON-ready report
with the benchmark's figures (``labelling.bench.compare``), the gold comparison, the
per-transcript rows the report pages draw, and precision where labels support it.

What the report refuses to do: print a precision figure that no label supports. A
label supports a figure when it matches an extraction of the measured corpus exactly
(transcript, slot, turn, value) and was judged correct or incorrect; the report then
prints the label rows, the independent units they collapse to (one per transcript
family, turn and slot, any incorrect row sinking its unit) and the Wilson interval
over units. Without one, it says why there is no figure.
"""

from __future__ import annotations

import copy
import statistics
from collections import Counter, defaultdict
from types import SimpleNamespace
from typing import Any

from labelling.bench import compare, loop_bill
from labelling.bench.corpus import ESTIMATOR_NOTE, Transcript
from labelling.bench.fidelity import Recall
from labelling.bench.gold import gold_figures
from labelling.bench.stats import wilson95
from labelling.measurement.measure import library_label

SMALL_N = 20
WIDE = 0.30


# -- reporting: rows in, one report out ----------------------------------------------


def summed_recall(outcomes) -> dict:
    """The benchmark's identifier figure over rows, each holding its own counts.

    Example:
        >>> rows = [{"identifier_recall": {"turns": 1, "wanted": 2, "kept": 2, "rate": 1.0}},
        ...         {"identifier_recall": {"turns": 2, "wanted": 2, "kept": 1, "rate": 0.5}}]
        >>> summed_recall(rows)
        {'turns': 3, 'wanted': 4, 'kept': 3, 'rate': 0.75}
    """
    total = Recall()
    for outcome in outcomes:
        counts = outcome.get("identifier_recall") or {}
        total.turns += counts.get("turns", 0)
        total.wanted += counts.get("wanted", 0)
        total.kept += counts.get("kept", 0)
    return total.figures()


def corpus_report(
    rows: list[dict],
    errors: list[dict],
    *,
    corpus: str,
    schema: str,
    repeats: int,
    peer: dict,
    labels: dict | None = None,
    cap: dict | None = None,
    command: str = "",
    retirements: dict | None = None,
) -> dict:
    """Every figure, with its N, as a JSON-ready dict (order-independent in ``rows``)."""
    rows = sorted(rows, key=lambda r: r["ident"])
    keys = ["ours", *(["peer"] if rows and "peer" in rows[0] else [])]
    corpus_objs = [_light_transcript(r) for r in rows]
    report: dict[str, Any] = {
        "corpus": corpus,
        "schema": schema,
        "command": command,
        "estimator": ESTIMATOR_NOTE,
        "repeats": repeats,
        "peer": peer,
        "header": header(rows),
        "cap": cap or {},
        "errors": errors,
        "figures": {},
        "extractions": {},
    }
    for key in keys:
        outcomes = [_outcome(r[key]) for r in rows]
        library = SimpleNamespace(label=library_label(key, peer))
        figures = compare.library_figures(library, outcomes, corpus_objs) if rows else {}
        if rows:
            figures["identifier_recall"] = summed_recall(r[key] for r in rows)
        report["figures"][key] = figures
        report["extractions"][key] = extraction_counts(rows, key)
    gold = [t for t in corpus_objs if t.gold is not None]
    if gold and rows:
        report["gold"] = {
            "transcripts": len(gold),
            "slots_with_gold": sum(len(t.gold) for t in gold),
            **{k: gold_figures([_outcome(r[k]) for r in rows], corpus_objs) for k in keys},
        }
    report["precision"] = precision(rows, labels)
    if retirements is not None:  # judged retired turns (``retirement_labels.retirement_precision``)
        report["retirement_precision"] = retirements
    report["loop_bill"] = loop_bill_figures(rows)
    report["per_transcript"] = [
        {
            "ident": r["ident"],
            "turns": r["turns"],
            "raw_tokens": r["raw_tokens"],
            "history": r["ours"]["history"],
            **{
                k: {
                    "compiled_tokens": r[k]["compiled"],
                    "compile_ms": _ms(r[k]["seconds"]),
                    "facts": r[k]["facts"],
                    "retirements": r[k]["retirements"],
                }
                for k in keys
            },
        }
        for r in rows
    ]
    return report


def _ms(seconds: float) -> float | None:
    return round(seconds * 1000, 3) if seconds != float("inf") else None


def _light_transcript(row: dict) -> Transcript:
    gold = row.get("gold")
    return Transcript(
        ident=row["ident"],
        messages=[],
        chars=row["characters"],
        tokens=row["raw_tokens"],
        tokens_outside_system=row["raw_tokens_outside_system"],
        tokens_outside_prompt=row.get("raw_tokens_outside_prompt", 0),
        gold={k: frozenset(v) for k, v in gold.items()} if gold is not None else None,
    )


_OUTCOME_FIELDS = tuple(compare.Outcome.__dataclass_fields__)


def _outcome(data: dict) -> compare.Outcome:
    # a field added since a row was stored keeps its default there
    return compare.Outcome(**{k: copy.deepcopy(data[k]) for k in _OUTCOME_FIELDS if k in data})


def loop_bill_figures(rows: list[dict]) -> dict:
    """The loop's bill per strategy against the raw history's, summed over the transcripts
    every strategy was billed on (a row made before the bill was measured has none).

    Example:
        >>> raw = {"key": "raw", "label": "raw", **loop_bill.Totals(tokens=10, calls=2).as_dict()}
        >>> raw["costs"] = dict.fromkeys(raw["costs"], 10.0)
        >>> half = {**raw, "key": "half", "label": "half"}
        >>> half["costs"] = dict.fromkeys(raw["costs"], 5.0)
        >>> found = loop_bill_figures([{"loop_bill": [raw, half]}])
        >>> half_bill = found["strategies"][1]["billed_vs_raw"]
        >>> found["transcripts"], found["calls"], half_bill["none"]
        (1, 2, 0.5)
    """
    billed = [
        {found["key"]: found for found in r["loop_bill"]}
        for r in rows
        if any(found["key"] == "raw" for found in r.get("loop_bill") or ())
    ]
    if not billed:
        return {"transcripts": 0, "calls": 0, "strategies": [], "counter": "chars/4"}
    keys = [k for k in billed[0] if all(k in b for b in billed)]  # in the strategies' order
    labels = {k: billed[0][k]["label"] for k in keys}
    sums = {k: loop_bill.Totals() for k in keys}
    for found in billed:
        for key in keys:
            data = {f: v for f, v in found[key].items() if f not in ("key", "label")}
            sums[key].add(loop_bill.Totals.from_dict(data))
    return {
        "transcripts": len(billed),
        "calls": sums["raw"].calls,
        "counter": "chars/4",
        "models": list(loop_bill.MODELS),
        # a list, not a mapping: a JSON column may store an object's keys in its own order
        "strategies": [
            {"key": k, **loop_bill.figures(labels[k], sums[k], sums["raw"])} for k in keys
        ],
    }


def header(rows: list[dict]) -> dict:
    """Transcripts, turns, characters, models where known, repositories, families."""
    turns = [r["turns"] for r in rows]
    models = Counter(r["model"] or "unknown" for r in rows)
    repos = Counter(r["repo"] for r in rows if r["repo"])
    return {
        "transcripts": len(rows),
        "turns": {
            "total": sum(turns),
            "median": statistics.median(turns) if turns else None,
            "min": min(turns, default=None),
            "max": max(turns, default=None),
        },
        "characters": sum(r["characters"] for r in rows),
        "raw_tokens": sum(r["raw_tokens"] for r in rows),
        "models": dict(models.most_common()),
        "repositories": dict(repos.most_common()),
        "families": len({r["family"] for r in rows}),
    }


def extraction_counts(rows: list[dict], key: str) -> dict:
    """Values extracted (history entries), per slot and provenance, and re-assertions."""
    entries = [e for r in rows for e in r[key]["history"]]
    per_slot = Counter(e["slot"] for e in entries)
    return {
        "entries": len(entries),
        "superseded": sum(1 for e in entries if e["superseded_by"] is not None),
        "by_slot": dict(sorted(per_slot.items())),
        "by_provenance": dict(sorted(Counter(str(e["provenance"]) for e in entries).items())),
        "transcripts_with_a_fact": sum(1 for r in rows if r[key]["history"]),
    }


# -- precision: only where labels support it -------------------------------------------


def precision(rows: list[dict], labels: dict | None) -> dict:
    """Label rows matched to this corpus's extractions, and what they support.

    ``labels`` is a label file (``{"rows": [...]}``): rows with transcript, slot,
    turn, value, verdict and a family or cluster. Nothing is returned as a figure
    unless at least one matched label was judged correct or incorrect.

    Example:
        >>> rows = [{"ident": "f#1", "external_id": "1", "family": "f#1", "ours": {"history": [
        ...     {"slot": "s", "value": "v", "turn": 2, "provenance": "inferred",
        ...      "superseded_by": None}]}}]
        >>> precision(rows, None)["figure"]
        False
        >>> label = {"transcript": "f#1", "slot": "s", "turn": 2, "value": "v",
        ...          "verdict": "correct"}
        >>> got = precision(rows, {"rows": [label]})
        >>> got["figure"], got["all"]["rows"], got["all"]["units"], got["all"]["wilson95"]
        (True, 1, 1, [0.207, 1.0])
    """
    supplied = list((labels or {}).get("rows") or ())
    extracted = {}
    by_external = defaultdict(set)
    for r in rows:
        for e in r["ours"]["history"]:
            extracted[(r["ident"], e["slot"], e["turn"], e["value"])] = r["family"]
        by_external[r["external_id"]].add(r["ident"])
    idents = {r["ident"] for r in rows}
    in_corpus, matched, stale = [], [], []
    for label in supplied:
        ident = _label_ident(label, idents, by_external)
        if ident is None:
            continue
        in_corpus.append(label)
        key = (ident, label["slot"], label["turn"], label["value"])
        if key in extracted:
            matched.append((label, label.get("family") or label.get("cluster") or extracted[key]))
        else:
            stale.append(
                {k: label.get(k) for k in ("transcript", "slot", "turn", "value", "verdict")}
            )
    out: dict[str, Any] = {
        "source": (labels or {}).get("source", ""),
        "supplied": len(supplied),
        "in_this_corpus": len(in_corpus),
        "matched": len(matched),
        "stale": stale,
    }
    judged = [(lab, fam) for lab, fam in matched if lab.get("verdict") in ("correct", "incorrect")]
    out["unclear"] = len(matched) - len(judged)
    out["figure"] = bool(judged)
    if not judged:
        out["why_no_figure"] = _why_no_figure(supplied, in_corpus, matched)
        return out
    out["all"] = _figure(judged)
    slots = sorted({lab["slot"] for lab, _ in judged})
    out["slots"] = {s: _figure([(lab, f) for lab, f in judged if lab["slot"] == s]) for s in slots}
    return out


def _label_ident(label: dict, idents: set, by_external: dict) -> str | None:
    name = label.get("transcript")
    if name in idents:
        return name
    candidates = by_external.get(name, ())
    return next(iter(candidates)) if len(candidates) == 1 else None


def _why_no_figure(supplied, in_corpus, matched) -> str:
    if not supplied:
        return "no labels were supplied for this schema"
    if not in_corpus:
        return f"none of the {len(supplied)} labels is about a transcript of this corpus"
    if not matched:
        return (
            f"{len(in_corpus)} labels are about this corpus, but none matches an extraction "
            "the compiler makes now (transcript, slot, turn and value): they are stale"
        )
    return f"the {len(matched)} matching labels are all 'unclear': nothing was judged"


def _figure(judged: list[tuple[dict, str]]) -> dict:
    correct = sum(1 for lab, _ in judged if lab["verdict"] == "correct")
    units: dict[tuple, bool] = {}
    for lab, family in judged:
        unit = (family, lab["turn"], lab["slot"])
        units[unit] = units.get(unit, True) and lab["verdict"] == "correct"
    good_units = sum(units.values())
    interval = wilson95(good_units, len(units))
    warnings = []
    if len(judged) > len(units):
        warnings.append(f"n is inflated: {len(judged)} rows collapse to {len(units)} units")
    if len(units) < SMALL_N:
        warnings.append(f"n is small ({len(units)} < {SMALL_N} units): read the interval")
    if interval and interval[1] - interval[0] > WIDE:
        warnings.append(
            f"the 95% interval is {round(100 * (interval[1] - interval[0]))} points wide"
        )
    return {
        "rows": len(judged),
        "correct": correct,
        "incorrect": len(judged) - correct,
        "row_precision": round(correct / len(judged), 4),
        "units": len(units),
        "units_correct": good_units,
        "unit_precision": round(good_units / len(units), 4),
        "wilson95": interval,
        "warnings": warnings,
    }

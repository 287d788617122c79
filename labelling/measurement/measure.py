"""The corpus report: every figure the overview shows, reproducible, each with its N.

    items = read_path(Path("../shared/corpora/airline"), corpora=Path("../shared/corpora"))
    rows, errors = measure_items(items, "travel", repeats=3, use_peer=True)
    print(render(corpus_report(rows, errors, corpus="airline", schema="travel", ...)))

Measuring is split from reporting so that it can run anywhere: ``measure_items``
turns transcripts into one JSON-ready row each (what each library did to it, how
long it took, the register it ended with), and ``corpus_report`` folds any number
of rows, measured in one process or in many background jobs, into the report
(``labelling.measurement.measure_render.render`` prints it). The figures themselves are the
benchmark's (``tests/bench/measure.py``, whose core is ``labelling.bench``): the same
token estimator for both libraries, the same best-of-R timing, the same gold
comparison; this module imports them rather than restating them.

What the report refuses to do: print a precision figure that no label supports. A
label supports a figure when it matches an extraction of the measured corpus exactly
(transcript, slot, turn, value) and was judged correct or incorrect; the report then
prints the label rows, the independent units they collapse to (one per transcript
family, turn and slot, any incorrect row sinking its unit) and the Wilson interval
over units. Without one, it says why there is no figure.

Repository-ordered corpora (nebius: ``<owner>__<repo>-<n>#<k>``) are capped per
repository on request (``cap_per_repo``), because without a cap the first
transcripts come from a handful of repositories and every figure inherits that.
"""

from __future__ import annotations

import copy
import re
import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import compiler
from compiler.formats import formats_many
from compiler.messages import message_to_dict
from labelling.bench import compare
from labelling.bench.compare import cluster_of
from labelling.bench.fidelity import Recall
from labelling.bench.gold import gold_figures
from labelling.bench.stats import wilson95

TRANSCRIPT_SUFFIXES = (".json", ".jsonl", ".txt", ".traj")
SMALL_N = 20
WIDE = 0.30
_REPO = re.compile(r"^(?P<owner>[A-Za-z0-9_.-]+?)__(?P<repo>[A-Za-z0-9_.-]+)-\d+(?:#\d+)?$")


# -- what is measured ----------------------------------------------------------------


@dataclass(frozen=True)
class Item:
    """One transcript to measure: its message dicts and what is known about it."""

    ident: str  # <source>#<id>, the name label files use
    external_id: str
    messages: list = field(compare=False, repr=False)
    record: Any = field(default=None, compare=False, repr=False)
    meta: dict = field(default_factory=dict, compare=False)
    family: str = ""

    @property
    def repo(self) -> str | None:
        return repo_of(self.external_id)

    @property
    def model(self) -> str | None:
        return self.meta.get("model") or None


def repo_of(external_id: str) -> str | None:
    """The repository of a repository-ordered (nebius) transcript id, else None.

    Example:
        >>> repo_of("AnalogJ__lexicon-336#2"), repo_of("task3-trial0")
        ('AnalogJ/lexicon', None)
    """
    found = _REPO.match(external_id)
    return f"{found['owner']}/{found['repo']}" if found else None


def transcript_files(path: Path) -> list[Path]:
    """A file, or every transcript file under a directory (sorted; ``db/`` left out)."""
    if path.is_file():
        return [path]
    return sorted(
        p
        for p in path.rglob("*")
        if p.is_file()
        and p.suffix in TRANSCRIPT_SUFFIXES
        and "db" not in p.relative_to(path).parts[:-1]
    )


def read_path(path: Path, corpora: Path | None = None, limit: int | None = None) -> list[Item]:
    """Every transcript of a file or directory, named as label files name them
    (``<file relative to the corpora directory>#<id>``)."""
    items: list[Item] = []
    base = _base(path, corpora)
    for file in transcript_files(path):
        source = file.resolve().relative_to(base).as_posix()
        for external_id, parsed in formats_many(file.read_text(encoding="utf-8")):
            items.append(item_of(source, external_id, parsed))
            if limit is not None and len(items) >= limit:
                return items
    return items


def _base(path: Path, corpora: Path | None) -> Path:
    resolved = path.resolve()
    if corpora is not None and resolved.is_relative_to(corpora.resolve()):
        return corpora.resolve()
    return resolved.parent


def item_of(source: str, external_id: str, parsed) -> Item:
    return Item(
        ident=f"{source}#{external_id}",
        external_id=external_id,
        messages=[message_to_dict(m) for m in parsed.messages],
        record=parsed.record,
        meta=dict(parsed.meta),
        family=cluster_of(source, external_id, parsed.record),
    )


def cap_per_repo(items: list[Item], cap: int | None) -> tuple[list[Item], dict]:
    """The first ``cap`` transcripts of each repository, in corpus order; what was cut.

    Transcripts with no repository are kept whole.

    Example:
        >>> items = [Item(f"f#{i}", i, []) for i in
        ...          ("a__x-1#0", "a__x-1#1", "a__x-2#0", "b__y-3#0", "task1-trial0")]
        >>> kept, note = cap_per_repo(items, 2)
        >>> [i.external_id for i in kept], note["dropped"]
        (['a__x-1#0', 'a__x-1#1', 'b__y-3#0', 'task1-trial0'], {'a/x': 1})
    """
    if cap is None:
        return items, {}
    seen: Counter = Counter()
    kept, dropped = [], Counter()
    for item in items:
        repo = item.repo
        if repo is not None and seen[repo] >= cap:
            dropped[repo] += 1
            continue
        if repo is not None:
            seen[repo] += 1
        kept.append(item)
    return kept, {
        "per_repo": cap,
        "read": len(items),
        "kept": len(kept),
        "dropped": dict(sorted(dropped.items())),
        "repositories": len(seen),
    }


# -- measuring: items in, rows out --------------------------------------------------


def libraries(schema: str, use_peer: bool) -> tuple[list, dict]:
    """Ours, and the peer when asked for and installed; and a note on the peer."""
    libs = [compare.our_library(schema)]
    peer = compare.peer_library(schema) if use_peer else None
    if peer is not None:
        libs.append(peer)
    return libs, compare.peer_note(peer, use_peer)


def measure_items(
    items: list[Item], schema: str, *, repeats: int = 3, use_peer: bool = True
) -> tuple[list[dict], list[dict], dict]:
    """One JSON-ready row per transcript, the transcripts set aside, and the peer note.

    Every non-timing figure comes from one untimed call per library; timing is
    best of ``repeats``, both libraries interleaved (``tests/bench/measure.py``).
    """
    libs, peer_note = libraries(schema, use_peer)
    corpus = [compare.transcript_of(i.ident, i.messages, i.record) for i in items]
    kept, runs, histories, errors = _warm(libs, corpus)
    compare.time_all(libs, kept, runs, repeats)
    by_ident = {item.ident: item for item in items}
    rows = []
    for index, transcript in enumerate(kept):
        item = by_ident[transcript.ident]
        row = _row(item, transcript)
        for lib in libs:
            outcome = asdict(runs[lib.key][index])
            outcome["history"] = histories[lib.key][index]
            outcome["identifier_recall"] = compare.recall_figures(lib, [transcript])
            row[lib.key] = outcome
        rows.append(row)
    return rows, errors, peer_note


def _warm(libs, corpus):
    """``compare.warm_all``, keeping each library's register history as well."""
    kept, errors = [], []
    runs = {lib.key: [] for lib in libs}
    histories = {lib.key: [] for lib in libs}
    for transcript in corpus:
        done = {}
        for lib in libs:
            seen: dict = {}
            try:
                outcome = compare.warm_up(_recording(lib, seen), transcript)
            except Exception as exc:  # a crash is a finding to report, not a reason to stop
                errors.append(
                    {
                        "transcript": transcript.ident,
                        "library": lib.label,
                        "error": f"{type(exc).__name__}: {exc}"[:300],
                    }
                )
                continue
            done[lib.key] = (outcome, _history(seen.get("telemetry") or {}))
        if len(done) == len(libs):
            kept.append(transcript)
            for key, (outcome, history) in done.items():
                runs[key].append(outcome)
                histories[key].append(history)
    return kept, runs, histories, errors


def _recording(lib, seen: dict):
    def compile_and_keep(messages):
        out, tel = lib.compile(messages)
        seen["telemetry"] = tel
        return out, tel

    return compare.Library(lib.key, lib.label, compile_and_keep, lib.supersessions)


def _history(telemetry: dict) -> list[dict]:
    """Every value every slot held: ours from ``state_history``; the peer's from its DAG."""
    if "state_history" in telemetry:
        return [
            {
                "slot": slot,
                "value": e["value"],
                "turn": e["turn"],
                "provenance": e.get("provenance"),
                "superseded_by": e.get("superseded_by"),
            }
            for slot, entries in telemetry["state_history"].items()
            for e in entries
        ]
    dag = telemetry.get("dag") or {}
    return [
        {
            "slot": n.get("entity"),
            "value": n.get("value"),
            "turn": n.get("turn_index"),
            "provenance": n.get("source"),
            "superseded_by": n.get("superseded_by"),
        }
        for part in ("active", "superseded")
        for n in dag.get(part) or ()
        if isinstance(n, dict)
    ]


def _row(item: Item, transcript: compare.Transcript) -> dict:
    gold = transcript.gold
    return {
        "ident": item.ident,
        "external_id": item.external_id,
        "family": item.family,
        "repo": item.repo,
        "model": item.model,
        "turns": len(item.messages),
        "characters": transcript.chars,
        "raw_tokens": transcript.tokens,
        "raw_tokens_outside_system": transcript.tokens_outside_system,
        "raw_tokens_outside_prompt": transcript.tokens_outside_prompt,
        "gold": {k: sorted(v) for k, v in gold.items()} if gold is not None else None,
    }


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
) -> dict:
    """Every figure, with its N, as a JSON-ready dict (order-independent in ``rows``)."""
    rows = sorted(rows, key=lambda r: r["ident"])
    keys = ["ours", *(["peer"] if rows and "peer" in rows[0] else [])]
    corpus_objs = [_light_transcript(r) for r in rows]
    report: dict[str, Any] = {
        "corpus": corpus,
        "schema": schema,
        "command": command,
        "estimator": compare.ESTIMATOR_NOTE,
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
        library = SimpleNamespace(label=_library_label(key, peer))
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


def _library_label(key: str, peer: dict) -> str:
    if key == "ours":
        return f"compiler {compiler.__version__}"
    return f"{peer.get('package', 'contextgc')} {peer.get('version', '?')}"


def _ms(seconds: float) -> float | None:
    return round(seconds * 1000, 3) if seconds != float("inf") else None


def _light_transcript(row: dict) -> compare.Transcript:
    gold = row.get("gold")
    return compare.Transcript(
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


def items_from(rows: Iterable[tuple[str, str, list, Any, dict, str]]) -> list[Item]:
    """Items from stored transcripts: (ident, external id, messages, record, meta, family)."""
    return [Item(i, e, m, r, meta or {}, f) for i, e, m, r, meta, f in rows]

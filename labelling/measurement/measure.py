"""Measuring a corpus: transcripts in, one JSON-ready row each out.

    items = read_path(Path("../shared/corpora/airline"), corpora=Path("../shared/corpora"))
    rows, errors, peer = measure_items(items, "travel", repeats=3, use_peer=True)
    print(render(corpus_report(rows, errors, corpus="airline", schema="travel", ...)))

Measuring is split from reporting so that it can run anywhere: ``measure_items``
turns transcripts into one JSON-ready row each (what each library did to it, how
long it took, the register it ended with), and
``labelling.measurement.corpus_report.corpus_report`` folds any number of rows,
measured in one process or in many background jobs, into the report
(``labelling.measurement.measure_render.render`` prints it). The figures themselves
are the benchmark's (``tests/bench/measure.py``, whose core is ``labelling.bench``):
the same token estimator for both libraries, the same best-of-R timing, the same gold
comparison; this module imports them rather than restating them.

Repository-ordered corpora (nebius: ``<owner>__<repo>-<n>#<k>``) are capped per
repository on request (``cap_per_repo``), because without a cap the first
transcripts come from a handful of repositories and every figure inherits that.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import compiler
from compiler import formats_many, message_to_dict
from labelling.bench import compare, loop_bill
from labelling.bench.corpus import Transcript, cluster_of, transcript_of

TRANSCRIPT_SUFFIXES = (".json", ".jsonl", ".txt", ".traj")
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
    corpus = [transcript_of(i.ident, i.messages, i.record) for i in items]
    kept, runs, histories, errors = _warm(libs, corpus)
    compare.time_all(libs, kept, runs, repeats)
    by_ident = {item.ident: item for item in items}
    strategies, _ = loop_bill.strategies(schema, use_peer=len(libs) > 1)
    rows = []
    for index, transcript in enumerate(kept):
        item = by_ident[transcript.ident]
        row = _row(item, transcript)
        row["loop_bill"] = _loop_bill(transcript.messages, strategies, errors, transcript.ident)
        for lib in libs:
            outcome = asdict(runs[lib.key][index])
            outcome["history"] = histories[lib.key][index]
            outcome["identifier_recall"] = compare.recall_figures(lib, [transcript])
            row[lib.key] = outcome
        rows.append(row)
    return rows, errors, peer_note


def _loop_bill(messages: list[dict], strategies, errors: list[dict], ident: str) -> list[dict]:
    """Each strategy's loop bill for one transcript (``labelling.bench.loop_bill``), counted
    by chars/4 as the report's other token figures are; a strategy that fails is left out
    and reported. A list in the strategies' order (a JSON column may reorder an object)."""
    found = []
    for strategy in strategies:
        try:
            totals = loop_bill.run_one(messages, strategy, "chars")
        except Exception as exc:  # a crash is a finding to report, not a reason to stop
            error = f"loop bill: {type(exc).__name__}: {exc}"[:300]
            errors.append({"transcript": ident, "library": strategy.label, "error": error})
            continue
        found.append({"key": strategy.key, "label": strategy.label, **totals.as_dict()})
    return found


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


def _row(item: Item, transcript: Transcript) -> dict:
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


def library_label(key: str, peer: dict) -> str:
    """How a report names a library measured under ``key`` (``ours`` or ``peer``)."""
    if key == "ours":
        return f"compiler {compiler.__version__}"
    return f"{peer.get('package', 'contextgc')} {peer.get('version', '?')}"

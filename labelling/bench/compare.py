"""Our compiler and the peer beside it, on the same transcripts: every figure but the text.

How the figures are made is written down once, in ``tests/bench/measure.py`` (the
benchmark's command line, which prints ``measure``'s report); the corpus report
(``labelling.measurement.measure``) reuses the libraries, the warm-up, the timing and the figures
from here. The transcripts and how they are counted are ``labelling.bench.corpus``'s. No
Django: the benchmark runs without the site's settings.
"""

from __future__ import annotations

import copy
import gc
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import compiler
from compiler import message_tokens
from labelling.bench.corpus import (
    ESTIMATOR,
    ESTIMATOR_NOTE,
    Transcript,
    first_turn_kept,
    read_corpus,
    tokens_outside_prompt,
    tokens_outside_system,
)
from labelling.bench.fidelity import identifier_recall
from labelling.bench.gold import GOLD_ARGS, GOLD_FLIGHT_ARGS, gold_figures
from labelling.bench.stats import percentile

PEER_PACKAGE = "contextgc"
PEER_EXPECTED = "0.4.6"
TARGET_SPEEDUP = 3.0


# -- the two libraries -------------------------------------------------------


@dataclass(frozen=True)
class Library:
    """One compiler under test: how to call it and how to read its telemetry."""

    key: str
    label: str
    compile: Callable[[list[dict]], tuple[list[dict], dict]]
    supersessions: Callable[[dict], int]


def our_library(schema_name: str) -> Library:
    schema = compiler.load_schema(schema_name)

    def run(messages):
        # cache=False: every repeat does the whole compile, like the peer does; the
        # incremental path is measured separately (tests/bench/incremental.py).
        return compiler.compile_messages(messages, mode="compact", schema=schema, cache=False)

    def replaced(tel):
        history = tel["state_history"].values()
        return sum(e["superseded_by"] is not None for entries in history for e in entries)

    return Library("ours", f"compiler {compiler.__version__}", run, replaced)


def peer_library(schema_name: str) -> Library | None:
    """The peer, or None when it is not installed."""
    try:
        import contextgc
    except ImportError:
        return None
    schema = contextgc.load_schema(schema_name)

    def run(messages):
        return contextgc.compile_messages(messages, mode="compact", schema=schema)

    def replaced(tel):
        return len(tel["dag"]["superseded"])

    return Library("peer", f"{PEER_PACKAGE} {metadata.version(PEER_PACKAGE)}", run, replaced)


# -- running -----------------------------------------------------------------


@dataclass
class Outcome:
    """One library on one transcript."""

    compiled: int
    compiled_outside_system: int
    system_kept: bool | None
    first_user_kept: bool | None
    facts: int
    supersessions: int
    retirements: int
    payloads: int
    violations: int
    register: dict
    own_raw: int
    own_compiled: int
    mutated_input: bool
    compiled_outside_prompt: int = 0  # 0 in a row stored before this figure existed
    seconds: float = math.inf


def warm_up(lib: Library, transcript: Transcript) -> Outcome:
    """One untimed call; every non-timing figure comes from it."""
    given = copy.deepcopy(transcript.messages)
    out, tel = lib.compile(given)
    return Outcome(
        compiled=sum(message_tokens(ESTIMATOR, m) for m in out),
        compiled_outside_system=tokens_outside_system(out),
        compiled_outside_prompt=tokens_outside_prompt(out),
        system_kept=first_turn_kept(transcript.messages, out, "system"),
        first_user_kept=first_turn_kept(transcript.messages, out, "user"),
        facts=len(tel["active_state_slots"]),
        supersessions=lib.supersessions(tel),
        retirements=len(tel["retired_turn_indices"]),
        payloads=tel["tool_payloads_compacted"],
        violations=len(tel["retirement_violations"]),
        register=dict(tel["active_state_slots"]),
        own_raw=tel["raw_token_count"],
        own_compiled=tel["compiled_token_count"],
        mutated_input=given != transcript.messages,
    )


def warm_all(libs: list[Library], corpus: list[Transcript]):
    """Warm-up outcomes per library; a transcript either library fails on is set aside
    (for both, so every figure compares the same transcripts) and reported."""
    kept, runs, errors = [], {lib.key: [] for lib in libs}, []
    for transcript in corpus:
        done = {}
        for lib in libs:
            try:
                done[lib.key] = warm_up(lib, transcript)
            except Exception as exc:  # a crash is a finding to report, not a reason to stop
                errors.append(
                    {
                        "transcript": transcript.ident,
                        "library": lib.label,
                        "error": f"{type(exc).__name__}: {exc}"[:300],
                    }
                )
        if len(done) == len(libs):
            kept.append(transcript)
            for key, outcome in done.items():
                runs[key].append(outcome)
    return kept, runs, errors


def time_all(libs: list[Library], transcripts: list[Transcript], runs, repeats: int) -> None:
    """Best-of-``repeats`` seconds per call, into ``runs[lib.key][i].seconds``."""
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        for repeat in range(repeats):
            order = libs if repeat % 2 == 0 else libs[::-1]
            for index, transcript in enumerate(transcripts):
                for lib in order:
                    given = copy.deepcopy(transcript.messages)
                    started = time.perf_counter()
                    lib.compile(given)
                    elapsed = time.perf_counter() - started
                    outcome = runs[lib.key][index]
                    outcome.seconds = min(outcome.seconds, elapsed)
            gc.collect()
    finally:
        if was_enabled:
            gc.enable()


# -- figures -----------------------------------------------------------------


def library_figures(lib: Library, outcomes: list[Outcome], corpus: list[Transcript]) -> dict:
    """One library's figures over the corpus (``outcomes[i]`` is its run on ``corpus[i]``)."""
    raw = sum(t.tokens for t in corpus)
    compiled = sum(o.compiled for o in outcomes)
    clamped = sum(max(0, t.tokens - o.compiled) for t, o in zip(corpus, outcomes, strict=True))
    raw_rest = sum(t.tokens_outside_system for t in corpus)
    compiled_rest = sum(o.compiled_outside_system for o in outcomes)
    raw_talk = sum(t.tokens_outside_prompt for t in corpus)
    compiled_talk = sum(o.compiled_outside_prompt for o in outcomes)
    millis = [o.seconds * 1000 for o in outcomes]
    total_s = sum(o.seconds for o in outcomes)
    return {
        "library": lib.label,
        "raw_tokens": raw,
        "compiled_tokens": compiled,
        "token_reduction": _share(raw - compiled, raw),
        "token_reduction_clamped": _share(clamped, raw),
        "token_reduction_outside_system": _share(raw_rest - compiled_rest, raw_rest),
        "raw_tokens_outside_system": raw_rest,
        "token_reduction_outside_prompt": _share(raw_talk - compiled_talk, raw_talk),
        "raw_tokens_outside_prompt": raw_talk,
        "system_prompts": sum(o.system_kept is not None for o in outcomes),
        "system_prompts_kept_verbatim": sum(o.system_kept is True for o in outcomes),
        "first_user_turns": sum(o.first_user_kept is not None for o in outcomes),
        "first_user_turns_kept_verbatim": sum(o.first_user_kept is True for o in outcomes),
        "facts": sum(o.facts for o in outcomes),
        "supersessions": sum(o.supersessions for o in outcomes),
        "retirements": sum(o.retirements for o in outcomes),
        "payloads_compacted": sum(o.payloads for o in outcomes),
        "retirement_violations": sum(o.violations for o in outcomes),
        "contexts_grew": sum(o.compiled > t.tokens for t, o in zip(corpus, outcomes, strict=True)),
        "mutated_input": sum(o.mutated_input for o in outcomes),
        "self_reported": {
            "raw_tokens": sum(o.own_raw for o in outcomes),
            "compiled_tokens": sum(o.own_compiled for o in outcomes),
        },
        "timing": {
            "compile_ms_p50": round(percentile(millis, 0.50), 3),
            "compile_ms_p95": round(percentile(millis, 0.95), 3),
            "compile_ms_total": round(total_s * 1000, 3),
            "mb_per_s": round(sum(t.chars for t in corpus) / 1e6 / total_s, 3),
        },
    }


def _share(part: int, whole: int) -> float:
    return round(part / whole, 6) if whole else 0.0


def recall_figures(lib: Library, corpus: list[Transcript]) -> dict:
    """Identifiers the agent used later, still in the context compiled before the use
    (``labelling.bench.fidelity``): how many turns, identifiers, kept, and the rate."""
    return identifier_recall(lib.compile, [t.messages for t in corpus]).figures()


def measure(path: Path, schema: str, repeats: int, limit: int | None, use_peer: bool) -> dict:
    """Every figure for one corpus, as a JSON-ready dict."""
    corpus = read_corpus(path, limit)
    read = len(corpus)
    libs = [our_library(schema)]
    peer = peer_library(schema) if use_peer else None
    if peer is not None:
        libs.append(peer)
    corpus, runs, errors = warm_all(libs, corpus)
    time_all(libs, corpus, runs, repeats)
    report = {
        "corpus": str(path),
        "schema": schema,
        "estimator": ESTIMATOR_NOTE,
        "repeats": repeats,
        "limit": limit,
        "transcripts": len(corpus),
        "transcripts_read": read,
        "turns": sum(len(t.messages) for t in corpus),
        "characters": sum(t.chars for t in corpus),
        "raw_tokens": sum(t.tokens for t in corpus),
        "peer": peer_note(peer, use_peer),
        "errors": errors,
        "figures": {lib.key: library_figures(lib, runs[lib.key], corpus) for lib in libs},
    }
    for lib in libs:
        report["figures"][lib.key]["identifier_recall"] = recall_figures(lib, corpus)
    gold = [t for t in corpus if t.gold is not None]
    if gold:
        report["gold"] = _gold(libs, runs, corpus, gold)
    if peer is not None:
        report["comparison"] = _comparison(report)
    report["per_transcript"] = _per_transcript(libs, runs, corpus)
    return report


def peer_note(peer: Library | None, asked: bool) -> dict:
    """What the report says about the peer: its version, or why it was not measured."""
    if peer is None:
        why = "not installed (pip install contextgc==0.4.6)" if asked else "skipped (--no-peer)"
        return {"available": False, "why": why}
    version = peer.label.split()[-1]
    return {
        "available": True,
        "package": PEER_PACKAGE,
        "version": version,
        "expected_version": PEER_EXPECTED,
    }


def _gold(libs, runs, corpus, gold) -> dict:
    slots_with_gold = sum(len(t.gold) for t in gold)
    return {
        "transcripts": len(gold),
        "slots_with_gold": slots_with_gold,
        "slot_map": GOLD_ARGS | {f"flights[].{k}": v for k, v in GOLD_FLIGHT_ARGS.items()},
        **{lib.key: gold_figures(runs[lib.key], corpus) for lib in libs},
    }


def _comparison(report: dict) -> dict:
    ours, peer = report["figures"]["ours"], report["figures"]["peer"]
    speedup = ours["timing"]["mb_per_s"] / peer["timing"]["mb_per_s"]
    diff_pp = (ours["token_reduction"] - peer["token_reduction"]) * 100
    out = {
        "throughput_ours_over_peer": round(speedup, 3),
        "token_reduction_diff_pp": round(diff_pp, 3),
        "targets": {
            "throughput_3x": speedup >= TARGET_SPEEDUP,
            "token_reduction_at_least_peer": diff_pp >= 0,
        },
    }
    if "gold" in report:
        mine, theirs = report["gold"]["ours"]["total"], report["gold"]["peer"]["total"]
        out["targets"]["gold_matches_at_least_peer"] = mine["match"] >= theirs["match"]
        out["targets"]["gold_fewer_mismatches"] = mine["mismatch"] < theirs["mismatch"]
    return out


def _per_transcript(libs, runs, corpus) -> list[dict]:
    rows = []
    for index, transcript in enumerate(corpus):
        row = {
            "id": transcript.ident,
            "turns": len(transcript.messages),
            "characters": transcript.chars,
            "raw_tokens": transcript.tokens,
        }
        for lib in libs:
            outcome = runs[lib.key][index]
            row[lib.key] = {
                "compiled_tokens": outcome.compiled,
                "facts": outcome.facts,
                "retirements": outcome.retirements,
                "compile_ms": round(outcome.seconds * 1000, 3),
                "register": outcome.register,
            }
        rows.append(row)
    return rows

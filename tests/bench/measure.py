"""Measure our compiler, and the peer beside it, on a corpus.

    python tests/bench/measure.py CORPUS --schema S [--repeats R] [--limit N] [--json] [--no-peer]

CORPUS is one file in any format ``formats_many`` reads, or a directory whose
files are all read (sorted by name). Both libraries get the same list of
message dicts (``message_to_dict`` of what we parsed), in compact mode, with
the shipped schema of the same name, in the same process.

How the figures are made, so they can be compared:

- Tokens: one estimator for both libraries' input and output, our
  ``message_tokens`` with the chars/4 estimator: ``max(1, len // 4)`` per
  message, over its content plus any tool-call names and arguments. Each
  library's own telemetry counts differently (the peer ignores tool calls),
  so its self-reported totals are kept in the JSON only, as a cross-check.
- Token reduction: Σ(raw − compiled) / Σraw over the corpus. A context that
  grew counts against its library. Also printed: the same with saved ≥ 0 per
  transcript (as telemetry reports it), and with system messages left out.
- Fidelity: whether the first system turn (the agent's policy) and the first
  user turn (often the task) survive verbatim. A library can buy reduction by
  cutting them; these rows show when it does.
- Timing: one untimed warm-up call per library and transcript (it also
  produces every non-timing figure), then R repeats. In each repeat every
  transcript is compiled by both libraries back to back, the order swapped
  on odd repeats, so machine noise hits both alike. Each call gets a fresh
  deep copy (made outside the timer), GC is off during timing and collected
  between repeats. A transcript's time is its best of R; p50/p95 are
  nearest-rank over transcripts; MB/s is characters of input (10^6) over the
  summed best times.
- Gold (tau-bench airline records with ``info.task.actions``): per
  transcript and per slot the gold actions give a value for, the FINAL
  register value is a match (equal to any gold value after normalising case,
  separators and dates), a mismatch, or missing.

Everything printed is deterministic except the timing figures.
"""

from __future__ import annotations

import argparse
import copy
import datetime
import gc
import json
import math
import re
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(ROOT))

import compiler  # noqa: E402
from compiler.formats import formats_many  # noqa: E402
from compiler.messages import message_to_dict  # noqa: E402
from compiler.telemetry import message_tokens  # noqa: E402
from compiler.tokens import CharEstimator  # noqa: E402

ESTIMATOR = CharEstimator()
ESTIMATOR_NOTE = (
    "chars/4 for both libraries: max(1, len // 4) per message over content "
    "+ tool-call names and arguments (compiler.telemetry.message_tokens)"
)
PEER_PACKAGE = "contextgc"
PEER_EXPECTED = "0.4.6"
TARGET_SPEEDUP = 3.0

# Gold action argument → register slot; ``flights[]`` items carry two more.
GOLD_ARGS = {
    "cabin": "cabin_class",
    "reservation_id": "active_reservation",
    "origin": "origin_airport",
    "destination": "destination_airport",
    "user_id": "passenger_id",
}
GOLD_FLIGHT_ARGS = {"flight_number": "flight_number", "date": "flight_date"}
GOLD_SLOTS = (
    "active_reservation",
    "cabin_class",
    "destination_airport",
    "flight_date",
    "flight_number",
    "origin_airport",
    "passenger_id",
)
VERDICTS = ("match", "mismatch", "missing")
CORPUS_YEAR = 2024


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


# -- the corpus --------------------------------------------------------------


@dataclass(frozen=True)
class Transcript:
    ident: str
    messages: list[dict]
    chars: int
    tokens: int
    tokens_outside_system: int
    gold: dict[str, frozenset[str]] | None


class _Chars:
    """A counter for ``message_tokens`` that counts characters."""

    name = "chars"

    def count(self, text: str) -> int:
        return len(text)


def read_corpus(path: Path, limit: int | None = None) -> list[Transcript]:
    """Every transcript in a file, or in each file of a directory (sorted)."""
    files = sorted(p for p in path.iterdir() if p.is_file()) if path.is_dir() else [path]
    found = []
    for file in files:
        for ident, parsed in formats_many(file.read_text(encoding="utf-8")):
            name = ident if not path.is_dir() else f"{file.name}:{ident}"
            found.append(_transcript(name, parsed))
            if limit is not None and len(found) >= limit:
                return found
    return found


def _transcript(ident: str, parsed) -> Transcript:
    messages = [message_to_dict(m) for m in parsed.messages]
    return Transcript(
        ident=ident,
        messages=messages,
        chars=sum(message_tokens(_Chars(), m) for m in messages),
        tokens=sum(message_tokens(ESTIMATOR, m) for m in messages),
        tokens_outside_system=_tokens_outside_system(messages),
        gold=gold_values(parsed.record),
    )


def _tokens_outside_system(messages: list[dict]) -> int:
    return sum(message_tokens(ESTIMATOR, m) for m in messages if m.get("role") != "system")


def first_turn_kept(messages: list[dict], out: list[dict], role: str) -> bool | None:
    """Whether the first non-empty ``role`` turn survives verbatim in some output message.

    For ``system`` that is the agent's policy; for ``user`` usually the task statement.
    None when the transcript has no such turn.

    Example:
        >>> msgs = [{"role": "system", "content": "Be kind."}, {"role": "user", "content": "hi"}]
        >>> header = {"role": "system", "content": "[STATE]\\n\\nBe kind."}
        >>> first_turn_kept(msgs, [header], "system")
        True
        >>> first_turn_kept(msgs, [{"role": "system", "content": "Be ... [TRUNCATED]"}], "system")
        False
        >>> first_turn_kept(msgs, [], "tool") is None
        True
    """
    for message in messages:
        text = message.get("content")
        if message.get("role") == role and isinstance(text, str) and text.strip():
            return any(text in (m.get("content") or "") for m in out)
    return None


def gold_values(record) -> dict[str, frozenset[str]] | None:
    """Slot → every value the gold actions give it; None without gold actions.

    Example:
        >>> flights = [{"flight_number": "HAT1", "date": "2024-05-20"},
        ...            {"flight_number": "HAT2", "date": "2024-05-20"}]
        >>> action = {"name": "book", "kwargs": {"cabin": "economy", "flights": flights}}
        >>> gold = gold_values({"info": {"task": {"actions": [action]}}})
        >>> for slot, values in gold.items():
        ...     print(slot, sorted(values))
        cabin_class ['economy']
        flight_date ['2024-05-20']
        flight_number ['HAT1', 'HAT2']
        >>> gold_values({"traj": []}) is None
        True
    """
    actions = _dig(record, "info", "task", "actions")
    if not isinstance(actions, list):
        return None
    gold: dict[str, set[str]] = {}
    for action in actions:
        kwargs = _dig(action, "kwargs")
        if not isinstance(kwargs, dict):
            continue
        _gather(gold, kwargs, GOLD_ARGS)
        for flight in kwargs.get("flights") or ():
            if isinstance(flight, dict):
                _gather(gold, flight, GOLD_FLIGHT_ARGS)
    return {slot: frozenset(values) for slot, values in sorted(gold.items())}


def _dig(value, *keys):
    for key in keys:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


def _gather(gold: dict[str, set[str]], kwargs: dict, mapping: dict[str, str]) -> None:
    for arg, slot in mapping.items():
        value = kwargs.get(arg)
        if isinstance(value, str | int) and not isinstance(value, bool) and str(value).strip():
            gold.setdefault(slot, set()).add(str(value))


# -- normalising values for the gold comparison -----------------------------

_MONTH_NAMES = (
    "january", "february", "march", "april", "may", "june",
    "july", "august", "september", "october", "november", "december",
)  # fmt: skip
_MONTHS = {
    name: number
    for number, full in enumerate(_MONTH_NAMES, start=1)
    for name in (full, full[:3], "sept" if full == "september" else full)
}
_ORDINAL = r"(\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"(?:,?\s+(\d{4}))?"
_DATES = (
    (re.compile(r"(\d{4})-(\d{1,2})-(\d{1,2})"), ("y", "m", "d")),
    (re.compile(rf"([a-z]+)\.?\s+{_ORDINAL}{_YEAR}"), ("mon", "d", "y")),
    (re.compile(rf"{_ORDINAL}\s+(?:of\s+)?([a-z]+)\.?{_YEAR}"), ("d", "mon", "y")),
    (re.compile(r"(\d{1,2})/(\d{1,2})(?:/(\d{4}))?"), ("m", "d", "y")),
)


def iso_date(text: str) -> str | None:
    """``text`` as an ISO date if it is one (the year defaults to 2024), else None.

    Example:
        >>> [iso_date(t) for t in ("May 20", "May 20, 2024", "2024-05-20", "20th of May")]
        ['2024-05-20', '2024-05-20', '2024-05-20', '2024-05-20']
        >>> iso_date("May 32"), iso_date("economy")
        (None, None)
    """
    text = " ".join(text.casefold().split())
    for pattern, fields in _DATES:
        found = pattern.fullmatch(text)
        if found:
            return _date(dict(zip(fields, found.groups(), strict=True)))
    return None


def _date(parts: dict[str, str | None]) -> str | None:
    month = _MONTHS.get(parts["mon"]) if "mon" in parts else int(parts["m"])
    if month is None:
        return None
    try:
        day = datetime.date(int(parts["y"] or CORPUS_YEAR), month, int(parts["d"]))
    except ValueError:
        return None
    return day.isoformat()


def normalise(slot: str, value: str) -> str:
    """The form two values of ``slot`` are compared in.

    Example:
        >>> normalise("cabin_class", "Basic_Economy"), normalise("cabin_class", "basic economy")
        ('basic economy', 'basic economy')
        >>> normalise("flight_date", "May 20th"), normalise("flight_number", " hat136. ")
        ('2024-05-20', 'hat136')
    """
    text = str(value).strip().strip(".,;:*`'\"()").strip()
    if slot == "flight_date" and iso_date(text):
        return iso_date(text)
    text = " ".join(re.split(r"[\s_-]+", text.casefold())).strip()
    if slot == "cabin_class":
        text = text.removesuffix(" class")
    return text


def verdict(slot: str, value, golds: frozenset[str]) -> str:
    """match, mismatch or missing, for one register value against its gold values.

    Example:
        >>> verdict("flight_date", "May 20", frozenset({"2024-05-20"}))
        'match'
        >>> verdict("cabin_class", None, frozenset({"economy"}))
        'missing'
    """
    if value is None or not str(value).strip():
        return "missing"
    wanted = {normalise(slot, g) for g in golds}
    return "match" if normalise(slot, value) in wanted else "mismatch"


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
    seconds: float = math.inf


def warm_up(lib: Library, transcript: Transcript) -> Outcome:
    """One untimed call; every non-timing figure comes from it."""
    given = copy.deepcopy(transcript.messages)
    out, tel = lib.compile(given)
    return Outcome(
        compiled=sum(message_tokens(ESTIMATOR, m) for m in out),
        compiled_outside_system=_tokens_outside_system(out),
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


def percentile(values: list[float], share: float) -> float:
    """Nearest-rank percentile.

    Example:
        >>> percentile([4.0, 1.0, 3.0, 2.0], 0.5), percentile([4.0, 1.0, 3.0, 2.0], 0.95)
        (2.0, 4.0)
    """
    ordered = sorted(values)
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


# -- figures -----------------------------------------------------------------


def library_figures(lib: Library, outcomes: list[Outcome], corpus: list[Transcript]) -> dict:
    raw = sum(t.tokens for t in corpus)
    compiled = sum(o.compiled for o in outcomes)
    clamped = sum(max(0, t.tokens - o.compiled) for t, o in zip(corpus, outcomes, strict=True))
    raw_rest = sum(t.tokens_outside_system for t in corpus)
    compiled_rest = sum(o.compiled_outside_system for o in outcomes)
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


def gold_figures(outcomes: list[Outcome], corpus: list[Transcript]) -> dict:
    """Per-slot and total match / mismatch / missing, and every mismatch."""
    slots = {slot: dict.fromkeys(VERDICTS, 0) for slot in GOLD_SLOTS}
    mismatches = []
    for transcript, outcome in zip(corpus, outcomes, strict=True):
        for slot, golds in (transcript.gold or {}).items():
            value = outcome.register.get(slot)
            found = verdict(slot, value, golds)
            slots[slot][found] += 1
            if found == "mismatch":
                mismatches.append(
                    {
                        "transcript": transcript.ident,
                        "slot": slot,
                        "register": value,
                        "gold": sorted(golds),
                    }
                )
    total = {v: sum(counts[v] for counts in slots.values()) for v in VERDICTS}
    return {"slots": slots, "total": total, "mismatches": mismatches}


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
        "peer": _peer_note(peer, use_peer),
        "errors": errors,
        "figures": {lib.key: library_figures(lib, runs[lib.key], corpus) for lib in libs},
    }
    gold = [t for t in corpus if t.gold is not None]
    if gold:
        report["gold"] = _gold(libs, runs, corpus, gold)
    if peer is not None:
        report["comparison"] = _comparison(report)
    report["per_transcript"] = _per_transcript(libs, runs, corpus)
    return report


def _peer_note(peer: Library | None, asked: bool) -> dict:
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


# -- printing ----------------------------------------------------------------


def render(report: dict) -> str:
    """The report as a plain-text table; ``--json`` prints the dict instead."""
    figures = report["figures"]
    keys = list(figures)
    lines = [
        f"corpus       {report['corpus']}",
        f"schema       {report['schema']} (compact mode for both)",
        f"ours         {figures['ours']['library']}",
        f"peer         {_peer_line(report['peer'])}",
        f"tokens       {report['estimator']}",
        f"timing       best of {report['repeats']} per transcript, interleaved, "
        "GC off; p50/p95 nearest-rank",
        "",
        f"transcripts {report['transcripts']:,}   turns {report['turns']:,}   "
        f"characters {report['characters']:,}   raw tokens {report['raw_tokens']:,}",
        "",
    ]
    table = [["figure", *keys, *(["ours vs peer"] if "comparison" in report else [])]]
    table += _rows(report, keys)
    lines += _columns(table)
    for error in report["errors"]:
        who = f"{error['transcript']}: {error['library']}"
        lines.append(f"set aside: {who} raised {error['error']}")
    if "gold" in report:
        lines += ["", *_gold_lines(report["gold"], keys)]
    if "comparison" in report:
        lines += ["", *_target_lines(report)]
    return "\n".join(lines)


def _peer_line(peer: dict) -> str:
    if not peer["available"]:
        return peer["why"]
    note = "" if peer["version"] == peer["expected_version"] else f" (expected {PEER_EXPECTED})"
    return f"{peer['package']} {peer['version']}{note}"


def _rows(report: dict, keys: list[str]) -> list[list[str]]:
    n = report["transcripts"]
    figures = report["figures"]
    comparison = report.get("comparison")

    def row(label, pick, fmt=str, versus=None):
        cells = [fmt(pick(figures[k])) for k in keys]
        return [label, *cells, *([versus or ""] if comparison else [])]

    pct = "{:.1%}".format
    ms = "{:.3f}".format
    raw = report["raw_tokens"]
    reduction_label = f"token reduction, Σ(raw−compiled)/Σraw (N={n}, Σraw={raw:,})"
    rest = figures["ours"]["raw_tokens_outside_system"]
    prompts = figures["ours"]["system_prompts"]
    rows = [
        row(
            reduction_label,
            lambda f: f["token_reduction"],
            pct,
            comparison and f"{comparison['token_reduction_diff_pp']:+.1f} pp",
        ),
        row(
            f"  same, saved clamped at 0 per transcript (N={n})",
            lambda f: f["token_reduction_clamped"],
            pct,
        ),
        row(
            f"  same, system messages left out (N={n}, Σraw={rest:,})",
            lambda f: f["token_reduction_outside_system"],
            pct,
        ),
        row("facts (live in final registers, Σ)", lambda f: f["facts"]),
        row("supersessions (values replaced, Σ)", lambda f: f["supersessions"]),
        row("retirements (turns retired, Σ)", lambda f: f["retirements"]),
        row("payloads compacted (Σ)", lambda f: f["payloads_compacted"]),
        row("retirement violations (Σ)", lambda f: f["retirement_violations"]),
        row(f"contexts that grew (of N={n})", lambda f: _count_pct(f["contexts_grew"], n)),
        row(f"compile ms p50 (N={n})", lambda f: f["timing"]["compile_ms_p50"], ms),
        row(f"compile ms p95 (N={n})", lambda f: f["timing"]["compile_ms_p95"], ms),
        row("compile ms total", lambda f: f["timing"]["compile_ms_total"], ms),
        row(
            f"throughput MB/s ({report['characters']:,} chars / total)",
            lambda f: f["timing"]["mb_per_s"],
            "{:.2f}".format,
            comparison and f"{comparison['throughput_ours_over_peer']:.2f}×",
        ),
    ]
    tasks = figures["ours"]["first_user_turns"]
    kept = [
        (prompts, f"system prompt kept verbatim (of N={prompts} with one)",
         "system_prompts_kept_verbatim"),
        (tasks, f"first user turn kept verbatim (of N={tasks} with one)",
         "first_user_turns_kept_verbatim"),
    ]  # fmt: skip
    for at, (count, label, key) in enumerate((k for k in kept if k[0]), start=3):
        rows.insert(at, row(label, lambda f, key=key, n=count: _count_pct(f[key], n)))
    if any(figures[k]["mutated_input"] for k in keys):
        rows.append(row("inputs mutated by the call", lambda f: f["mutated_input"]))
    return rows


def _count_pct(count: int, n: int) -> str:
    return f"{count} ({count / n:.1%})" if n else str(count)


def _columns(table: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in table) for i in range(len(table[0]))]
    return [
        "  ".join(
            cell.ljust(w) if i == 0 else cell.rjust(w)
            for i, (cell, w) in enumerate(zip(r, widths, strict=True))
        ).rstrip()
        for r in table
    ]


def _gold_lines(gold: dict, keys: list[str]) -> list[str]:
    head = (
        f"gold: FINAL register vs info.task.actions, {gold['transcripts']} transcripts, "
        f"{gold['slots_with_gold']} (transcript, slot) pairs with a gold value"
    )
    table = [["slot (N pairs)", *(f"{k} {v}" for k in keys for v in VERDICTS)]]
    for slot in [*GOLD_SLOTS, "total"]:
        counts = {k: gold[k]["total"] if slot == "total" else gold[k]["slots"][slot] for k in keys}
        n = sum(counts[keys[0]].values())
        if n:
            cells = [_count_pct(counts[k][v], n) for k in keys for v in VERDICTS]
            table.append([f"{slot} (N={n})", *cells])
    return [head, *_columns(table)]


def _target_lines(report: dict) -> list[str]:
    comparison = report["comparison"]
    met = comparison["targets"]
    lines = [
        "targets",
        _target(
            f"throughput ≥ {TARGET_SPEEDUP:g}× peer: "
            f"{comparison['throughput_ours_over_peer']:.2f}×",
            met["throughput_3x"],
        ),
        _target(
            f"token reduction ≥ peer: {comparison['token_reduction_diff_pp']:+.1f} pp "
            f"(N={report['transcripts']})",
            met["token_reduction_at_least_peer"],
        ),
    ]
    if "gold" in report:
        mine, theirs = report["gold"]["ours"]["total"], report["gold"]["peer"]["total"]
        n = report["gold"]["slots_with_gold"]
        lines += [
            _target(
                f"gold matches ≥ peer: {mine['match']} vs {theirs['match']} (N={n})",
                met["gold_matches_at_least_peer"],
            ),
            _target(
                f"gold mismatches < peer: {mine['mismatch']} vs {theirs['mismatch']} (N={n})",
                met["gold_fewer_mismatches"],
            ),
        ]
    return lines


def _target(text: str, ok: bool) -> str:
    return f"  {'met   ' if ok else 'MISSED'}  {text}"


# -- command line ------------------------------------------------------------


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", type=Path, help="a corpus file, or a directory of them")
    parser.add_argument("--schema", required=True, help="schema name, for both libraries")
    parser.add_argument("--repeats", type=_positive, default=5, help="timed repeats (best of)")
    parser.add_argument("--limit", type=_positive, default=None, help="first N transcripts only")
    parser.add_argument("--json", action="store_true", help="print every figure as JSON")
    parser.add_argument("--no-peer", action="store_true", help="measure ours only")
    args = parser.parse_args(argv)
    if not args.corpus.exists():
        parser.error(f"no such corpus: {args.corpus}")
    report = measure(args.corpus, args.schema, args.repeats, args.limit, not args.no_peer)
    print(json.dumps(report, indent=2, ensure_ascii=False) if args.json else render(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())

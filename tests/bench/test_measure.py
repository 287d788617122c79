"""The benchmark command runs on a small tau-bench fixture and prints every row.

Register values are not asserted: the schemas are refitted often and the gold
figures move with them. What must hold is the shape of the report, the counts
that depend only on the corpus, and determinism apart from timing.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace as NS

import pytest

from compiler.layout.telemetry import message_tokens
from tests.bench.fit_schemas import score_gold

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "tests" / "bench" / "measure.py"
FIXTURE = ROOT / "tests" / "fixtures" / "formats" / "tau-airline-two-records.json"
ROWS = (
    "token reduction",
    "same, system messages and first user turn left out (N=2, Σraw=",
    "first user turn kept verbatim (of N=2 with one)",
    "system prompt kept verbatim (of N=2 with one)",
    "facts (live in final registers",
    "supersessions (values replaced",
    "retirements (turns retired",
    "payloads compacted",
    "retirement violations",
    "contexts that grew (of N=2)",
    "identifiers used later, kept in context (N=2 in 1 turns)",
    "compile ms p50 (N=2)",
    "compile ms p95 (N=2)",
    "throughput MB/s",
    "gold: FINAL register vs info.task.actions, 2 transcripts",
    "total (N=7)",
)
TIMING_KEYS = ("timing", "compile_ms", "comparison")


def _load():
    spec = importlib.util.spec_from_file_location("measure_under_test", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while being built
    spec.loader.exec_module(module)
    return module


measure = _load()


def _report(*extra: str) -> dict:
    return measure.measure(FIXTURE, "travel", 1, None, "--peer" in extra)


def _without_timing(value):
    if isinstance(value, dict):
        return {k: _without_timing(v) for k, v in value.items() if k not in TIMING_KEYS}
    if isinstance(value, list):
        return [_without_timing(v) for v in value]
    return value


def test_it_prints_every_row_for_a_tau_bench_fixture():
    done = subprocess.run(
        [sys.executable, str(SCRIPT), str(FIXTURE), "--schema", "travel", "--repeats", "1",
         "--no-peer"],
        capture_output=True, text=True, check=True, cwd=ROOT / "tests",
    )  # fmt: skip
    assert "transcripts 2   turns 24" in done.stdout
    missing = [row for row in ROWS if row not in done.stdout]
    assert missing == []


def test_it_counts_the_corpus_and_the_gold_pairs():
    report = _report()
    counted = {k: report[k] for k in ("transcripts", "turns", "raw_tokens")}
    assert counted == {"transcripts": 2, "turns": 24, "raw_tokens": 4297}
    assert report["gold"]["slots_with_gold"] == 7
    assert sum(report["gold"]["ours"]["total"].values()) == 7


def test_it_sets_the_policy_and_the_task_aside_for_the_conversation_alone():
    report = _report()
    ours = report["figures"]["ours"]
    raw = 0
    for transcript in measure.read_corpus(FIXTURE):
        rest = [m for m in transcript.messages if m["role"] != "system"]
        task = next(m for m in rest if m["role"] == "user")
        raw += sum(message_tokens(measure.ESTIMATOR, m) for m in rest if m is not task)
    assert 0 < ours["raw_tokens_outside_prompt"] == raw < ours["raw_tokens_outside_system"]
    assert 0 < ours["token_reduction_outside_prompt"] < 1


def test_it_checks_identifiers_the_agent_used_later_against_the_compiled_prefix():
    recall = _report()["figures"]["ours"]["identifier_recall"]
    assert recall == {"turns": 1, "wanted": 2, "kept": 2, "rate": 1.0}


def test_it_is_deterministic_apart_from_timing():
    assert _without_timing(_report()) == _without_timing(_report())


def test_it_emits_json_with_a_limit(capsys):
    measure.main([str(FIXTURE), "--schema", "travel", "--repeats", "1", "--limit", "1",
                  "--json", "--no-peer"])  # fmt: skip
    report = json.loads(capsys.readouterr().out)
    assert (report["transcripts"], report["peer"]["available"]) == (1, False)


def test_it_normalises_dates_cabins_and_case():
    pairs = [
        ("flight_date", "May 20", "2024-05-20"),
        ("flight_date", "May 20, 2024", "2024-05-20"),
        ("cabin_class", "Basic Economy", "basic_economy"),
        ("flight_number", "hat136", "HAT136"),
    ]
    verdicts = [measure.verdict(slot, value, frozenset({gold})) for slot, value, gold in pairs]
    assert verdicts == ["match"] * 4


def test_it_measures_the_peer_beside_ours():
    pytest.importorskip("contextgc")
    report = _report("--peer")
    assert report["peer"]["version"] == "0.4.6"
    assert set(report["figures"]) == {"ours", "peer"}
    assert set(report["comparison"]["targets"]) == {
        "throughput_3x",
        "token_reduction_at_least_peer",
        "gold_matches_at_least_peer",
        "gold_fewer_mismatches",
    }


def test_scripts_that_import_it_still_find_the_benchmark_names():
    names = ("ESTIMATOR", "Path", "read_corpus", "our_library", "peer_library", "verdict")
    assert [n for n in names if not hasattr(measure, n)] == []
    corpus = measure.read_corpus(measure.Path(FIXTURE))
    assert [t.ident for t in corpus] == ["task0-trial0", "task1-trial0"]
    assert measure.our_library("travel").key == "ours"


def test_the_measurement_core_runs_without_django():
    blocked = "import sys; sys.modules['django'] = None; "
    modules = ("compare", "gold", "render", "stats")
    code = blocked + "; ".join(f"import labelling.bench.{m}" for m in modules)
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_the_schema_fit_scores_gold_with_the_benchmarks_scorer():
    flights = [{"flight_number": "HAT136", "date": "2024-05-20"}]
    kwargs = {"cabin": "basic_economy", "user_id": "mia_li_3668", "flights": flights}
    record = {"info": {"task": {"actions": [{"name": "book", "kwargs": kwargs}]}}}
    final = {"cabin_class": "Basic Economy", "flight_date": "May 21", "passenger_id": "Mia_Li_3668"}
    register = NS(active=[NS(slot=k, value=v) for k, v in final.items()])
    transcripts = [
        NS(record=record, register=register),
        NS(record={"traj": []}, register=register),  # no gold actions: not scored
    ]
    slots = ("cabin_class", "flight_date", "flight_number", "origin_airport", "passenger_id")
    table = score_gold(NS(slot_names=slots), transcripts)
    found = {slot: next(k for k, n in row.items() if n) for slot, row in table.items()}
    assert found == {
        "cabin_class": "match",
        "flight_date": "mismatch",
        "flight_number": "missing",
        "origin_airport": "no_gold",
        "passenger_id": "match",
    }
    assert all(sum(row.values()) == 1 for row in table.values())

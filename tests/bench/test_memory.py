"""The memory benchmark measures a compile's peak against its input, for ours and the peer."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "tests" / "bench" / "memory.py"
MESSAGES = [
    {"role": "system", "content": "You are a travel agent."},
    {"role": "user", "content": "Book flight HAT123 in economy, pay with card 4242."},
    {"role": "assistant", "content": "Booked HAT123 in economy."},
]


def _load():
    spec = importlib.util.spec_from_file_location("memory_under_test", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


memory = _load()


def test_a_transcript_row_has_its_size_and_a_positive_peak_and_ratio_per_way():
    calls = memory.compilers("travel", "compact")
    row = memory.measure_transcript(MESSAGES, calls)
    assert row["size"] == memory.json_size(MESSAGES) > 0
    assert row["messages"] == 3
    for key in calls:
        assert row[key]["peak"] > 0
        assert row[key]["ratio"] == round(row[key]["peak"] / row["size"], 3)
        # (what the call hands back is allocated at its peak too)
        assert 0 < row[key]["held_ratio"] <= row[key]["ratio"]


def test_a_corpus_summary_counts_every_transcript_of_each_way():
    calls = memory.compilers("travel", "cache_friendly", peer=False)
    rows = [memory.measure_transcript(MESSAGES[: n + 1], calls) for n in range(3)]
    figures = memory.summary(rows, "ours")
    assert figures["n"] == 3
    assert 0 < figures["median"] <= figures["p95"] <= figures["max"]
    assert figures["growth"] > 0
    assert 0 < figures["held_median"] <= figures["max"]


def test_the_report_leads_with_the_cold_first_compile_of_the_first_corpus(tmp_path):
    corpus = next(iter(memory.CORPORA))  # the first corpus a report names, as a file here
    (tmp_path / corpus).parent.mkdir(parents=True)
    (tmp_path / corpus).write_text(json.dumps([{"task_id": 0, "trial": 0, "traj": MESSAGES}]))
    first = memory.first_compile(tmp_path, list(memory.CORPORA))
    assert first["corpus"] == corpus and first["size"] == memory.json_size(MESSAGES)
    assert first["peak"] > 0 and first["ratio"] == round(first["peak"] / first["size"], 3)
    line = memory.render({"first_compile": first, "corpora": {}}).splitlines()[1]
    assert line.startswith("cold first compile of the process (no warm-up)")

"""The speed comparison of two trees times each transcript in a subprocess importing one tree."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "tests" / "bench" / "versions.py"
MESSAGES = [
    {"role": "user", "content": "Book flight HAT123 in economy."},
    {"role": "assistant", "content": "Booked HAT123 in economy."},
]


def _load():
    spec = importlib.util.spec_from_file_location("versions_under_test", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


versions = _load()


def test_a_worker_gives_one_positive_time_per_transcript(tmp_path):
    data = tmp_path / "corpus.json"
    data.write_text(json.dumps({"schema": "travel", "transcripts": [MESSAGES, MESSAGES[:1]]}))
    seconds = versions.run_worker(ROOT, data, repeats=2, mode="compact")
    assert len(seconds) == 2
    assert all(0 < s < 10 for s in seconds)


def test_a_worker_refuses_a_tree_without_a_compiler(tmp_path):
    data = tmp_path / "corpus.json"
    data.write_text(json.dumps({"schema": "travel", "transcripts": [MESSAGES]}))
    with pytest.raises(RuntimeError, match="failed"):
        versions.run_worker(tmp_path, data, repeats=1, mode="compact")


def test_a_worker_times_cpu_time_when_asked(tmp_path):
    data = tmp_path / "corpus.json"
    data.write_text(json.dumps({"schema": "travel", "transcripts": [MESSAGES]}))
    seconds = versions.run_worker(ROOT, data, repeats=1, mode="compact", clock="cpu")
    assert len(seconds) == 1 and 0 < seconds[0] < 10


def test_the_report_names_the_clock_it_timed():
    entry = {"n": 1, "chars": 10**6, "rounds": [{"before": [1.0], "after": [0.5]}]}
    entry.update(versions.figures(entry))
    text = versions.render(
        {"mode": "compact", "clock": "cpu", "rounds": 1, "repeats": 1, "corpora": {"c": entry}}
    )
    assert "(cpu time)" in text and "+100.0%" in text

"""The corpus report: every figure with its N, the same figures as the benchmark, and
no precision figure that no label supports.

Register values follow the shipped schemas, which are refitted; the figures are
compared with the benchmark's (labelling.bench, run by tests/bench/measure.py) on the
same fixture rather than pinned, and counts that depend only on the corpus are pinned.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from labelling.bench import compare as bench
from labelling.labels import dumps, export_worksheet
from labelling.measurement.corpus_report import corpus_report
from labelling.measurement.management.commands.measure import Command
from labelling.measurement.measure import Item, cap_per_repo, measure_items, read_path
from labelling.measurement.measure_render import render

FORMATS = Path(__file__).resolve().parent.parent / "fixtures" / "formats"
TAU = FORMATS / "tau-airline-two-records.json"
NEBIUS = FORMATS / "nebius-two-blocks.txt"
TIMING = ("timing", "compile_ms", "seconds")


def _report(path: Path = TAU, schema: str = "travel", labels=None, peer=False) -> dict:
    rows, errors, note = measure_items(read_path(path), schema, repeats=1, use_peer=peer)
    return corpus_report(
        rows, errors, corpus=path.name, schema=schema, repeats=1, peer=note, labels=labels
    )


def _without_timing(value):
    if isinstance(value, dict):
        return {k: _without_timing(v) for k, v in value.items() if k not in TIMING}
    if isinstance(value, list):
        return [_without_timing(v) for v in value]
    return value


def _label(row: dict, verdict: str = "correct", at: int = 0, **changes) -> dict:
    entry = row["ours"]["history"][at]
    label = {
        "transcript": row["ident"],
        "slot": entry["slot"],
        "turn": entry["turn"],
        "value": entry["value"],
        "verdict": verdict,
    }
    return {**label, **changes}


def test_it_counts_the_corpus():
    header = _report()["header"]
    assert (header["transcripts"], header["turns"]["total"], header["raw_tokens"]) == (2, 24, 4297)
    assert header["models"] == {"unknown": 2}


def test_it_names_transcripts_as_label_files_do():
    corpora = FORMATS.parent
    assert [i.ident for i in read_path(TAU, corpora)] == [
        "formats/tau-airline-two-records.json#task0-trial0",
        "formats/tau-airline-two-records.json#task1-trial0",
    ]


def test_its_figures_are_the_benchmarks():
    ours = _report()
    theirs = bench.measure(TAU, "travel", 1, None, False)
    assert _without_timing(ours["figures"]["ours"]) == _without_timing(theirs["figures"]["ours"])
    assert _without_timing(ours["gold"]["ours"]) == _without_timing(theirs["gold"]["ours"])


def test_it_reports_the_same_figures_whatever_the_order_of_the_rows():
    rows, errors, note = measure_items(read_path(TAU), "travel", repeats=1, use_peer=False)
    forward = corpus_report(rows, errors, corpus="c", schema="travel", repeats=1, peer=note)
    backward = corpus_report(rows[::-1], errors, corpus="c", schema="travel", repeats=1, peer=note)
    assert _without_timing(forward) == _without_timing(backward)


def test_it_refuses_a_precision_figure_without_labels():
    precision = _report()["precision"]
    assert (precision["figure"], precision["why_no_figure"]) == (
        False,
        "no labels were supplied for this schema",
    )
    assert "NO PRECISION FIGURE" in render(_report())


def test_it_refuses_a_precision_figure_from_labels_about_another_corpus():
    labels = {"rows": [{"transcript": "x#1", "slot": "s", "turn": 0, "value": "v",
                        "verdict": "correct"}]}  # fmt: skip
    precision = _report(labels=labels)["precision"]
    assert precision["figure"] is False
    assert precision["why_no_figure"].startswith("none of the 1 labels")


def test_a_label_whose_extraction_is_no_longer_made_is_stale_not_counted():
    row = measure_items(read_path(TAU), "travel", repeats=1, use_peer=False)[0][0]
    labels = {"rows": [_label(row, value="not what the compiler says")]}
    precision = _report(labels=labels)["precision"]
    assert (precision["matched"], len(precision["stale"]), precision["figure"]) == (0, 1, False)


def test_it_prints_the_labels_rows_units_and_interval():
    rows = measure_items(read_path(TAU), "travel", repeats=1, use_peer=False)[0]
    labels = {
        "rows": [
            _label(rows[0]),
            _label(rows[0], "incorrect", at=1),
            _label(rows[0], "unclear", at=1, slot="never"),
        ]
    }
    precision = _report(labels=labels)["precision"]
    assert precision["all"] == {
        "rows": 2,
        "correct": 1,
        "incorrect": 1,
        "row_precision": 0.5,
        "units": 2,
        "units_correct": 1,
        "unit_precision": 0.5,
        "wilson95": [0.095, 0.905],
        "warnings": [
            "n is small (2 < 20 units): read the interval",
            "the 95% interval is 81 points wide",
        ],
    }
    text = render(_report(labels=labels))
    assert "JUDGED rows          2  (correct 1, incorrect 1)" in text
    assert "independent units    2  precision 50.0% (n=2, 95% CI 10%–90%)" in text


def test_rows_of_one_family_turn_and_slot_are_one_unit():
    rows = measure_items(read_path(TAU), "travel", repeats=1, use_peer=False)[0]
    # Two trials of one task judged at the same turn and slot: one piece of evidence.
    rows[1]["ours"]["history"].append({**rows[0]["ours"]["history"][0]})
    one = _label(rows[0], family="task0")
    two = _label(rows[1], family="task0")
    report = corpus_report(
        rows, [], corpus="c", schema="travel", repeats=1, peer={}, labels={"rows": [one, two]}
    )
    assert (report["precision"]["all"]["rows"], report["precision"]["all"]["units"]) == (2, 1)


def test_it_caps_transcripts_per_repository():
    items = read_path(NEBIUS)
    kept, cap = cap_per_repo(items, 1)
    assert [i.repo for i in items] == ["AnalogJ/lexicon", "AnalogJ/lexicon"]
    assert (len(kept), cap["dropped"]) == (1, {"AnalogJ/lexicon": 1})


def test_it_reads_the_model_where_the_corpus_says_it():
    items = read_path(NEBIUS)
    rows = measure_items(items, "coding", repeats=1, use_peer=False)[0]
    report = corpus_report(rows, [], corpus="n", schema="coding", repeats=1, peer={})
    assert report["header"]["models"] == {"swe-agent-llama-70b": 2}
    assert report["header"]["repositories"] == {"AnalogJ/lexicon": 2}


def test_a_transcript_a_library_fails_on_is_set_aside_and_reported(monkeypatch):
    def broken(messages):
        raise RuntimeError("boom")

    real = bench.our_library

    def fake(schema):
        lib = real(schema)
        return bench.Library(lib.key, lib.label, broken, lib.supersessions)

    monkeypatch.setattr(bench, "our_library", fake)
    rows, errors, _ = measure_items(read_path(TAU), "travel", repeats=1, use_peer=False)
    assert rows == [] and [e["error"] for e in errors] == ["RuntimeError: boom"] * 2


def test_it_measures_the_peer_beside_ours():
    pytest.importorskip("contextgc")
    report = _report(peer=True)
    assert report["peer"]["version"] == "0.4.6"
    assert set(report["figures"]) == {"ours", "peer"}
    assert "peer             contextgc 0.4.6" in render(report)


def test_the_command_prints_every_figure_with_its_n(capsys):
    call_command("measure", str(TAU), "--schema", "travel", "--repeats", "1", "--no-peer")
    out = capsys.readouterr().out
    for row in (
        "transcripts      2",
        "facts extracted (history entries, Σ, N=2)",
        "keys re-asserted (values replaced, Σ, N=2)",
        "token reduction Σ(raw−compiled)/Σraw (N=2)",
        "payloads compacted (Σ, N=2)",
        "turns retired (Σ, N=2)",
        "retirement violations (Σ, N=2)",
        "contexts that grew (of N=2)",
        "compile ms p50 (N=2)",
        "compile ms p95 (N=2)",
        "NO PRECISION FIGURE",
    ):
        assert row in out


def test_the_command_takes_a_label_file(tmp_path, capsys):
    row = measure_items(read_path(TAU), "travel", repeats=1, use_peer=False)[0][0]
    label = _label(row, transcript=f"{TAU.name}#{row['external_id']}")
    path = tmp_path / "labels.json"
    path.write_text(json.dumps({"rows": [label]}))
    call_command("measure", str(TAU), "--schema", "travel", "--repeats", "1", "--no-peer",
                 "--labels", str(path), "--json")  # fmt: skip
    report = json.loads(capsys.readouterr().out)
    assert (report["precision"]["matched"], report["precision"]["all"]["rows"]) == (1, 1)


def test_the_command_refuses_what_it_cannot_find(db):
    with pytest.raises(CommandError, match="no stored corpus"):
        call_command("measure", "no-such-thing", "--schema", "travel", "--corpora", "/nonexistent")


def test_an_item_carries_its_repository():
    assert Item("f#a__b-1#0", "a__b-1#0", []).repo == "a/b"


def test_the_measure_command_reads_a_label_file_the_app_exported(finished, tmp_path):
    path = tmp_path / "labels.json"
    path.write_text(dumps(export_worksheet(finished)))
    labels = Command()._labels({"labels": path}, None)
    assert len(labels["rows"]) == 7 and labels["source"] == str(path)
    path.write_text('{"labels": []}')
    with pytest.raises(CommandError, match="neither a label file"):
        Command()._labels({"labels": path}, None)

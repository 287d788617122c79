"""The loop's bill per strategy for one transcript, as the benchmark and the report count it."""

from __future__ import annotations

import json
from pathlib import Path

from labelling.bench.loop_bill import (
    RAW,
    Totals,
    figures,
    loop_compact,
    masking,
    ours,
    run_one,
)

# a real 62-message tau-bench airline trajectory (the site's load-test fixture)
TRAJECTORY = Path(__file__).resolve().parents[1] / "fixtures" / "site"


def airline() -> list[dict]:
    path = TRAJECTORY / "airline-task3-trial0-62-messages.json"
    return json.loads(path.read_text(encoding="utf-8"))


def test_the_raw_history_reads_all_but_the_new_tail_from_the_cache():
    messages = airline()
    raw = run_one(messages, RAW, "chars")
    assert raw.calls == sum(1 for i, m in enumerate(messages) if i and m["role"] == "assistant")
    assert raw.costs["none"] == raw.tokens
    # a prompt that only grows is read from the cache after its first 1,024 tokens
    assert raw.costs["openai@0.1"] < 0.5 * raw.tokens
    assert raw.costs["openai@0.1"] < raw.costs["openai@0.5"] < raw.costs["none"]
    assert raw.system == [1, 1] and raw.first_user == [1, 1]


def test_masking_sends_less_but_pays_for_every_rewrite_of_the_prefix():
    messages = airline()
    raw, masked = run_one(messages, RAW, "chars"), run_one(messages, masking(3), "chars")
    assert masked.tokens < raw.tokens
    # each newly masked output rewrites the prompt from that point, so the cache breaks
    assert masked.costs["openai@0.1"] > raw.costs["openai@0.1"] * (masked.tokens / raw.tokens)


def test_figures_set_a_strategy_against_the_raw_history():
    messages = airline()
    raw, compact = run_one(messages, RAW, "chars"), run_one(messages, ours("compact", "travel"))
    found = figures("compact", compact, raw)
    assert found["tokens_vs_raw"] == round(compact.tokens / raw.tokens, 4)
    assert found["billed_vs_raw"]["none"] == round(compact.costs["none"] / raw.costs["none"], 4)
    assert found["identifiers"]["wanted"] == compact.wanted > 0
    assert found["calls"] == raw.calls


def test_totals_survive_json_and_add_up_in_any_order():
    messages = airline()
    one = run_one(messages[:20], RAW, "chars")
    two = run_one(messages, RAW, "chars")
    left, right = Totals(), Totals()
    for part in (one, two):
        left.add(Totals.from_dict(json.loads(json.dumps(part.as_dict()))))
    for part in (two, one):
        right.add(part)
    assert left == right
    assert left.calls == one.calls + two.calls


def test_compact_as_a_loop_calls_it_bills_each_price_model_at_its_own_rate():
    messages = airline()
    found = run_one(messages, loop_compact("travel"), "chars")
    at = {rate: run_one(messages, ours("compact", "travel", rate), "chars") for rate in (0.1, 0.5)}
    assert found.costs["openai@0.5"] == at[0.5].costs["openai@0.5"]
    assert found.costs["openai@0.1"] == at[0.1].costs["openai@0.1"]
    assert found.costs["anthropic"] == at[0.1].costs["anthropic"]  # its read rate
    assert (found.tokens, found.calls) == (at[0.1].tokens, at[0.1].calls)
    assert found.kept <= min(run.kept for run in at.values())  # the worst of its runs
    raw = run_one(messages, RAW, "chars")
    assert all(found.costs[name] <= raw.costs[name] for name in found.costs)

"""``compact`` told the provider's cached rate: compiled for the loop. Between checkpoints
each prompt is a byte prefix of the next; a checkpoint is taken only where the rule pays
and the bill so far stays under the raw history's; the system prompt and the task are
never touched; without a cached rate a compile is what it always was."""

import json
from itertools import pairwise
from types import SimpleNamespace

import pytest

from compiler import compile_messages
from compiler.fold import Fold
from compiler.incremental import HistoryCache
from compiler.layout import REGISTER_MARKER, STATE_MARKER
from compiler.loop import Decisions, LoopCheckpoints
from compiler.read import Message, read_message_list
from compiler.types import Options
from tests.compiler.compact.test_checkpoints import loop


def calls_of(history: list[dict], **options) -> list[list[dict]]:
    """The prompt a loop sends before each assistant turn, compiled from scratch."""
    ends = [i for i, m in enumerate(history) if i and m["role"] == "assistant"]
    return [
        compile_messages(history[:end], mode="compact", cache=False, **options)[0] for end in ends
    ]


def checkpoints(history: list[dict], rate: float) -> list[int]:
    """The call points a compile of ``history`` took as checkpoints."""
    fold = Fold(Options.build(mode="compact", cached_rate=rate))
    fold.extend(read_message_list(history).messages)
    return fold.loop.taken


def starts_with(longer: list[dict], shorter: list[dict]) -> bool:
    return json.dumps(longer[: len(shorter)]) == json.dumps(shorter)


@pytest.mark.parametrize("rate", [0.1, 0.5, 1.0])
def test_each_prompt_extends_the_last_unless_a_checkpoint_came_between(rate):
    history = loop(30)
    prompts = calls_of(history, cached_rate=rate)
    ends = [i for i, m in enumerate(history) if i and m["role"] == "assistant"]
    taken = set(checkpoints(history, rate))
    for end, before, after in zip(ends[1:], prompts, prompts[1:], strict=False):
        if end not in taken:
            assert starts_with(after, before), end
    if rate > 0.1:  # a long loop of cuttable pages pays for checkpoints at a high rate
        assert taken


def test_at_a_cached_rate_of_zero_no_checkpoint_is_ever_taken():
    history = loop(30)
    prompts = calls_of(history, cached_rate=0.0)
    assert checkpoints(history, 0.0) == []
    assert all(starts_with(b, a) for a, b in pairwise(prompts))


def test_a_checkpoint_takes_compacts_decisions_and_sends_fewer_tokens():
    history = loop(30)
    kept = calls_of(history, cached_rate=0.0)[-1]
    cut = calls_of(history, cached_rate=0.5)[-1]
    one_off = calls_of(history)[-1]
    assert len(json.dumps(one_off)) < len(json.dumps(cut)) < len(json.dumps(kept))


def test_an_incremental_compile_is_byte_identical_to_a_full_one():
    history = loop(30)
    options = Options.build(mode="compact", cached_rate=0.5)
    cache = HistoryCache()
    for end in range(1, len(history) + 1):
        resumed = cache.compile(history[:end], options, options.cache_key)[0].output_dicts()
        full = compile_messages(history[:end], mode="compact", cached_rate=0.5, cache=False)
        assert json.dumps(resumed) == json.dumps(full[0]), end
    assert cache.hits >= len(history) - 1


def test_the_system_prompt_and_the_task_stay_verbatim_in_every_call():
    history = loop(30)
    for prompt in calls_of(history, cached_rate=0.5, schema="travel"):
        assert prompt[0] == history[0]
        assert prompt[1] == history[1]


def test_the_identifier_the_agent_answers_with_is_in_front_of_it():
    history = loop(30)
    assert "HAT00001" in json.dumps(calls_of(history, cached_rate=0.5)[-1])


def test_without_a_cached_rate_the_header_opens_the_prompt_and_with_one_a_note_holds_it():
    history = [
        {"role": "system", "content": "You deliver parcels."},
        {"role": "user", "content": "Deliver order ORD-1. Pay with my credit card."},
        {"role": "assistant", "content": "Done."},
        {"role": "user", "content": "Thanks."},
    ]
    one_off = compile_messages(history, mode="compact", schema="logistics", cache=False)[0]
    looped = compile_messages(history, mode="compact", schema="logistics", cached_rate=0.1)[0]
    assert one_off[0]["content"].startswith(STATE_MARKER)
    assert looped[0] == history[0]
    assert [m["content"].split("\n")[0] for m in looped if m not in history] == [REGISTER_MARKER]


# -- the rule, both sides ----------------------------------------------------

SYSTEM, TASK, PAYLOAD = "s" * 100, "t" * 100, "p" * 1000
CLEAN = (Message("system", SYSTEM), Message("user", TASK), Message("tool", PAYLOAD))


def decide(rate: float, excess: int, ledger: float = 10**9):
    """The choice at the end of ``CLEAN`` where ``compact`` would cut the payload to 100
    characters, after ``excess`` characters of rent since the last checkpoint."""
    loop_ = LoopCheckpoints(rate)
    loop_.excess, loop_.ledger, loop_.sent, loop_.raw = excess, ledger, 1200, 1200
    loop_.raw_sizes = [0, 100, 200, 1200]
    now = Decisions(3, (), frozenset(), {2: SimpleNamespace(text="c" * 100)})
    return loop_.decide(CLEAN, (), now, {}, {})


def test_a_checkpoint_is_taken_when_the_rent_exceeds_the_break_and_not_when_it_equals_it():
    # at r = 0.1 the break is the cut text, 100 characters: (1 − r)·100 = 90 against
    # r·(excess + 900 saved now); 900 + 0 → 90 = 90, no; 900 + 1 → 90.1 > 90, yes
    assert not decide(0.1, 0).take
    assert decide(0.1, 1).take


def test_a_checkpoint_that_pays_is_not_taken_where_the_bill_would_go_above_the_raw_historys():
    # the raw call costs 0.1·1200 + 0 = 120; the checkpoint's 0.1·200 + 100 = 120
    assert decide(0.1, 1, ledger=0).take
    assert not decide(0.1, 1, ledger=-0.5).take


def test_no_tool_result_goes_without_its_call_and_no_note_comes_between_them():
    for prompt in calls_of(loop(30), cached_rate=1.0):
        called = set()
        for before, message in zip([None, *prompt], prompt, strict=False):
            if message["role"] == "tool":
                assert message["tool_call_id"] in called
                assert before["role"] in ("assistant", "tool")
            called.update(call["id"] for call in message.get("tool_calls") or ())


def test_telemetry_names_what_the_prompt_shows_as_retired_and_compacted():
    history = loop(30)
    out, tel = compile_messages(history, mode="compact", cached_rate=1.0, cache=False)
    shown = {m.get("tool_call_id"): m["content"] for m in out if m["role"] == "tool"}
    assert tel["compacted_payloads"]
    for payload in tel["compacted_payloads"]:
        call_id = history[payload["turn"]]["tool_call_id"]
        assert len(shown[call_id]) == payload["chars_after"]

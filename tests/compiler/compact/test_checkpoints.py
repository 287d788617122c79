"""cache_friendly's checkpoints: old payloads cut only where the price model pays for it,
the prefix byte-stable between checkpoints, and the cut fixed once made."""

import json

import pytest

from compiler import compile_messages
from compiler.compact.checkpoints import IDS_NOTE, identifiers, pays
from compiler.errors import OptionError
from compiler.incremental import HistoryCache
from compiler.types import Options

NOTE = "a seat on a morning departure with a long layover and no checked bag"


def loop(calls: int) -> list[dict]:
    """A tool loop: each call reads a page of 25 flights, which compaction cuts; each page
    twice in a row, so the second read replaces the first."""
    messages = [
        {"role": "system", "content": "You look flights up."},
        {"role": "user", "content": "Find me the cheapest flight to Oslo."},
    ]
    for call in range(calls):
        page = call // 2
        messages.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": f"c{call}",
                        "type": "function",
                        "function": {"name": "search", "arguments": json.dumps({"page": page})},
                    }
                ],
            }
        )
        rows = [{"flight": f"HAT{page:03d}{row:02d}", "note": NOTE} for row in range(25)]
        messages.append({"role": "tool", "tool_call_id": f"c{call}", "content": json.dumps(rows)})
    messages.append({"role": "assistant", "content": "HAT00001 is the cheapest."})
    return messages


def calls_of(history: list[dict], **options) -> list[list[dict]]:
    """The prompt a loop sends before each assistant turn, compiled from scratch."""
    ends = [i for i, m in enumerate(history) if m["role"] == "assistant"]
    return [
        compile_messages(history[:end], mode="cache_friendly", cache=False, **options)[0]
        for end in ends
    ]


def starts_with(longer: list[dict], shorter: list[dict]) -> bool:
    return json.dumps(longer[: len(shorter)]) == json.dumps(shorter)


def cut_texts(prompt: list[dict]) -> dict[str, str]:
    """The tool results a checkpoint cut, by call id."""
    return {
        m["tool_call_id"]: m["content"]
        for m in prompt
        if m["role"] == "tool" and "truncated=true" in m["content"]
    }


def test_a_cut_pays_when_the_saving_exceeds_the_break_and_not_when_it_equals_it():
    # r·Σs·(L+1) against (1−r)·P: at r = 0.25, 1,000 tokens over 3 calls (750) against a
    # break of 2,250 tokens (1,687.5) does not pay; over 7 calls (1,750) it does
    assert not pays(1000 * 3, 2250, 0.25)
    assert pays(1000 * 7, 2250, 0.25)
    assert not pays(1000 * 9, 1000, 0.1)  # 900 > 900 is false: a tie is no saving
    assert pays(1000 * 9 + 1, 1000, 0.1)


def test_a_long_loop_at_a_high_cached_rate_is_cut_at_checkpoints_and_nothing_else_changes():
    prompts = calls_of(loop(30), cached_rate=0.5)
    checkpoints = [n for n in range(1, len(prompts)) if not starts_with(prompts[n], prompts[n - 1])]
    assert checkpoints, "a 30-call loop at cached rate 0.5 should pay for a cut"
    assert len(checkpoints) < len(prompts) // 3  # rare: each break is paid for
    for n in checkpoints:  # what changed is a payload cut there, not anything else
        before, after = cut_texts(prompts[n - 1]), cut_texts(prompts[n])
        assert before.items() < after.items()


def test_without_a_cached_rate_no_payload_is_cut_and_every_prompt_extends_the_last():
    prompts = calls_of(loop(30))
    assert all(starts_with(prompts[n], prompts[n - 1]) for n in range(1, len(prompts)))
    assert not any(cut_texts(prompt) for prompt in prompts)
    assert calls_of(loop(30), cached_rate=0.5) != prompts  # the same loop is cut when told


def test_a_cut_once_made_stays_the_same_in_every_later_call():
    prompts = calls_of(loop(30), cached_rate=0.5)
    seen: dict[str, str] = {}
    for prompt in prompts:
        for call, text in cut_texts(prompt).items():
            assert seen.setdefault(call, text) == text


@pytest.mark.parametrize(("calls", "rate"), [(30, 0.0), (12, 0.1), (5, 0.5)])
def test_a_loop_whose_cuts_do_not_pay_keeps_every_call_a_prefix_of_the_next(calls, rate):
    # nothing cached is free (0.0), or the old payloads have not cost enough since they
    # could first be cut to pay for the break
    prompts = calls_of(loop(calls), cached_rate=rate)
    assert all(starts_with(prompts[n], prompts[n - 1]) for n in range(1, len(prompts)))
    assert not any(cut_texts(prompt) for prompt in prompts)


@pytest.mark.parametrize(("calls", "rate"), [(16, 0.1), (6, 0.5)])
def test_a_longer_loop_at_the_same_rate_pays_for_a_cut(calls, rate):
    prompts = calls_of(loop(calls), cached_rate=rate)
    assert cut_texts(prompts[-1])


def test_every_identifier_a_payload_showed_is_still_in_the_prompt_after_a_cut():
    history = loop(30)
    prompts = calls_of(history, cached_rate=0.5)
    assert cut_texts(prompts[-1])
    ends = [i for i, m in enumerate(history) if m["role"] == "assistant"]
    for end, prompt in zip(ends, prompts, strict=True):
        shown = set(identifiers(" ".join(m["content"] or "" for m in prompt)))
        wanted = {
            w for m in history[:end] if m["role"] == "tool" for w in identifiers(m["content"])
        }
        assert wanted <= shown
    assert any(IDS_NOTE.split("{")[0] in text for text in cut_texts(prompts[-1]).values())


def test_the_system_prompt_the_task_and_every_call_with_its_result_stay():
    history = loop(30)
    prompt = calls_of(history, cached_rate=0.5)[-1]
    assert prompt[:2] == history[:2]
    calls = [c["id"] for m in prompt if m["role"] == "assistant" for c in m["tool_calls"]]
    results = [m["tool_call_id"] for m in prompt if m["role"] == "tool"]
    assert calls == results == [f"c{n}" for n in range(30)]


def test_an_incremental_compile_with_checkpoints_is_byte_identical_to_a_full_one():
    history = loop(30)
    options = Options.build(mode="cache_friendly", cached_rate=0.5)
    cache = HistoryCache()
    for end in range(1, len(history) + 1):
        resumed = cache.compile(history[:end], options, options.cache_key)[0].output_dicts()
        full = compile_messages(history[:end], mode="cache_friendly", cached_rate=0.5, cache=False)
        assert json.dumps(resumed) == json.dumps(full[0])
    assert cache.hits >= len(history) - 1


@pytest.mark.parametrize("rate", [-0.1, 1.5, "0.1", True, float("nan")])
def test_a_cached_rate_outside_0_to_1_is_an_option_error(rate):
    with pytest.raises(OptionError, match="cached_rate"):
        compile_messages(loop(1), mode="cache_friendly", cached_rate=rate)


STATUS = "\n\n(Open file: /r/a.py)\n(Current directory: /r)\nbash-$"


def test_a_cut_keeps_the_status_lines_its_first_sight_left_out():
    history = loop(30)
    for message in history:
        if message["role"] == "tool":
            message["content"] += STATUS  # the same status after every payload
    prompt = calls_of(history, cached_rate=0.5)[-1]
    cut = cut_texts(prompt)
    assert cut, "a 30-call loop at cached rate 0.5 should pay for a cut"
    assert not any("(Current directory: /r)" in text for text in cut.values())

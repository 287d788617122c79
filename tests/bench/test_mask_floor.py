"""The masking floor finds the cheapest checkpoint schedule: the same bill as trying every
schedule, and never above the raw history's."""

from __future__ import annotations

import itertools

import pytest

from compiler.layout import PriceModel
from tests.bench import mask_floor


def _history(sizes: list[int], files: list[str]) -> list[dict]:
    """A task, then per call: the agent's turn and a file view of ``size`` characters."""
    history = [{"role": "user", "content": "Fix the bug in the parser, please."}]
    for index, (size, name) in enumerate(zip(sizes, files, strict=True)):
        history.append({"role": "assistant", "content": f"open {name} ({index})"})
        body = "\n".join(f"{n}:line {index} {n}" for n in range(1, size // 12))
        history.append({"role": "tool", "content": f"[File: {name} (90 lines total)]\n{body}"})
    history.append({"role": "assistant", "content": "done"})
    return history


def _every_schedule(messages, model, stale):
    """The cheapest bill over every set of checkpoints, priced call by call."""
    calls = [i for i, m in enumerate(messages) if i and m["role"] == "assistant"]
    cheapest = None
    for count in range(len(calls) + 1):
        for taken in itertools.combinations(range(len(calls)), count):
            masked, before, cost = frozenset(), None, 0.0
            for k, end in enumerate(calls):
                if k in taken:
                    masked = mask_floor.masked_at(messages, end, stale)
                prompt = mask_floor.masked_prompt(messages, end, masked)
                cost += mask_floor.price(before, prompt, model, "chars")
                before = prompt
            cheapest = cost if cheapest is None else min(cheapest, cost)
    return cheapest


SIZES = [[9000, 300, 7000, 5000, 200], [200, 200, 200, 200, 200], [6000, 6000, 6000, 6000, 6000]]


@pytest.mark.parametrize("sizes", SIZES)
@pytest.mark.parametrize("rate", [0.1, 0.5])
@pytest.mark.parametrize("stale", [False, True])
def test_the_floor_is_the_cheapest_of_every_checkpoint_schedule(sizes, rate, stale):
    files = ["/a.py", "/b.py", "/a.py", "/c.py", "/b.py"]
    messages, model = _history(sizes, files), PriceModel.openai(rate)
    cheapest, raw, taken = mask_floor.floor(messages, model, "chars", stale)
    assert cheapest == pytest.approx(_every_schedule(messages, model, stale))
    assert cheapest <= raw
    if cheapest == pytest.approx(raw):
        assert taken == []  # (a schedule that saves nothing takes no checkpoint)


def test_masking_every_old_output_bills_no_more_than_masking_only_stale_views_here():
    messages = _history(SIZES[0], ["/a.py", "/b.py", "/a.py", "/c.py", "/b.py"])
    model = PriceModel.openai(0.5)
    every, _, _ = mask_floor.floor(messages, model, "chars")
    stale, _, _ = mask_floor.floor(messages, model, "chars", stale=True)
    assert every <= stale

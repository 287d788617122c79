"""The bill of a capture's loop, a plain estimate: chars/4 tokens, a shared prefix cached.

A capture prices the prompts it asks (compiled against the raw history, in
``labelling.bench.capture_plan.plan_bill``) with this estimate and stores it in the
file: each prompt is the compact JSON of its messages, counted whole at ``len // 4``;
the characters it shares from its start with the prompt before it are billed at the
cached rate. No provider's rules and no tokenizer.

``compiler.bill`` is not this estimate: it counts each message's rendered text (role,
content, tool calls) on its own, so even under a price model with no minimum and
one-token steps its figures differ from these, and capture files already written hold
these.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

CACHED_RATE = 0.1


def prompt_text(messages: Iterable[dict]) -> str:
    """A prompt as the characters a provider receives (compact JSON of its messages)."""
    return json.dumps(list(messages), ensure_ascii=False, separators=(",", ":"))


def loop_bill(prompts: list[str], cached_rate: float = CACHED_RATE) -> dict:
    """What a loop sending ``prompts`` in order is billed, in chars/4 tokens.

    Each prompt is ``len // 4`` tokens; the part it shares from its first character with
    the prompt before it is read from a provider's prefix cache and billed at
    ``cached_rate`` (``cached // 4`` tokens). A deliberately plain estimate: no provider's
    cache granularity, no exact tokenizer.

    Example:
        >>> bill = loop_bill(["a" * 400, "a" * 400 + "b" * 400])
        >>> bill["sent_tokens"], bill["cached_tokens"], bill["billed_tokens"]
        (300, 100, 210.0)
        >>> bill["per_call"]
        [[100, 0], [200, 100]]
    """
    per_call, previous = [], ""
    for text in prompts:
        shared = _shared_prefix(previous, text)
        per_call.append([len(text) // 4, shared // 4])
        previous = text
    sent = sum(s for s, _ in per_call)
    cached = sum(c for _, c in per_call)
    return {
        "calls": len(per_call),
        "cached_rate": cached_rate,
        "sent_tokens": sent,
        "cached_tokens": cached,
        "billed_tokens": round(sent - cached + cached_rate * cached, 1),
        "per_call": per_call,
    }


def _shared_prefix(a: str, b: str) -> int:
    """How many characters ``a`` and ``b`` share from their start."""
    n = min(len(a), len(b))
    if a[:n] == b[:n]:
        return n
    low, high = 0, n  # a[:low] == b[:low] and a[:high] != b[:high]
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (mid, high) if a[:mid] == b[:mid] else (low, mid)
    return low

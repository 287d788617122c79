"""How low a loop's bill can go by masking old tool outputs, on the best schedule there is.

    python tests/bench/mask_floor.py ../shared/corpora/coding/nebius-sample.txt \\
        [--rate 0.5] [--stale] [--counter exact|chars] [--limit N]

An oracle, not a strategy: it knows every call of the loop in advance. At a checkpoint
every tool output but the latest one in the prompt is replaced by SWE-agent's
placeholder (with ``--stale``, only the file views that a later view in the prompt shows
the same file of), and stays so until the next checkpoint; the task (the first user
message) is never masked, and each output is shown whole at least in the call that
follows it. Of all the ways to place checkpoints it finds the cheapest under the
OpenAI-style price model at ``--rate`` (exactly, by dynamic programming over the last
checkpoint: a call's price depends only on its prompt and the one before it).

What it is for: a bill target a compile cannot reach without cutting content. Masking
every old output is the most any cut of old outputs can remove, so no compile that shows
each output whole in the call after it, and cuts only at checkpoints, bills less than
this floor; ``--stale`` is the floor of cuts that drop only what a later view shows
again. It prints, per transcript and over the corpus, the floor and the raw history's
bill, and the checkpoints the floor takes.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(ROOT))

from compiler.compact.view_repeats import view_path  # noqa: E402
from compiler.layout import PriceModel  # noqa: E402
from compiler.layout.billing import Account, Meter  # noqa: E402
from compiler.layout.tokens import resolve_counter  # noqa: E402
from labelling.bench.corpus import read_corpus  # noqa: E402
from labelling.bench.loop_bill import PLACEHOLDER, content_text, is_tool_output  # noqa: E402


class CountOnce:
    """A token counter that counts each distinct text once: the oracle prices the same
    messages many times (airline dev at 0.5 runs in 3.0 s with it, 11.0 s without)."""

    def __init__(self, counter):
        self.inner = resolve_counter(counter)
        self.name = self.inner.name
        self.known: dict[str, int] = {}

    def count(self, text: str) -> int:
        if text not in self.known:
            self.known[text] = self.inner.count(text)
        return self.known[text]


def price(before: list[dict] | None, prompt: list[dict], model: PriceModel, counter) -> float:
    """One call's price under an OpenAI-style model, given the prompt before it.

    Example:
        >>> model, system = PriceModel.openai(0.5), {"role": "system", "content": "x" * 8000}
        >>> price(None, [system], model, "chars")
        2001.0
        >>> price([system], [system, {"role": "user", "content": "hi"}], model, "chars")
        1042.0
    """
    meter = Meter(counter)
    if before is not None:
        meter.measure(before)
    return Account(model).charge(meter.measure(prompt)).cost


def masked_at(messages: list[dict], end: int, stale: bool) -> frozenset[int]:
    """The tool outputs a checkpoint before ``messages[end]`` masks: every one but the
    latest (the task never), or with ``stale`` only file views a later view in the prompt
    shows the same file of.

    Example:
        >>> history = [{"role": "user", "content": "fix it"}]
        >>> view = "[File: /a.py (3 lines total)]\\n1:{}"
        >>> history += [{"role": "tool", "content": view.format(i)} for i in range(3)]
        >>> sorted(masked_at(history, 4, False)), sorted(masked_at(history, 3, True))
        ([1, 2], [1])
    """
    first_user = next((i for i, m in enumerate(messages) if m.get("role") == "user"), None)
    outputs = [i for i in range(end) if i != first_user and is_tool_output(messages[i])]
    older = outputs[:-1]
    if not stale:
        return frozenset(older)
    files = {i: view_path(content_text(messages[i].get("content"))) for i in outputs}
    return frozenset(
        i for i in older if files[i] and any(files[j] == files[i] for j in outputs if j > i)
    )


def masked_prompt(messages: list[dict], end: int, masked: frozenset[int]) -> list[dict]:
    """The prompt before ``messages[end]`` with the outputs ``masked`` as placeholders."""
    out = []
    for index, message in enumerate(messages[:end]):
        if index in masked:
            lines = len(content_text(message.get("content")).splitlines())
            message = {**message, "content": PLACEHOLDER.format(lines)}
        out.append(message)
    return out


def floor(messages: list[dict], model: PriceModel, counter, stale: bool = False):
    """(the cheapest bill, the raw history's bill, the calls that are checkpoints).

    ``best[c]`` is the cheapest bill of the calls so far whose last checkpoint is call
    ``c`` (-1: none yet); a call either keeps the last checkpoint's masking or is one.

    Example:
        >>> big = "x" * 6000
        >>> history = [{"role": "user", "content": "fix it"}]
        >>> for i in range(4):
        ...     history += [{"role": "assistant", "content": f"look {i}"},
        ...                 {"role": "tool", "content": f"[File: /a.py (9 lines total)]\\n{big}"}]
        >>> history.append({"role": "assistant", "content": "done"})
        >>> cheapest, raw, checkpoints = floor(history, PriceModel.openai(0.5), "chars")
        >>> cheapest < raw, checkpoints
        (True, [2, 3, 4])
    """
    calls = [i for i, m in enumerate(messages) if i and m.get("role") == "assistant"]
    masks = {-1: frozenset()}
    prompts: dict[tuple[int, int], list[dict]] = {}

    def prompt(call: int, checkpoint: int) -> list[dict]:
        key = (call, checkpoint)
        if key not in prompts:
            prompts[key] = masked_prompt(messages, calls[call], masks[checkpoint])
        return prompts[key]

    raw = sum(
        price(messages[: calls[k - 1]] if k else None, messages[: calls[k]], model, counter)
        for k in range(len(calls))
    )
    best: dict[int, tuple[float, list[int]]] = {-1: (0.0, [])}
    for k in range(len(calls)):
        masks[k] = masked_at(messages, calls[k], stale)
        before = {last: prompt(k - 1, last) if k else None for last in best}
        now = {
            last: (cost + price(before[last], prompt(k, last), model, counter), taken)
            for last, (cost, taken) in best.items()
        }
        now[k] = min(
            (
                (cost + price(before[last], prompt(k, k), model, counter), [*taken, k])
                for last, (cost, taken) in best.items()
            ),
            key=_fewest,
        )
        best = now
    cheapest, taken = min(best.values(), key=_fewest)
    return cheapest, raw, taken


def _fewest(bill: tuple[float, list[int]]) -> tuple:
    """The cheaper bill, and of two alike the one with fewer checkpoints (a checkpoint
    that masks nothing new costs nothing and says nothing)."""
    cost, taken = bill
    return cost, len(taken), taken


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--rate", type=float, default=0.5, help="the cached rate (OpenAI-style)")
    parser.add_argument("--stale", action="store_true", help="mask only file views shown again")
    parser.add_argument("--counter", default="exact", help="exact or chars")
    parser.add_argument("--limit", type=int, default=None, help="the first N transcripts")
    args = parser.parse_args(argv)
    model, counter = PriceModel.openai(args.rate), CountOnce(args.counter)
    transcripts = read_corpus(args.corpus, args.limit)
    total = raw_total = 0.0
    for transcript in transcripts:
        cheapest, raw, taken = floor(transcript.messages, model, counter, args.stale)
        total, raw_total = total + cheapest, raw_total + raw
        share = cheapest / raw if raw else 1.0
        print(f"{transcript.ident}: {share:.4f} of raw, checkpoints at calls {taken}")
    what = "stale file views" if args.stale else "every old tool output"
    print(
        f"{args.corpus} (N = {len(transcripts)} transcripts), masking {what} on the best "
        f"schedule, openai@{args.rate:g}, tokens by {counter.name}: "
        f"{total / raw_total if raw_total else 1.0:.4f} of the raw history's bill"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

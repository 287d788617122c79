"""What the gold-action figures can reach on a tau-bench airline file.

    python tests/bench/gold_reach.py [CORPUS] [--json]

The gold scorer (``labelling.bench.gold``) checks the final register against the task's
gold actions: what the customer wanted, whether or not the agent did it. So two things
bound the figure, and this prints both, with N:

- the verdicts apart by the trajectory's reward: where the agent earned the reward it did
  what the gold actions say, so a mismatch there is the compiler's; where it did not, the
  agent may have booked, changed or said something else, and the register follows it;
- the pairs whose gold value is said anywhere in the conversation (a user or assistant
  turn, or the arguments of any tool call, lookups and cancels included): a gold value the
  conversation never holds cannot be in any register compiled from it, so their share is
  the recall no compile of this corpus can pass.
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter
from pathlib import Path

DEV = Path("/work/shared/corpora/airline/gpt-4o-trajectories-dev.json")
_DATE = re.compile(
    r"\b(?:[A-Z][a-z]+\s+\d{1,2}(?:st|nd|rd|th)?(?:,?\s+\d{4})?|\d{4}-\d{2}-\d{2})\b"
)


def said_anywhere(slot: str, golds: frozenset[str], messages) -> bool:
    """Whether a gold value of ``slot`` is in any turn's speech or tool-call arguments."""
    from labelling.bench.gold import normalise

    texts = [m.text for m in messages if m.role in ("user", "assistant")]
    texts += [call.arguments for m in messages for call in m.tool_calls]
    text = "\n".join(texts)
    if slot == "flight_date":
        return bool({normalise(slot, d) for d in _DATE.findall(text)} & set(golds))
    folded = " ".join(re.split(r"[\s_-]+", text.casefold()))
    return any(normalise(slot, g) in folded for g in golds)


def reach(corpus: Path) -> dict:
    from compiler import formats_many, load_schema, run
    from labelling.bench.gold import gold_values, verdict

    schema = load_schema("travel")
    verdicts: Counter = Counter()
    said: Counter = Counter()
    for _, parsed in formats_many(corpus.read_text(encoding="utf-8")):
        gold = gold_values(parsed.record) if parsed.record is not None else None
        if not gold:
            continue
        final = {e.slot: e.value for e in run(parsed.messages, schema=schema).register.active}
        reward = "rewarded" if parsed.record.get("reward") == 1 else "not rewarded"
        for slot, golds in gold.items():
            verdicts[(reward, verdict(slot, final.get(slot), golds))] += 1
            said[said_anywhere(slot, golds, parsed.messages)] += 1
    pairs = sum(said.values())
    return {
        "corpus": str(corpus),
        "pairs": pairs,
        "by_reward": {
            reward: {v: verdicts[(reward, v)] for v in ("match", "mismatch", "missing")}
            for reward in ("rewarded", "not rewarded")
        },
        "gold_value_said": said[True],
        "recall_ceiling": round(said[True] / pairs, 4) if pairs else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("corpus", nargs="?", type=Path, default=DEV)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    figures = reach(args.corpus)
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    print(f"{figures['corpus']}: {figures['pairs']} (transcript, slot) pairs with a gold value")
    for reward, counts in figures["by_reward"].items():
        n = sum(counts.values())
        decided = counts["match"] + counts["mismatch"]
        precision = f"{counts['match'] / decided:.1%}" if decided else "n/a"
        recall = f"{counts['match'] / n:.1%}" if n else "n/a"
        shown = ", ".join(f"{k} {v}" for k, v in counts.items())
        print(f"  {reward:>12}: {shown} (n={n}; precision {precision}, recall {recall})")
    print(
        f"  gold value said anywhere in the conversation: {figures['gold_value_said']} of "
        f"{figures['pairs']} (the recall no compile can pass: {figures['recall_ceiling']:.1%})"
    )


if __name__ == "__main__":
    main()

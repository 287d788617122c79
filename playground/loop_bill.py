"""What the agent loop would pay for the console's transcript, call by call.

A loop calls the model before each assistant turn with the history so far. The raw
history is sent as it is; the compiled one is that history compiled with the console's
options before each call (``compiler.replay``). Each prompt is priced against the one
sent before it under a stated price model (``compiler.bill``), its tokens counted with
the counter the console counts with. Costs are in input-token prices: one uncached input
token costs 1.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.utils.safestring import SafeString

from compiler import Bill, PriceModel, bill, compile_messages, formats, message_to_dict, replay
from labelling.measurement.charts import call_bars

MODELS = {
    "openai@0.1": PriceModel.openai(0.1),
    "openai@0.25": PriceModel.openai(0.25),
    "openai@0.5": PriceModel.openai(0.5),
    "anthropic": PriceModel.anthropic(),
}
DEFAULT_MODEL = "openai@0.1"
MODEL_NOTES = {
    "openai@0.1": "automatic prefix caching, cached tokens at 0.1 of the input price",
    "openai@0.25": "automatic prefix caching, cached tokens at 0.25 of the input price",
    "openai@0.5": "automatic prefix caching, cached tokens at 0.5 of the input price",
    "anthropic": "a cache breakpoint on each call's last message, reads at 0.1 and "
    "writes at 1.25 of the input price",
}


@dataclass(frozen=True)
class LoopBill:
    model: str
    turns: tuple[int, ...]  # the assistant turn each call is made for
    raw: Bill
    compiled: Bill

    @property
    def note(self) -> str:
        rules = MODELS[self.model]
        return f"{MODEL_NOTES[self.model]}; nothing is cached under {rules.minimum:,} tokens"

    @property
    def counter(self) -> str:
        return self.raw.counter

    @property
    def saved(self) -> float:
        """What the compiled loop costs less than the raw one (below 0: more)."""
        return round(self.raw.cost - self.compiled.cost, 6)

    @property
    def saved_pct(self) -> float:
        return round(100 * self.saved / self.raw.cost, 1) if self.raw.cost else 0.0

    @property
    def calls(self) -> tuple[dict, ...]:
        """Each call: its number, its turn, and the raw and compiled ``Call``."""
        return tuple(
            {
                "n": n,
                "turn": turn,
                "raw": raw,
                "compiled": compiled,
                "saved": raw.cost - compiled.cost,
            }
            for n, (turn, raw, compiled) in enumerate(
                zip(self.turns, self.raw.calls, self.compiled.calls, strict=True), start=1
            )
        )

    @property
    def chart(self) -> SafeString:
        rate = MODELS[self.model].cached_rate
        rows = [
            {
                "label": f"call {call['n']} (turn {call['turn']})",
                "raw": vars(call["raw"]),
                "compiled": vars(call["compiled"]),
                "rate": rate,
            }
            for call in self.calls
        ]
        return call_bars(f"The loop's bill call by call, under {self.model}", rows)


def loop_bill(text: str, *, options: dict, counter, model: str = DEFAULT_MODEL) -> LoopBill:
    """The bill of a loop over ``text``: raw, and compiled with the compiler ``options``.

    Example:
        >>> text = "user: hi\\nassistant: hello\\nuser: and?\\nassistant: done"
        >>> found = loop_bill(text, options={"mode": "compact"}, counter="chars/4")
        >>> found.turns, found.raw.counter, len(found.compiled.calls)
        ((1, 3), 'chars/4', 2)
    """
    history = [message_to_dict(message) for message in formats(text).messages]
    turns = tuple(i for i, m in enumerate(history) if i and m.get("role") == "assistant")

    def compiled(prompt: list[dict]) -> list[dict]:
        return compile_messages(prompt, token_counter=counter, **options)[0]

    rules = MODELS[model]
    return LoopBill(
        model=model,
        turns=turns,
        raw=bill(replay(history), rules, counter),
        compiled=bill(replay(history, compiled), rules, counter),
    )

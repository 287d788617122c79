"""The plan of a capture: every prompt it will send, computed before any call.

How one turn is asked. The transcript's messages up to and including the assistant turn
are compiled with the schema and ``teach_protocol=True`` (the compiler's own instruction,
naming the schema's slots; the same compile gives the read path's state at that turn),
and one user message (``ASK``) follows: the model is a bystander saying what the agent's
last turn changed. Its earlier answers are not fed back, so each turn is judged alone and
a prompt never depends on what a model said before it. Temperature is 0.

Beside each prompt the plan keeps the raw one (the instruction, the history as it is,
``ASK``), so ``plan_bill`` sets the compiled loop's bill against the raw loop's
(``labelling.bench.capture_bill``). ``fingerprint`` digests everything that shapes a
prompt, and the model: a capture resumes only under the same fingerprint.
"""

from __future__ import annotations

from dataclasses import dataclass

from compiler import compile_messages, load_schema, message_to_dict
from labelling.bench.capture_bill import CACHED_RATE, loop_bill, prompt_text
from labelling.bench.capture_files import (
    FORMAT,
    CaptureError,
    corpus_transcripts,
    digest,
    transcript_digest,
)

TEMPLATE = 1
MODE = "compact"
TEMPERATURE = 0
ASK = (
    "The last assistant turn above is the agent's. As that agent, write the "
    "<contextgc-state> block for what that turn changed, using only the tracked slots. "
    "Write only the block; if that turn changed no tracked slot, write nothing."
)


@dataclass(frozen=True)
class Ask:
    """One assistant turn to ask about, and everything computed for it without a model."""

    transcript: str
    index: int
    prompt: tuple[dict, ...]
    read_path: dict
    raw_prompt: tuple[dict, ...]


@dataclass(frozen=True)
class Plan:
    schema: str
    schema_digest: str
    instruction: str
    transcripts: tuple[dict, ...]
    asks: tuple[Ask, ...]


def instruction_for(schema) -> str:
    """The protocol instruction the compiler teaches for ``schema`` (public API only)."""
    compiled, _ = compile_messages(
        [{"role": "user", "content": "."}], schema=schema, teach_protocol=True, cache=False
    )
    system = compiled[0]["content"] if compiled[0]["role"] == "system" else ""
    start, end = system.find("[STATE_PROTOCOL]"), system.find("[/STATE_PROTOCOL]")
    if start < 0 or end < 0:
        raise CaptureError(f"schema {schema.name!r} teaches no protocol (it has no slots)")
    return system[start : end + len("[/STATE_PROTOCOL]")]


def plan(corpus_text: str, schema_name: str, limit: int | None = None) -> Plan:
    """Every prompt of a capture, in the order it asks them (first ``limit`` transcripts)."""
    schema = load_schema(schema_name)
    instruction = instruction_for(schema)
    transcripts, asks = [], []
    for ident, messages in list(corpus_transcripts(corpus_text).items())[:limit]:
        dicts = [message_to_dict(m) for m in messages]
        turns = [i for i, m in enumerate(dicts) if m["role"] == "assistant"]
        transcripts.append(
            {
                "id": ident,
                "digest": transcript_digest(messages),
                "messages": len(dicts),
                "turns": turns,
            }
        )
        for index in turns:
            prefix = dicts[: index + 1]
            compiled, tel = compile_messages(prefix, schema=schema, teach_protocol=True, mode=MODE)
            asks.append(
                Ask(
                    ident,
                    index,
                    (*compiled, {"role": "user", "content": ASK}),
                    dict(tel["active_state_slots"]),
                    (
                        {"role": "system", "content": instruction},
                        *prefix,
                        {"role": "user", "content": ASK},
                    ),
                )
            )
    if not asks:
        raise CaptureError("the corpus holds no assistant turn to ask about")
    return Plan(schema.name, schema.digest, instruction, tuple(transcripts), tuple(asks))


def fingerprint(the_plan: Plan, model: str) -> str:
    """A digest of everything that shapes a prompt, and the model that answers it."""
    return digest(
        {
            "format": FORMAT,
            "model": model,
            "prompt": prompt_header(the_plan),
            "schema": [the_plan.schema, the_plan.schema_digest],
            "transcripts": [[t["id"], t["digest"], t["turns"]] for t in the_plan.transcripts],
        }
    )


def prompt_header(the_plan: Plan) -> dict:
    return {
        "ask": ASK,
        "template": TEMPLATE,
        "instruction_digest": digest(the_plan.instruction),
        "mode": MODE,
        "temperature": TEMPERATURE,
        "prompts_digest": digest([list(a.prompt) for a in the_plan.asks]),
    }


# -- the plan's bill, compiled against raw -------------------------------------------


def plan_bill(the_plan: Plan, cached_rate: float = CACHED_RATE) -> tuple[dict, dict]:
    """The bill of the compiled prompts and of the same loop sending the raw history."""
    compiled = loop_bill([prompt_text(a.prompt) for a in the_plan.asks], cached_rate)
    raw = loop_bill([prompt_text(a.raw_prompt) for a in the_plan.asks], cached_rate)
    summary = {
        "estimate": "chars/4; cached = the prefix shared with the previous prompt",
        "cached_rate": cached_rate,
        "compiled": {k: v for k, v in compiled.items() if k != "per_call"},
        "raw": {k: v for k, v in raw.items() if k != "per_call"},
        "sent_vs_raw": _ratio(compiled["sent_tokens"], raw["sent_tokens"]),
        "billed_vs_raw": _ratio(compiled["billed_tokens"], raw["billed_tokens"]),
    }
    return summary, compiled


def _ratio(a: float, b: float) -> float | None:
    return round(a / b, 3) if b else None

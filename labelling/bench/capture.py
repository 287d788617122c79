"""Capture: replay a real trajectory turn by turn against a model, and record what it declares.

A capture asks a real model, at every assistant turn of real transcripts, which
``<contextgc-state>`` block that turn calls for, and keeps the raw answer beside what the
read path had at that turn. It is the only way to learn whether a model can use the write
path; ``labelling.bench.shadow`` then replays the answers against the same corpus.

How one turn is asked. The transcript's messages up to and including the assistant turn
are compiled with the schema and ``teach_protocol=True`` (the compiler's own instruction,
naming the schema's slots; the same compile gives the read path's state at that turn),
and one user message (``ASK``) follows: the model is a bystander saying what the agent's
last turn changed. Its earlier answers are not fed back, so each turn is judged alone and
a prompt never depends on what a model said before it. Temperature is 0.

The file, ``"format": 2`` (a JSON object, rewritten whole after every turn):

- ``kind`` ``"contextgc-capture"``; ``format`` 2;
- ``endpoints`` (every base URL that answered, in order) and ``model``: who produced it.
  The key is never written;
- ``schema`` and ``schema_digest``; ``corpus``: ``path`` (as given), ``id_scheme``
  (``"formats_many"``: ``compiler``'s transcript ids, e.g. ``AnalogJ__lexicon-336#0``) and
  ``transcripts`` (``id``, ``digest`` of its messages, ``messages``, ``turns``: the
  assistant indices asked);
- ``prompt``: ``ask`` (the text of ``ASK``), ``template`` (its version),
  ``instruction_digest``, ``mode``, ``temperature``, ``prompts_digest`` (every prompt of
  the plan); ``fingerprint``: a digest of all of that and the model;
- ``planned_turns``, ``complete``; ``bill`` (``loop_bill``, compiled against raw);
  ``usage`` (the endpoint's ``usage`` summed, and ``calls_without_usage``);
- ``turns``, one per assistant turn asked, in plan order: ``transcript``, ``index``
  (the message's place in its transcript, 0-based), ``role``, ``content`` (the model's
  raw answer, nothing repaired), ``declaration`` (that answer parsed: ``blocks``,
  ``malformed``, ``assert``, ``pin``, ``unsure``, ``revoke``, ``problems``), ``read_path``
  (slot → value the read path had after that turn), ``usage`` (as the endpoint sent it,
  or null), ``sent_tokens`` and ``cached_tokens`` (chars/4 estimates, see ``loop_bill``).

Format 1 (the seed library's captures: ``"version": 1``, ``endpoint``, ``model``,
``schema``, ``turns`` of ``transcript``, ``index``, ``role``, ``declared``, ``content``)
is read as well. Its transcript ids are ``<source>:<ordinal>``, the source being the
``# source:`` line at the top of the corpus file (``id_scheme`` ``"source:ordinal"``).

Resumable: the file is replaced atomically after every answer, and a re-run with the same
fingerprint asks only the turns still missing. A different fingerprint (another model,
schema, instruction, transcript or prompt) never mixes into the file: the capture goes to
``<stem>-<fingerprint>.json`` beside it instead.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from compiler import (
    CompilerError,
    compile_messages,
    formats_many,
    load_schema,
    message_to_dict,
    parse_declaration,
)
from labelling.bench.chat_client import Endpoint, EndpointError

FORMAT = 2
KIND = "contextgc-capture"
TEMPLATE = 1
MODE = "compact"
TEMPERATURE = 0
CACHED_RATE = 0.1
MIN_IN_SCHEMA = 0.5
ASK = (
    "The last assistant turn above is the agent's. As that agent, write the "
    "<contextgc-state> block for what that turn changed, using only the tracked slots. "
    "Write only the block; if that turn changed no tracked slot, write nothing."
)
FORMATS_MANY = "formats_many"
SOURCE_ORDINAL = "source:ordinal"


class CaptureError(Exception):
    """A capture file that cannot be read, or a corpus that cannot be captured."""


class CaptureStopped(Exception):
    """The endpoint failed mid-run; every answer before it is checkpointed."""


# -- the corpus, under an id scheme -----------------------------------------------------


def corpus_transcripts(text: str, id_scheme: str = FORMATS_MANY) -> dict[str, tuple]:
    """Every transcript of a corpus file as ``id → messages`` (``compiler`` Messages).

    ``formats_many`` ids are the compiler's; ``source:ordinal`` ids are the seed
    library's, ``<# source: line>:<place>``, and a file without that line has none.

    Example:
        >>> text = "# source: demo\\n# a#0 (m)\\nuser: hi\\nassistant: yo\\n---\\n"
        >>> list(corpus_transcripts(text)), list(corpus_transcripts(text, SOURCE_ORDINAL))
        (['a#0'], ['demo:0'])
    """
    found = formats_many(text)
    if id_scheme == FORMATS_MANY:
        return {ident: parsed.messages for ident, parsed in found}
    if id_scheme == SOURCE_ORDINAL:
        first = text.lstrip("\ufeff").split("\n", 1)[0]
        if not first.lower().startswith("# source:"):
            return {}
        source = first.split(":", 1)[1].strip()
        return {f"{source}:{i}": parsed.messages for i, (_, parsed) in enumerate(found)}
    raise CaptureError(f"unknown id scheme {id_scheme!r}")


def transcript_digest(messages: Iterable) -> str:
    """A digest of a transcript's messages, so a capture knows the exact text it asked about."""
    dicts = [message_to_dict(m) for m in messages]
    return _digest(dicts)


def _digest(value: Any) -> str:
    data = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(data.encode()).hexdigest()[:16]


# -- the plan: every prompt, computed before any call -----------------------------------


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
    return _digest(
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
        "instruction_digest": _digest(the_plan.instruction),
        "mode": MODE,
        "temperature": TEMPERATURE,
        "prompts_digest": _digest([list(a.prompt) for a in the_plan.asks]),
    }


# -- the loop's bill ---------------------------------------------------------------------


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


# -- one answer, parsed ------------------------------------------------------------------


def declaration_of(content: str) -> dict:
    """A model's answer parsed as the write path reads it.

    Example:
        >>> d = declaration_of('ok <contextgc-state>{"assert":{"seat":"12A"}}</contextgc-state>')
        >>> d["blocks"], d["malformed"], d["assert"], d["revoke"]
        (1, 0, {'seat': '12A'}, [])
    """
    _, d = parse_declaration(content)
    return {
        "blocks": d.blocks,
        "malformed": d.malformed,
        "assert": dict(d.asserts),
        "pin": dict(d.pins),
        "unsure": dict(d.unsure),
        "revoke": list(d.revokes),
        "problems": list(d.problems),
    }


def declared_keys(declaration: dict) -> list[str]:
    """Every key a declaration names: its assert, pin and unsure entries, then its revokes."""
    return [
        *declaration["assert"],
        *declaration["pin"],
        *declaration["unsure"],
        *declaration["revoke"],
    ]


def declared_values(declaration: dict) -> list[tuple[str, str]]:
    """Every (key, value) a declaration states (revokes state no value)."""
    return [(k, v) for op in ("assert", "pin", "unsure") for k, v in declaration[op].items()]


# -- the run -----------------------------------------------------------------------------


def run_capture(
    corpus: Path,
    schema: str,
    out: Path,
    endpoint: Endpoint,
    *,
    limit: int | None = None,
    cached_rate: float = CACHED_RATE,
    say: Callable[[str], None] = lambda line: None,
) -> Path:
    """Ask every planned turn not yet in the file; return the file written.

    Raises ``CaptureStopped`` when the endpoint fails: what was answered is kept, and
    the same command resumes.
    """
    the_plan = plan(corpus.read_text(encoding="utf-8"), schema, limit)
    fp = fingerprint(the_plan, endpoint.model)
    path, data = _target(out, fp)
    if data is None:
        data = _header(the_plan, fp, corpus, endpoint)
    elif endpoint.base_url not in data["endpoints"]:
        data["endpoints"].append(endpoint.base_url)
    data["bill"], compiled = plan_bill(the_plan, cached_rate)
    asked = [(a.transcript, a.index) for a in the_plan.asks]
    sent = dict(zip(asked, compiled["per_call"], strict=True))
    done = {(t["transcript"], t["index"]) for t in data["turns"]}
    todo = [a for a in the_plan.asks if (a.transcript, a.index) not in done]
    say(f"{path}: {len(done)} of {len(the_plan.asks)} turns already captured, {len(todo)} to ask")
    for ask in todo:
        try:
            reply = endpoint.complete(list(ask.prompt), temperature=TEMPERATURE)
        except EndpointError as error:
            _save(path, data)
            raise CaptureStopped(
                f"stopped at {ask.transcript} turn {ask.index}: {error}. "
                f"{len(data['turns'])} of {len(the_plan.asks)} turns are saved in {path}; "
                "run the same command again to resume"
            ) from None
        data["turns"].append(_turn(ask, reply, sent[(ask.transcript, ask.index)]))
        _add_usage(data["usage"], reply.usage)
        data["turns"].sort(key=_plan_order(the_plan))
        data["complete"] = len(data["turns"]) == len(the_plan.asks)
        _save(path, data)
        say(f"  {ask.transcript} turn {ask.index}: {len(reply.content)} chars")
    return path


def _target(out: Path, fp: str) -> tuple[Path, dict | None]:
    """Where a capture with fingerprint ``fp`` goes, and what of it is already there."""
    sibling = out.with_name(f"{out.stem}-{fp}{out.suffix or '.json'}")
    for path in (out, sibling):
        if not path.exists():
            return path, None
        data = _read_json(path)
        if data.get("fingerprint") == fp and data.get("format") == FORMAT:
            return path, data
    raise CaptureError(f"{sibling} exists and holds another capture; move it aside")


def _header(the_plan: Plan, fp: str, corpus: Path, endpoint: Endpoint) -> dict:
    return {
        "kind": KIND,
        "format": FORMAT,
        "endpoints": [endpoint.base_url],
        "model": endpoint.model,
        "schema": the_plan.schema,
        "schema_digest": the_plan.schema_digest,
        "corpus": {
            "path": str(corpus),
            "id_scheme": FORMATS_MANY,
            "transcripts": list(the_plan.transcripts),
        },
        "prompt": prompt_header(the_plan),
        "fingerprint": fp,
        "planned_turns": len(the_plan.asks),
        "complete": False,
        "bill": None,
        "usage": {"calls_without_usage": 0},
        "turns": [],
    }


def _plan_order(the_plan: Plan):
    order = {(a.transcript, a.index): n for n, a in enumerate(the_plan.asks)}
    return lambda turn: order.get((turn["transcript"], turn["index"]), len(order))


def _turn(ask: Ask, reply, per_call: list) -> dict:
    return {
        "transcript": ask.transcript,
        "index": ask.index,
        "role": "assistant",
        "content": reply.content,
        "declaration": declaration_of(reply.content),
        "read_path": ask.read_path,
        "usage": reply.usage,
        "sent_tokens": per_call[0],
        "cached_tokens": per_call[1],
    }


def _add_usage(total: dict, usage: dict | None) -> None:
    if not usage:
        total["calls_without_usage"] += 1
        return
    for name, value in usage.items():
        if isinstance(value, int) and not isinstance(value, bool):
            total[name] = total.get(name, 0) + value


def _save(path: Path, data: dict) -> None:
    """Replace ``path`` with ``data`` atomically: a kill leaves the old file or the new one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle, ensure_ascii=False, indent=1)
            handle.write("\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _read_json(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise CaptureError(f"{path}: not a readable capture ({error})") from None
    if not isinstance(data, dict):
        raise CaptureError(f"{path}: not a capture (a JSON object is expected)")
    return data


# -- reading any capture -----------------------------------------------------------------


@dataclass(frozen=True)
class Turn:
    transcript: str
    index: int
    content: str
    read_path: dict | None = None


@dataclass(frozen=True)
class Capture:
    """A capture of either format, as shadow, verify and the reports read it."""

    name: str
    format: int
    endpoints: tuple[str, ...]
    model: str
    schema: str | None
    id_scheme: str
    transcripts: dict[str, str | None]  # id → digest of its messages (None: not recorded)
    turns: tuple[Turn, ...]
    planned: int
    legacy_prompt: bool = False
    fingerprint: str = ""
    raw: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def complete(self) -> bool:
        return len(self.turns) >= self.planned


def load_capture(path: Path) -> Capture:
    """Read a capture file of format 2 or of the seed library's format 1."""
    data = _read_json(path)
    try:
        if data.get("format") == FORMAT:
            return _format_2(path.name, data)
        if data.get("version") == 1 and isinstance(data.get("turns"), list):
            return _format_1(path.name, data)
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        # a turn or transcript entry without the fields its format gives every one
        raise CaptureError(f"{path}: a damaged capture ({type(error).__name__}: {error})") from None
    raise CaptureError(f'{path}: unknown capture format (expected "format": {FORMAT})')


def _format_2(name: str, data: dict) -> Capture:
    corpus = data.get("corpus") or {}
    return Capture(
        name=name,
        format=FORMAT,
        endpoints=tuple(e for e in data.get("endpoints") or () if e),
        model=data.get("model") or "",
        schema=data.get("schema"),
        id_scheme=corpus.get("id_scheme", FORMATS_MANY),
        transcripts={t["id"]: t.get("digest") for t in corpus.get("transcripts") or ()},
        turns=tuple(
            Turn(t["transcript"], int(t["index"]), t.get("content") or "", t.get("read_path"))
            for t in data["turns"]
        ),
        planned=int(data.get("planned_turns") or 0),
        legacy_prompt=bool(data.get("legacy_prompt")),
        fingerprint=data.get("fingerprint") or "",
        raw=data,
    )


def _format_1(name: str, data: dict) -> Capture:
    turns = tuple(
        Turn(t["transcript"], int(t["index"]), t.get("content") or "") for t in data["turns"]
    )
    endpoint = data.get("endpoint")
    return Capture(
        name=name,
        format=1,
        endpoints=(endpoint,) if endpoint else (),
        model=data.get("model") or "",
        schema=data.get("schema"),
        id_scheme=SOURCE_ORDINAL,
        transcripts=dict.fromkeys(t.transcript for t in turns),
        turns=turns,
        planned=int(data.get("prompts_asked") or len(turns)),
        legacy_prompt=bool(data.get("legacy_prompt")),
        fingerprint=data.get("prompt_fingerprint") or "",
        raw=data,
    )


# -- what a capture declared, and whether it may be used ---------------------------------


def schema_of(capture: Capture):
    """The schema ``capture`` was made with; ``CaptureError`` if it cannot be loaded here."""
    try:
        return load_schema(capture.schema)
    except CompilerError as error:
        raise CaptureError(f"{capture.name}: its schema cannot be loaded ({error})") from None


def key_figures(capture: Capture) -> dict:
    """Blocks, malformed blocks and declared keys in and off the capture's schema.

    ``in_schema`` is None when the capture names no schema: the ratio is unknown then,
    never guessed.
    """
    slots = set(schema_of(capture).slot_names) if capture.schema else None
    figures = {"turns": len(capture.turns), "turns_with_block": 0, "blocks": 0, "malformed": 0}
    keys: list[str] = []
    for turn in capture.turns:
        d = declaration_of(turn.content)
        figures["turns_with_block"] += d["blocks"] > 0
        figures["blocks"] += d["blocks"]
        figures["malformed"] += d["malformed"]
        keys += declared_keys(d)
    figures["declared"] = len(keys)
    figures["in_schema"] = None if slots is None else sum(k in slots for k in keys)
    off = set() if slots is None else {k for k in keys if k not in slots}
    figures["off_schema_keys"] = sorted(off)
    return figures


def verify(capture: Capture) -> list[str]:
    """Why ``capture`` may not be used as a measurement of the write path; [] if it may."""
    problems = []
    if not capture.endpoints or not capture.model:
        problems.append(
            "it does not say which endpoint and model produced it: "
            "a capture that cannot be attributed is an anecdote"
        )
    if capture.legacy_prompt:
        problems.append("it was made with the legacy prompt, which taught the protocol twice")
    if not capture.complete:
        problems.append(f"it is incomplete: {len(capture.turns)} of {capture.planned} turns")
    figures = key_figures(capture)
    if figures["declared"] == 0:
        problems.append(f"it recorded no declarations ({figures['turns']} turns asked)")
    elif figures["in_schema"] is None:
        problems.append("it names no schema, so its in-schema share is unknown")
    elif figures["in_schema"] < MIN_IN_SCHEMA * figures["declared"]:
        share = figures["in_schema"] / figures["declared"]
        problems.append(
            f"its declared keys name a schema slot {figures['in_schema']} of "
            f"{figures['declared']} times ({share:.0%}), under {MIN_IN_SCHEMA:.0%}"
        )
    return problems

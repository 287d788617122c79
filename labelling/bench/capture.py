"""Capture: replay a real trajectory turn by turn against a model, and record what it declares.

A capture asks a real model, at every assistant turn of real transcripts, which
``<contextgc-state>`` block that turn calls for, and keeps the raw answer beside what the
read path had at that turn. It is the only way to learn whether a model can use the write
path; ``labelling.bench.shadow`` then replays the answers against the same corpus.

This module is the run: it asks a model every prompt of the plan
(``labelling.bench.capture_plan``, which says how one turn is asked) and writes the file.
The bill it stores is ``labelling.bench.capture_bill``'s; each answer is parsed by
``labelling.bench.declarations``; any capture file, of either format, is read back by
``labelling.bench.capture_files``.

The file, ``"format": 2`` (a JSON object, rewritten whole after every turn):

- ``kind`` ``"contextgc-capture"``; ``format`` 2;
- ``endpoints`` (every base URL that answered, in order) and ``model``: who produced it.
  The key is never written;
- ``schema`` and ``schema_digest``; ``corpus``: ``path`` (as given), ``id_scheme``
  (``"formats_many"``: ``compiler``'s transcript ids, e.g. ``AnalogJ__lexicon-336#0``) and
  ``transcripts`` (``id``, ``digest`` of its messages, ``messages``, ``turns``: the
  assistant indices asked);
- ``prompt``: ``ask`` (the text of ``capture_plan.ASK``), ``template`` (its version),
  ``instruction_digest``, ``mode``, ``temperature``, ``prompts_digest`` (every prompt of
  the plan); ``fingerprint``: a digest of all of that and the model;
- ``planned_turns``, ``complete``; ``bill`` (``capture_plan.plan_bill``, compiled against raw);
  ``usage`` (the endpoint's ``usage`` summed, and ``calls_without_usage``);
- ``turns``, one per assistant turn asked, in plan order: ``transcript``, ``index``
  (the message's place in its transcript, 0-based), ``role``, ``content`` (the model's
  raw answer, nothing repaired), ``declaration`` (that answer parsed: ``blocks``,
  ``malformed``, ``assert``, ``pin``, ``unsure``, ``revoke``, ``problems``), ``read_path``
  (slot → value the read path had after that turn), ``usage`` (as the endpoint sent it,
  or null), ``sent_tokens`` and ``cached_tokens`` (chars/4 estimates, see
  ``capture_bill.loop_bill``).

The seed library's format 1 is read, never written (``labelling.bench.capture_files``).

Resumable: the file is replaced atomically after every answer, and a re-run with the same
fingerprint asks only the turns still missing. A different fingerprint (another model,
schema, instruction, transcript or prompt) never mixes into the file: the capture goes to
``<stem>-<fingerprint>.json`` beside it instead.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from labelling.bench.capture_bill import CACHED_RATE
from labelling.bench.capture_files import FORMAT, FORMATS_MANY, CaptureError, read_json
from labelling.bench.capture_plan import (
    TEMPERATURE,
    Ask,
    Plan,
    fingerprint,
    plan,
    plan_bill,
    prompt_header,
)
from labelling.bench.chat_client import Endpoint, EndpointError
from labelling.bench.declarations import declaration_of

KIND = "contextgc-capture"


class CaptureStopped(Exception):
    """The endpoint failed mid-run; every answer before it is checkpointed."""


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
        data = read_json(path)
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

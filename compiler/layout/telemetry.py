"""Telemetry: what one compile did, every value computed from that run."""

from __future__ import annotations

from dataclasses import replace
from itertools import compress, repeat
from operator import is_not

from compiler.layout.prefix import given_dicts, prefix_kept
from compiler.layout.tokens import CharEstimator
from compiler.read import Message
from compiler.state import retirement_violations


def message_tokens(counter, message: Message | dict) -> int:
    """Tokens of one message: its text and any tool-call names and arguments, at least 1."""
    if type(message) is Message and isinstance(counter, CharEstimator):
        return _estimate(message)
    parts = _parts(message)
    if isinstance(counter, CharEstimator):  # same figure, without joining the text
        size = sum(len(p) for p in parts if p) + max(0, sum(1 for p in parts if p) - 1)
        return max(1, size // 4)
    return max(1, counter.count("\n".join(p for p in parts if p)))


def _estimate(message: Message) -> int:
    """The chars/4 figure of ``message_tokens`` for a ``Message``, without listing its parts:
    the non-empty parts' lengths, one separator between each two, over 4."""
    size = len(message.content or "")
    if not message.tool_calls:
        return size // 4 or 1  # one part: no separator
    parts = 1 if size else 0
    for call in message.tool_calls:  # (two parts a call: no tuple built for them)
        name, arguments = call.name, call.arguments
        if name:
            size += len(name)
            parts += 1
        if arguments:
            size += len(arguments)
            parts += 1
    return max(1, (size + max(0, parts - 1)) // 4)


def _parts(message: Message | dict) -> list[str]:
    if isinstance(message, dict):
        text = message.get("content") if isinstance(message.get("content"), str) else ""
        calls = message.get("tool_calls") if isinstance(message.get("tool_calls"), list) else []
        parts = [text]
        for call in calls:
            fn = call.get("function", {}) if isinstance(call, dict) else {}
            if isinstance(fn, dict):
                parts.extend(str(fn.get(k, "")) for k in ("name", "arguments"))
    else:
        parts = [message.text]
        for call in message.tool_calls:
            parts.extend((call.name, call.arguments))
    return parts


def telemetry(result, *, counter, elapsed_ms: float, warnings, output: list[dict]):
    """The telemetry dict for one ``Compilation``."""
    reg = result.register
    mode = result.options.mode
    raw, compiled = _token_counts(result, counter)
    saved = max(0, raw - compiled)
    n = result.numbers.__getitem__ if result.numbers is not None else _same
    # (a list built only where there is something to list: an empty comprehension
    # costs a frame, and most compiles retire, compact, refuse and warn of nothing)
    retired = [n(r.turn) for r in result.retired] if result.retired else []
    emitted, given = result.emitted.messages, output
    if mode == "cache_friendly":  # the caller's messages, with our state notes between them
        kept = list(map(is_not, result.emitted.origins, repeat(None)))  # (no frame a message)
        emitted, given = list(compress(emitted, kept)), list(compress(output, kept))
    preserved = prefix_kept(result.original, emitted, given, given_dicts(result))
    if result.skipped_at is not None:  # the caller's list differs from there on
        preserved = min(preserved, result.skipped_at)
    shown = {e.slot: reg.shown_value(e) for e in reg.active}
    return {
        "mode": mode,
        "active_state_slots": shown,
        # (a slot's shown value is the one of its last entry, as its fact is)
        "state": {e.slot: _fact(e, shown[e.slot], n) for e in reg.active},
        "state_history": _history(reg, n),
        "retired_turn_indices": retired,
        "retired_turn_count": len(retired),
        "retired_turns": [_retired(result, r, n) for r in result.retired] if retired else [],
        "raw_token_count": raw,
        "compiled_token_count": compiled,
        "tokens_saved": saved,
        "compression_ratio_pct": round(saved / raw * 100, 1) if raw else 0.0,
        "context_grew": compiled > raw,
        "token_growth": compiled - raw,
        "token_estimator": counter.name,
        "tool_payloads_compacted": len(result.compacted),
        "compacted_payloads": _payloads(result.compacted, n, result.token_memo),
        "status_lines_dropped": sum([c.status_lines_dropped for c in result.compacted.values()]),
        "state_keys_dropped_over_limit": list(reg.dropped_over_limit),
        "state_values_truncated": list(reg.truncated_values),
        "kv_cache_prefix_messages_preserved": preserved,
        "kv_cache_prefix_intact": result.skipped_at is None and preserved == len(result.original),
        "retirement_violations": [
            v.__dict__ | {"turn": n(v.turn), "supports": list(map(n, v.supports))}
            for v in retirement_violations(reg, [r.turn for r in result.retired])
        ],
        "declarations": _declarations(result, counter, n),
        "conflicts": [_conflict(c, n) for c in reg.conflicts] if reg.conflicts else [],
        "rejected_writes": _refusals(result, n),
        "reaffirmations": reg.reaffirmations,
        "messages_in": len(result.original),
        "messages_out": len(output),
        "compiled_markup_stripped": result.markup_stripped,
        "recall": _recall(result, n),
        "parse_warnings": list(map(str, warnings)),
        "compile_time_ms": round(max(elapsed_ms, 0.001), 3),
    }


def _token_counts(result, counter) -> tuple[int, int]:
    """Tokens in and out. Messages the compile holds (every input message, and each
    output message that is one of them unchanged) are counted once per history (once per
    call without a memo); the estimate costs a length, so it is simply taken."""
    if isinstance(counter, CharEstimator):
        return _estimated(result)
    memo, name = result.token_memo if result.token_memo is not None else {}, counter.name

    def held(message) -> int:
        counts = memo.setdefault(id(message), {})
        if name not in counts:
            counts[name] = message_tokens(counter, message)
        return counts[name]

    raw = sum(held(m) for m in result.original)
    compiled = 0
    for message, origin in zip(result.emitted.messages, result.emitted.origins, strict=True):
        kept = result.is_held(message, origin)
        compiled += held(message) if kept else message_tokens(counter, message)
    return raw, compiled


def _estimated(result) -> tuple[int, int]:
    """The chars/4 tokens in and out, each input message figured once: an output message
    that is an input message as read takes that input's figure. (The inputs are the
    messages read, or equal to them, unless a compile's own markup was cut from one;
    an equal message has the same text and calls, so the same figure.)"""
    figures = _figures(result)
    inputs, emitted = result.input, result.emitted
    if inputs != result.original:
        return sum(figures), sum(map(_estimate, emitted.messages))
    pairs = zip(emitted.messages, emitted.origins, strict=True)
    compiled = [figures[o] if o is not None and m is inputs[o] else _estimate(m) for m, o in pairs]
    return sum(figures), sum(compiled)


def _figures(result) -> tuple[int, ...]:
    """``_estimate`` of each input message as read. Where a memo outlives the compile, the
    figures are kept in it (under a key no message id can be) and only those of messages
    new since the last compile are figured: a history only grows at its end, so the ones
    before are those of the same messages. (Figuring all 62 of an airline loop's late
    call again took about a tenth of the call.)"""
    memo, original = result.token_memo, result.original
    if memo is None:
        return tuple(map(_estimate, original))
    figures = memo.get(_FIGURES, ())
    if len(figures) > len(original):
        figures = ()
    if len(figures) < len(original):  # (a new tuple: a copied memo may share the old one)
        figures = memo[_FIGURES] = (*figures, *map(_estimate, original[len(figures) :]))
    return figures


_FIGURES = "chars/4 figures of the input messages"


def _same(turn: int) -> int:
    return turn


def _fact(entry, shown: str, n) -> dict:
    return {
        "value": shown,
        "turn": n(entry.turn),
        "provenance": entry.provenance._value_,  # (see _history)
        "pinned": entry.pinned,
        "unsure": entry.unsure,
        "supports": list(entry.supports) if n is _same else list(map(n, entry.supports)),
    }


def _history(reg, n) -> dict:
    history: dict[str, list] = {}
    for entry in reg.history:
        superseded, revoked = entry.superseded_by, entry.revoked_at
        history.setdefault(entry.slot, []).append(
            {
                "value": entry.value,
                "turn": n(entry.turn),
                # ``_value_`` is the member's value, read without the call ``value`` makes
                "provenance": entry.provenance._value_,
                "superseded_by": None if superseded is None else n(superseded),
                "revoked_at": None if revoked is None else n(revoked),
                # (a slot kept per entity names it; an unscoped slot's rows are as they were)
                **({"entity": entry.entity} if entry.entity is not None else {}),
            }
        )
    return dict(sorted(history.items()))


def _retired(result, retired, n) -> dict:
    role = result.input[retired.turn].role
    if n is not _same:  # the reason names turns too
        by = tuple((slot, n(turn)) for slot, turn in retired.superseded)
        retired = replace(retired, turn=n(retired.turn), superseded=by)
    return {
        "turn": retired.turn,
        "role": role,
        "reason": retired.reason,
        "superseded_by": dict(retired.superseded),
    }


def _payloads(compacted: dict, n, memo: dict | None = None) -> list[dict]:
    """One row per compacted payload, by turn. With a memo (``_figures``), each row is
    kept with the result it was made from and handed out again as a copy while the
    payload's result is that very object (a loop's payloads keep theirs from call to
    call)."""
    if not compacted:
        return []
    if memo is None:
        return [_payload(n(i), c) for i, c in sorted(compacted.items())]
    rows = memo.get(_ROWS, {})
    fresh, out = {}, []
    for index, result in sorted(compacted.items()):
        turn = n(index)
        kept = rows.get(index)
        if kept is None or kept[0] is not result or kept[1] != turn:
            kept = (result, turn, _payload(turn, result))
        fresh[index] = kept
        out.append(dict(kept[2]))
    memo[_ROWS] = fresh  # (a new dict: a copied memo may share the old one)
    return out


_ROWS = "telemetry rows of the compacted payloads"


def _refusals(result, n) -> list[dict]:
    refusals = (*result.declared.refusals, *result.register.refusals)
    return [_refusal(r, n) for r in refusals] if refusals else []


def _payload(index, compacted) -> dict:
    return {
        "turn": index,
        "shape": compacted.shape,
        "chars_before": compacted.original_chars,
        "chars_after": compacted.compacted_chars,
        "rows_dropped": compacted.rows_dropped,
        "safety_rows_kept": compacted.safety_rows_kept,
    }


# the specification's wording for a declaration that outranked the text
_WINNER = {"declared": "the declaration"}


def _conflict(conflict, n) -> dict:
    """Both values with their turns; named declared/inferred where they are those."""
    kept, refused = conflict.kept.provenance.value, conflict.refused_provenance.value
    out = {
        "entity": conflict.slot,
        "kept": conflict.kept.value,
        "kept_turn": n(conflict.kept.turn),
        "kept_provenance": kept,
        "refused": conflict.refused_value,
        "refused_turn": n(conflict.refused_turn),
        "refused_provenance": refused,
        "note": f"{_WINNER.get(kept, f'the {kept} value')} won; verify it is still correct",
    }
    if kept != refused:
        out[kept] = conflict.kept.value
        out[f"{kept}_turn"] = out["kept_turn"]
        out[refused] = conflict.refused_value
        out[f"{refused}_turn"] = out["refused_turn"]
    return out


def _refusal(refusal, n) -> dict:
    out = {
        "entity": refusal.slot,
        "turn": n(refusal.turn),
        "kind": refusal.kind,
        "reason": refusal.reason,
    }
    if refusal.value is not None:
        out["attempted_value"] = refusal.value
    if refusal.dropped is not None:
        out["dropped"] = refusal.dropped
    return out


def _declarations(result, counter, n) -> dict:
    """The write path's figures for this compile."""
    declared = result.declared
    active = result.register.active
    share = None
    if active:
        declared_count = [e.provenance._value_ for e in active].count("declared")
        share = round(declared_count / len(active), 3)
    schema = result.options.schema
    contracts = [s.name for s in schema.slots if s.contract] if schema else []
    return {
        **declared.counts,
        "declared_share": share,
        "protocol_taught": bool(result.instruction),
        "instruction_tokens": counter.count(result.instruction) if result.instruction else 0,
        "off_schema_keys": list(declared.off_schema_keys),
        "declaration_policy": result.options.declaration_policy,
        "value_policy": result.options.value_policy,
        "slots_with_a_value_contract": contracts,
        "problems": [f"turn {n(turn)}: {problem}" for turn, problem in declared.problems],
    }


def _recall(result, n) -> dict | None:
    hit = result.recall
    if hit is None:
        return None
    return {
        "turn": n(hit.turn),
        "role": hit.role,
        "score": hit.score,
        "placed": result.emitted.recall_placed,
    }

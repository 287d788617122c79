"""What the console shows for one compile, built from the input and the telemetry.

Plain data for the template: the original turns, each marked kept, retired
(superseded by turn N for slot S) or compacted (size before and after); the
compiled messages as the model receives them; the state register with each
slot's history; and banners for everything that needs a reader's attention.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from compiler.emit import strip_compiled
from compiler.formats import formats
from playground.figures import SchemaFigures, figures_for
from playground.service import Result


@dataclass(frozen=True)
class Turn:
    index: int
    role: str
    name: str | None
    text: str
    calls: tuple[str, ...] = ()
    retired: dict | None = None
    compacted: dict | None = None

    @property
    def status(self) -> str:
        return "retired" if self.retired else "compacted" if self.compacted else "kept"


@dataclass(frozen=True)
class Banner:
    level: str  # "error" | "warning" | "info"
    title: str
    items: tuple[str, ...] = ()


@dataclass(frozen=True)
class Report:
    source: str
    schema: SchemaFigures | None
    turns: tuple[Turn, ...]
    compiled: tuple[dict, ...]
    state: tuple[dict, ...]
    banners: tuple[Banner, ...]
    telemetry: dict
    compiled_json: str = field(repr=False)

    @property
    def exact_tokens(self) -> bool:
        return self.telemetry["token_estimator"] != "chars/4"


def report(result: Result, *, text: str, source: str, schema: str | None) -> Report:
    """The console's view of one compile of ``text``."""
    tel = result.telemetry
    return Report(
        source=source,
        schema=figures_for(schema) if schema else None,
        turns=original_turns(text, tel),
        compiled=tuple(compiled_view(m) for m in result.compiled_messages),
        state=state_rows(tel),
        banners=banners(tel, schema=schema),
        telemetry=tel,
        compiled_json=json.dumps(result.as_dict(), indent=2, ensure_ascii=False),
    )


def original_turns(text: str, tel: dict) -> tuple[Turn, ...]:
    """The turns as the compiler numbered them, each with what happened to it."""
    messages, _ = strip_compiled(formats(text).messages)
    retired = {r["turn"]: r for r in tel["retired_turns"]}
    compacted = {c["turn"]: c for c in tel["compacted_payloads"]}
    return tuple(
        Turn(
            index=i,
            role=m.role,
            name=m.name,
            text=m.text,
            calls=tuple(_call(c) for c in m.tool_calls),
            retired=_retired(retired.get(i)),
            compacted=compacted.get(i),
        )
        for i, m in enumerate(messages)
    )


def _call(call) -> str:
    if not call.name and not call.arguments:
        return "a tool call (its name and arguments are not in the transcript)"
    return f"{call.name or 'a tool'}({call.arguments})"


def _retired(entry: dict | None) -> dict | None:
    if entry is None:
        return None
    by = sorted(entry["superseded_by"].items(), key=lambda item: (item[1], item[0]))
    return {**entry, "superseded": [{"slot": slot, "turn": turn} for slot, turn in by]}


def compiled_view(message: dict) -> dict:
    """A compiled message: role, content verbatim, any other fields as JSON."""
    rest = {k: v for k, v in message.items() if k not in ("role", "content")}
    return {
        "role": message.get("role", ""),
        "content": message.get("content") if isinstance(message.get("content"), str) else "",
        "extra": json.dumps(rest, indent=1, ensure_ascii=False) if rest else "",
    }


def state_rows(tel: dict) -> tuple[dict, ...]:
    """Each slot with its live fact (none once revoked) and every value it has had."""
    live, history = tel["state"], tel["state_history"]
    return tuple(
        {"slot": slot, "live": slot in live, **live.get(slot, {}), "history": history.get(slot, [])}
        for slot in sorted(set(live) | set(history))
    )


def banners(tel: dict, *, schema: str | None) -> tuple[Banner, ...]:
    """Everything a reader should not miss, most serious first."""
    found = [b for b in (rule(tel) for rule in RULES) if b]
    if not schema:
        found.insert(0, NO_SCHEMA)
    order = {"error": 0, "warning": 1, "info": 2}
    return tuple(sorted(found, key=lambda b: order[b.level]))


NO_SCHEMA = Banner(
    "warning",
    "No schema: no state is tracked.",
    (
        "Without a schema nothing is read out of the transcript, so no turn is retired for "
        "being superseded; only tool payloads are compacted. Choose a schema to track state.",
    ),
)


def _violations(tel):
    items = tuple(f"turn {v.get('turn')}: {v}" for v in tel["retirement_violations"])
    return items and Banner("error", "Retirement would strand a live fact.", items)


def _conflicts(tel):
    items = tuple(
        f"{c['entity']}: kept {c['kept']!r} ({c['kept_provenance']}, turn {c['kept_turn']}) "
        f"over {c['refused']!r} ({c['refused_provenance']}, turn {c['refused_turn']}) — {c['note']}"
        for c in tel["conflicts"]
    )
    return items and Banner("warning", "Conflicts between what was declared and said.", items)


def _rejected(tel):
    items = tuple(
        f"turn {r['turn']}, {r['entity']}: {r.get('kind') or 'refused'} — {r['reason']}"
        for r in tel["rejected_writes"]
    )
    return items and Banner("warning", "Refused writes.", items)


def _off_schema(tel):
    keys = tel["declarations"]["off_schema_keys"]
    return keys and Banner("warning", "Declared keys the schema does not define.", tuple(keys))


def _problems(tel):
    items = tuple(tel["declarations"]["problems"])
    return items and Banner("warning", "Malformed or partly dropped state blocks.", items)


def _grew(tel):
    if not tel["context_grew"]:
        return None
    return Banner(
        "warning",
        f"The compiled context is larger than the input by {tel['token_growth']} tokens.",
        ("The state header and any instruction cost more than this transcript saves.",),
    )


def _caps(tel):
    dropped, cut = tel["state_keys_dropped_over_limit"], tel["state_values_truncated"]
    items = tuple(f"dropped over the 64-fact cap: {k}" for k in dropped) + tuple(
        f"value cut to 512 characters: {k}" for k in cut
    )
    return items and Banner("warning", "State over its limits.", items)


def _parse(tel):
    items = tuple(tel["parse_warnings"])
    return items and Banner("info", "Parse warnings.", items)


RULES = (_violations, _conflicts, _rejected, _off_schema, _problems, _grew, _caps, _parse)

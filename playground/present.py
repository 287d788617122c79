"""What the console shows for one compile, built from the input and the telemetry.

Plain data for the template: the original turns, each marked kept, retired
(superseded by turn N for slot S) or compacted (size before and after); the
compiled messages as the model receives them; the state register with each
slot's history; and banners for everything that needs a reader's attention.

A JSON transcript may carry a lone surrogate escape (``"\\ud800"``), which no UTF-8
page can hold: the page shows U+FFFD in its place, the download keeps the escape.
"""

from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass, field

from compiler import formats, strip_compiled_one
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
        turns=readable(original_turns(text, tel)),
        compiled=readable(tuple(compiled_view(m) for m in result.compiled_messages)),
        state=readable(state_rows(tel)),
        banners=readable(banners(tel, schema=schema)),
        telemetry=readable(tel),
        compiled_json=json_text(result.as_dict()),
    )


SURROGATE = re.compile(r"[\ud800-\udfff]")


def readable(value):
    """``value`` with every lone surrogate in its strings replaced by U+FFFD.

    Walks strings, dicts, lists, tuples and dataclasses; anything else is returned as is.

    Example:
        >>> readable({"role": "user", "parts": ["\\ud800 hi", 1]})
        {'role': 'user', 'parts': ['\ufffd hi', 1]}
    """
    if isinstance(value, str):
        return value if value.isascii() else SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {readable(k): readable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(readable(v) for v in value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {f.name: readable(getattr(value, f.name)) for f in dataclasses.fields(value)}
        return dataclasses.replace(value, **changes)
    return value


def json_text(value) -> str:
    """Indented JSON that keeps non-ASCII text as is, and a lone surrogate as its escape.

    Example:
        >>> json_text({"a": "é \\ud800"})
        '{\\n  "a": "é \\\\ud800"\\n}'
    """
    text = json.dumps(value, indent=2, ensure_ascii=False)
    return SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def original_turns(text: str, tel: dict) -> tuple[Turn, ...]:
    """The turns as the compiler numbered them (their place among the messages read from
    the text), each with what happened to it. A compiled header an earlier run wrote is
    set aside, as the compiler sets it aside: it keeps its number but is not a turn."""
    read = enumerate(strip_compiled_one(m)[0] for m in formats(text).messages)
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
        for i, m in read
        if m is not None
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
    """A compiled message: role, content verbatim, any other fields as JSON.

    The content is shown in parts: a string is one text part; in an array of content
    parts, each text part is its text and any other part (an image, audio) its JSON.

    Example:
        >>> image = {"type": "image_url", "image_url": {"url": "u"}}
        >>> parts = [{"type": "text", "text": "hi"}, image]
        >>> [p["text"] for p in compiled_view({"role": "user", "content": parts})["parts"]]
        ['hi', '{"type": "image_url", "image_url": {"url": "u"}}']
    """
    rest = {k: v for k, v in message.items() if k not in ("role", "content")}
    return {
        "role": message.get("role", ""),
        "parts": content_parts(message.get("content")),
        "extra": json.dumps(rest, indent=1, ensure_ascii=False) if rest else "",
    }


def content_parts(content) -> tuple[dict, ...]:
    """A message's content as the parts the console shows, in order."""
    if content is None or content == "":
        return ()
    if isinstance(content, str):
        return ({"text": content, "json": False},)
    if not isinstance(content, list):
        return ({"text": json.dumps(content, ensure_ascii=False), "json": True},)
    return tuple(_part(part) for part in content)


def _part(part) -> dict:
    if isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str):
        return {"text": part["text"], "json": False}
    return {"text": json.dumps(part, ensure_ascii=False), "json": True}


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

"""What the console shows for one compile, built from the input and the telemetry.

Plain data for the template: the aligned diff (``playground.diff``: one row per
original turn, what the compiler made of it beside it); the state register with each
slot's history; and banners for everything that needs a reader's attention, every
"turn N" in them a link to that turn's row.

A JSON transcript may carry a lone surrogate escape (``"\\ud800"``), which no UTF-8
page can hold: the page shows U+FFFD in its place, the download keeps the escape.
"""

from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass, field

from compiler import formats, strip_compiled_one
from playground import diff
from playground.figures import SchemaFigures, figures_for
from playground.loop_bill import LoopBill
from playground.service import Result


@dataclass(frozen=True)
class Banner:
    level: str  # "error" | "warning" | "info"
    title: str
    items: tuple[str, ...] = ()

    @property
    def linked(self) -> tuple[tuple[tuple[str, int | None], ...], ...]:
        """Each item as pieces of text, a piece that names a turn with its number."""
        return tuple(linked(item) for item in self.items)


TURN_NAMED = re.compile(r"(\bturn (\d+)\b)")


def linked(text: str) -> tuple[tuple[str, int | None], ...]:
    """``text`` cut into pieces, each "turn N" its own piece carrying N.

    Example:
        >>> linked("turn 3: a superseded by turn 12")
        (('turn 3', 3), (': a superseded by ', None), ('turn 12', 12))
    """
    pieces: list[tuple[str, int | None]] = []
    at = 0
    for match in TURN_NAMED.finditer(text):
        if match.start() > at:
            pieces.append((text[at : match.start()], None))
        pieces.append((match.group(1), int(match.group(2))))
        at = match.end()
    if at < len(text):
        pieces.append((text[at:], None))
    return tuple(pieces)


@dataclass(frozen=True)
class Report:
    source: str
    schema: SchemaFigures | None
    rows: tuple[diff.Row, ...]
    state: tuple[dict, ...]
    banners: tuple[Banner, ...]
    telemetry: dict
    compiled_json: str = field(repr=False)
    changed_only: bool = False
    bill: LoopBill | None = None  # the agent loop's bill, raw beside compiled

    @property
    def exact_tokens(self) -> bool:
        return self.telemetry["token_estimator"] != "chars/4"

    @property
    def shown(self) -> tuple[diff.Row | diff.Gap, ...]:
        """The rows, or with "changed turns only" each run of unchanged ones folded."""
        return diff.fold(self.rows) if self.changed_only else self.rows

    @property
    def turn_count(self) -> int:
        return sum(1 for row in self.rows if row.turn is not None)

    @property
    def changed_count(self) -> int:
        return sum(1 for row in self.rows if row.changed and row.turn is not None)


def report(
    result: Result, *, text: str, source: str, schema: str | None, changed_only: bool = False
) -> Report:
    """The console's view of one compile of ``text``."""
    tel = result.telemetry
    read = [(i, m) for i, m in enumerate(read_turns(text)) if m is not None]
    return Report(
        source=source,
        schema=figures_for(schema) if schema else None,
        rows=readable(diff.rows(read, result.compiled_messages, tel)),
        changed_only=changed_only,
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


def read_turns(text: str) -> list:
    """The messages read from ``text``, each less what an earlier compile wrote into it
    (None where nothing is left), numbered by their place as the compiler numbers turns."""
    return [strip_compiled_one(m)[0] for m in formats(text).messages]


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
    return items and Banner("warning", conflict_title(tel["conflicts"]), items)


def conflict_title(conflicts: list[dict]) -> str:
    """The conflicts banner's title: "declared" only when a declaration is one side.

    Example:
        >>> conflict_title([{"kept_provenance": "acted", "refused_provenance": "inferred"}])
        'Conflicts between values read from the transcript.'
    """
    sides = {c[key] for c in conflicts for key in ("kept_provenance", "refused_provenance")}
    if "declared" in sides:
        return "Conflicts between what was declared and said."
    return "Conflicts between values read from the transcript."


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

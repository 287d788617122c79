"""Schemas: the vocabulary of the read path.

A schema names the slots a transcript may set and, per slot, the patterns
that read a value out of speech (each with one capture group). There is no
default schema: without one, nothing is tracked.

The shipped files live in ``compiler/schemas/*.json``, each written in the
authored form (``schema_format``: named fragments, a reason and examples beside
every pattern), with the figures ``tests/bench/fit_schemas.py`` measured in a
generated file beside it, ``<name>.measurement.json``::

    {"name": "logistics",
     "_comment": "...",
     "fragments": {"method": "..."},
     "slots": {"payment_method": {"patterns": [{"regex": "...", "reason": "...",
                                                "matches": {...}, "rejects": [...]}],
                                  "contract": "...", "actions": [...]}}}

The single-file form these files had before is read too: plain string patterns,
and the measurement inside, as ``_measurement``. So are the peer's layout
(``{"entities": {slot: [regex, ...]}}``) and a plain ``{slot: [regex, ...]}`` mapping.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from compiler.errors import SchemaError
from compiler.state.patterns import PATTERN_FLAGS, PatternNote, plain_pattern, slot_patterns
from compiler.state.prefilter import Checks, checking_order, required_literals, shared_clauses
from compiler.state.schema_format import (
    Effect,
    action_effect,
    check_scopes,
    check_yields,
    digest,
    expand_authored,
    slot_links,
)
from compiler.state.shipped import shipped
from compiler.state.starts import TEXT_START, leading_literals, word_bounded, word_char

SCHEMA_DIR = Path(__file__).parent.parent / "schemas"
MEASUREMENT_SUFFIX = ".measurement.json"


@dataclass(frozen=True)
class ActionMap:
    """A tool call whose argument names a slot's value (the action path), and what the
    call does to it (``Effect``)."""

    tool: str
    argument: str
    effect: Effect = Effect.SETS

    @property
    def commits(self) -> bool:
        """Whether the call changes state (sets or ends), as the older ``commits`` said."""
        return self.effect is not Effect.READS

    @cached_property
    def steps(self) -> tuple[tuple[str, int | None], ...]:
        """The argument path, split once (``path_steps``)."""
        return path_steps(self.argument)


_INDEX = re.compile(r"-?\d+")


def path_steps(path: str) -> tuple[tuple[str, int | None], ...]:
    """A dotted argument path's steps, each with the list index it names (None: none).

    Example:
        >>> path_steps("flights.-1.n")
        (('flights', None), ('-1', -1), ('n', None))
    """
    return tuple((step, int(step) if _INDEX.fullmatch(step) else None) for step in path.split("."))


@dataclass(frozen=True)
class Slot:
    name: str
    patterns: tuple[re.Pattern, ...]
    contract: str | None = None
    actions: tuple[ActionMap, ...] = ()
    scope: str | None = None
    yields_to: tuple[str, ...] = ()  # slots that take a value both read at one place
    needs: tuple = field(default=(), compare=False)
    leads: tuple = field(default=(), compare=False)
    # per pattern, what voids its match where said earlier in the sentence (None: nothing)
    guards: tuple[re.Pattern | None, ...] = ()

    def __post_init__(self):
        # Derived once per schema: what a turn must contain for each pattern to
        # match at all, and the literals every match of it starts with.
        if len(self.needs) != len(self.patterns):
            object.__setattr__(self, "needs", tuple(required_literals(p) for p in self.patterns))
        if len(self.leads) != len(self.patterns):
            object.__setattr__(self, "leads", tuple(leading_literals(p) for p in self.patterns))
        if not self.guards:  # (none given: no pattern has one)
            object.__setattr__(self, "guards", (None,) * len(self.patterns))

    @cached_property
    def gate(self) -> tuple[frozenset[str], ...]:
        """The clauses every pattern needs: a turn that misses one is not read for the
        slot at all, at the cost of one check instead of one per pattern."""
        return shared_clauses(self.needs)

    @cached_property
    def checks(self) -> Checks:
        """The gate in the order ``admits`` checks it fastest (``checking_order``), its
        clauses with the fewest literals first: a clause of one literal costs one scan
        to fail, one of ten digits up to ten, and any clause that fails ends the check."""
        return _fewest_first(checking_order(self.gate))

    @property
    def plain_patterns(self) -> list[str | dict]:
        """The patterns as a schema mapping holds them (``plain_pattern``)."""
        return [
            plain_pattern(p.pattern, g and g.pattern)
            for p, g in zip(self.patterns, self.guards, strict=True)
        ]

    @cached_property
    def readers(self) -> tuple[tuple[re.Pattern, tuple, frozenset[str] | None, Any, Any], ...]:
        """Per pattern: the clauses it needs beyond the gate and its leading literals
        (``_implied``), its leading literals, when its matches start only where a word
        starts (``word_bounded``), ``word_char``: no match starts right after one; and its
        guard (``not_after``), or None."""
        gate = set(self.gate)
        return tuple(
            (
                pattern,
                _fewest_first(
                    checking_order(
                        tuple(c for c in need if c not in gate and not _implied(c, lead))
                    )
                ),
                lead,
                word_char if word_bounded(pattern, lead) else None,
                guard,
            )
            for pattern, need, lead, guard in zip(
                self.patterns, self.needs, self.leads, self.guards, strict=True
            )
        )


def _implied(clause: frozenset[str], lead: frozenset[str] | None) -> bool:
    """Whether each of a pattern's leading literals holds a literal of ``clause``: a text
    that misses the clause holds none of them, so the scan for where they begin finds
    nothing there, and checking the clause first would only repeat that work for a text
    that has it.

    Example:
        >>> _implied(frozenset({"from"}), frozenset({"from"}))
        True
        >>> _implied(frozenset({"to"}), frozenset({"from"})), _implied(frozenset({"a"}), None)
        (False, False)
    """
    if not lead or TEXT_START in lead:
        return False
    return all(any(literal in leading for literal in clause) for leading in lead)


def _fewest_first(checks: Checks) -> Checks:
    """The clauses by how many literals each has, fewest first (ties as they were): a
    text admits them all in any order, so the order only changes the cost.

    Example:
        >>> _fewest_first((("0", "1", "2"), ("_",)))
        (('_',), ('0', '1', '2'))
    """
    return tuple(sorted(checks, key=len))


@dataclass(frozen=True)
class Schema:
    """A loaded schema. ``digest`` identifies its patterns and contracts."""

    name: str
    slots: tuple[Slot, ...]
    immutable: frozenset[str] = frozenset()
    comment: str = ""
    measurement: dict = field(default_factory=dict, compare=False, hash=False)
    digest: str = ""
    notes: tuple[PatternNote, ...] = field(default=(), compare=False, hash=False)

    @cached_property
    def actions_by_tool(self) -> dict[str, tuple[tuple[str, ActionMap], ...]]:
        """Tool name → (slot, mapping) pairs of the action path."""
        by_tool: dict[str, list[tuple[str, ActionMap]]] = {}
        for slot in self.slots:
            for action in slot.actions:
                by_tool.setdefault(action.tool, []).append((slot.name, action))
        return {tool: tuple(pairs) for tool, pairs in by_tool.items()}

    @cached_property
    def committing_by_tool(self) -> dict[str, tuple[tuple[str, ActionMap], ...]]:
        """``actions_by_tool`` without the mappings that do not commit state, and without
        the tools left with none."""
        by_tool = {
            tool: tuple((slot, action) for slot, action in pairs if action.commits)
            for tool, pairs in self.actions_by_tool.items()
        }
        return {tool: pairs for tool, pairs in by_tool.items() if pairs}

    @cached_property
    def read_slots(self) -> tuple[Slot, ...]:
        """The slots the read path reads from speech: those with a pattern (a slot may be
        set by tool calls alone)."""
        return tuple(slot for slot in self.slots if slot.patterns)

    @cached_property
    def scopes(self) -> dict[str, str]:
        """Scoped slot → the entity slot it is kept per (``"scope"`` in the schema)."""
        return {slot.name: slot.scope for slot in self.slots if slot.scope is not None}

    @cached_property
    def yielding(self) -> dict[str, tuple[str, ...]]:
        """Slot → the slots it yields to (``"yields_to"`` in the schema)."""
        return {slot.name: slot.yields_to for slot in self.slots if slot.yields_to}

    @property
    def slot_names(self) -> tuple[str, ...]:
        return tuple(slot.name for slot in self.slots)

    def slot(self, name: str) -> Slot | None:
        for slot in self.slots:
            if slot.name == name:
                return slot
        return None


def list_schemas() -> list[str]:
    """Names of the shipped schemas, sorted.

    Example:
        >>> list_schemas()
        ['coding', 'logistics', 'travel']
    """
    return sorted(
        path.stem
        for path in SCHEMA_DIR.glob("*.json")
        if not path.name.endswith(MEASUREMENT_SUFFIX)
    )


def measurement_path(schema_path: Path) -> Path:
    """Where the generated measurement of the schema file ``schema_path`` lives.

    Example:
        >>> measurement_path(Path("schemas/travel.json")).name
        'travel.measurement.json'
    """
    return schema_path.with_name(schema_path.stem + MEASUREMENT_SUFFIX)


def load_schema(name_or_path: str | Path | dict | Schema) -> Schema:
    """Load a shipped schema by name, a schema file by path, or a mapping.

    Example:
        >>> schema = load_schema("logistics")
        >>> schema.slot_names
        ('active_order', 'delivery_address', 'payment_method', 'profile_address')
        >>> load_schema({"order_id": [r"order (ORD-\\d+)"]}).slot_names
        ('order_id',)
    """
    if isinstance(name_or_path, Schema):
        return name_or_path
    if isinstance(name_or_path, dict):
        return schema_from_dict(name_or_path, default_name="custom")
    if not isinstance(name_or_path, str | Path):
        kind = type(name_or_path).__name__
        raise SchemaError(f"a schema is a shipped name, a path or a mapping, not {kind}")
    path = Path(name_or_path)
    if path.suffix != ".json" and "/" not in str(name_or_path):
        path = SCHEMA_DIR / f"{name_or_path}.json"
        if not path.is_file():
            raise SchemaError(
                f"unknown schema {str(name_or_path)!r}; shipped: {', '.join(list_schemas())}"
            )
        return shipped(path, measurement_path(path), load_schema)
    if path.name.endswith(MEASUREMENT_SUFFIX):
        raise SchemaError(f"{str(path)!r} is a schema's measurement, not a schema")
    data = _read_json(path, "schema file")
    beside = measurement_path(path)
    if isinstance(data, dict) and beside.is_file():
        if "_measurement" in data:
            raise SchemaError(f"{str(path)!r} holds a _measurement and has one beside it")
        data = {**data, "_measurement": _read_json(beside, "measurement file")}
    return schema_from_dict(data, default_name=path.stem)


def _read_json(path: Path, what: str) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise SchemaError(f"cannot read {what} {str(path)!r}: {exc}") from exc
    except json.JSONDecodeError as exc:
        raise SchemaError(f"{what} {str(path)!r} is not JSON: {exc}") from exc


def schema_from_dict(data: Any, *, default_name: str) -> Schema:
    """Validate and compile a schema mapping in any accepted layout."""
    if not isinstance(data, dict):
        raise SchemaError("a schema must be a JSON object")
    data, notes = expand_authored(data)
    name = data.get("name") if isinstance(data.get("name"), str) else default_name
    if isinstance(data.get("slots"), dict):
        raw_slots = data["slots"]
    elif isinstance(data.get("entities"), dict):
        raw_slots = {
            key: {"patterns": value, "contract": (data.get("values") or {}).get(key)}
            for key, value in data["entities"].items()
        }
    else:
        raw_slots = {key: value for key, value in data.items() if not key.startswith("_")}
        raw_slots.pop("name", None)
        raw_slots.pop("immutable", None)  # read below, whatever the layout
    slots = tuple(_slot(key, value) for key, value in sorted(raw_slots.items()))
    names = frozenset(slot.name for slot in slots)
    check_scopes({slot.name: slot.scope for slot in slots if slot.scope is not None}, names)
    check_yields({slot.name: slot.yields_to for slot in slots}, names)
    immutable = data.get("immutable", data.get("__immutable__", ()))
    if not isinstance(immutable, list | tuple) or not all(isinstance(k, str) for k in immutable):
        raise SchemaError("'immutable' must be a list of slot names")
    unknown = sorted(set(immutable) - {slot.name for slot in slots})
    if unknown:
        raise SchemaError(f"'immutable' names no slot of this schema: {', '.join(unknown)}")
    measurement = data.get("_measurement") if isinstance(data.get("_measurement"), dict) else {}
    return Schema(
        name=name,
        slots=slots,
        immutable=frozenset(immutable),
        comment=data.get("_comment", "") if isinstance(data.get("_comment"), str) else "",
        measurement=measurement,
        digest=digest(slots, immutable),
        notes=notes,
    )


def _slot(name: str, spec: Any) -> Slot:
    if not isinstance(name, str) or not re.fullmatch(r"[a-z][a-z0-9_]{0,63}", name):
        raise SchemaError(f"slot name {name!r} must be snake_case, at most 64 characters")
    if isinstance(spec, list):
        spec = {"patterns": spec}
    if not isinstance(spec, dict) or not isinstance(spec.get("patterns", []), list):
        raise SchemaError(f"slot {name!r}: expected a list of patterns")
    patterns, guards = slot_patterns(name, spec.get("patterns", []))
    contract = spec.get("contract")
    if contract is not None and not isinstance(contract, str):
        raise SchemaError(f"slot {name!r}: contract must be a string")
    if contract is not None:
        try:
            re.compile(contract, PATTERN_FLAGS)
        except re.error as exc:
            raise SchemaError(f"slot {name!r}: contract does not compile: {exc}") from exc
    actions = tuple(_action(name, a) for a in spec.get("actions", []))
    scope, yields_to = slot_links(name, spec)
    return Slot(name, patterns, contract, actions, scope, yields_to, guards=guards)


def _action(slot: str, spec: Any) -> ActionMap:
    starts = isinstance(spec, dict) and spec.get("effect") == Effect.STARTS
    if starts and "argument" not in spec:  # (what it starts has no value in the call)
        spec = {**spec, "argument": ""}
    if not isinstance(spec, dict) or not all(
        isinstance(spec.get(k), str) for k in ("tool", "argument")
    ):
        raise SchemaError(f"slot {slot!r}: an action needs 'tool' and 'argument' strings")
    return ActionMap(tool=spec["tool"], argument=spec["argument"], effect=action_effect(slot, spec))


def schema_summary(name: str) -> dict:
    """What a shipped schema tracks and how it was measured.

    Example:
        >>> summary = schema_summary("logistics")
        >>> summary["slots"]
        ['active_order', 'delivery_address', 'payment_method', 'profile_address']
    """
    schema = load_schema(name)
    measurement = schema.measurement
    return {
        "name": schema.name,
        "slots": list(schema.slot_names),
        "summary": schema.comment,
        "digest": schema.digest,
        "measured": bool(measurement) and measurement.get("precision") != "unmeasured",
        "measurement": measurement,
    }

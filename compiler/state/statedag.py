"""``StateDAG``: the register as an object you can feed turn by turn.

It carries a schema you may extend with ``register_entity_schema`` and can be
passed as ``schema=`` to ``compile_messages``.
"""

from __future__ import annotations

from compiler.errors import SchemaError
from compiler.facts import Observation
from compiler.state.classify import Kind
from compiler.state.extract import extract_turn
from compiler.state.patterns import compile_pattern
from compiler.state.register import Register, RegisterFold
from compiler.state.retire import Retired, Violation, retire, retirement_violations
from compiler.state.schema import Schema, Slot, load_schema


class StateDAG:
    """A state register with its own vocabulary.

    Example:
        >>> dag = StateDAG()
        >>> dag.register_entity_schema("order_id", [r"order (?:id |number )?([A-Z]{3}-\\d+)"])
        >>> dag.observe(0, "Please cancel order ORD-7.")
        [Observation(slot='order_id', value='ORD-7', turn=0, ...)]
        >>> dag.observe(2, "Sorry, I meant order ORD-9.")[0].value
        'ORD-9'
        >>> dag.active_state()
        {'order_id': 'ORD-9'}
        >>> dag.get_retirement_violations({2})
        [Violation(slot='order_id', value='ORD-9', turn=2, supports=(2,))]
    """

    def __init__(self, schema=None):
        self._schema = load_schema(schema) if schema is not None else Schema("custom", ())
        self._fold = RegisterFold(self._schema.immutable, self._schema.scopes)
        self._turns: list[int] = []

    @property
    def schema(self) -> Schema:
        return self._schema

    def register_entity_schema(self, slot: str, patterns: list[str]) -> None:
        """Add patterns for ``slot`` (creating it if new); every other part of the
        schema (the other slots, tool-call mappings, immutable slots) stays as it was.

        Example:
            >>> dag = StateDAG({"slots": {"a": [r"a is (\\w+)"]}, "immutable": ["a"]})
            >>> dag.register_entity_schema("b", [r"b is (\\w+)"])
            >>> dag.schema.slot_names, sorted(dag.schema.immutable)
            (('a', 'b'), ['a'])
        """
        if isinstance(patterns, str) or not isinstance(patterns, list | tuple) or not patterns:
            # a lone string would be read one character at a time
            raise SchemaError(f"slot {slot!r}: patterns must be a non-empty list of strings")
        for pattern in patterns:  # (refused here, naming the pattern, before anything changes)
            compile_pattern(slot, pattern)
        schema = self._schema
        slots = {s.name: _slot_data(s) for s in schema.slots}
        known = slots.setdefault(slot, {"patterns": []})
        known["patterns"] = [*known["patterns"], *patterns]
        data = {
            "name": schema.name,
            "slots": slots,
            "immutable": sorted(schema.immutable),
            "_comment": schema.comment,
            "_measurement": schema.measurement,
        }
        self._schema = load_schema(data)

    def observe(self, turn: int, text: str) -> list[Observation]:
        """Read one turn of speech and fold what it says into the register."""
        if self._turns and turn < self._turns[-1]:
            raise ValueError(f"turn {turn} comes before turn {self._turns[-1]}")
        observations = extract_turn(text, turn, self._schema)
        self._fold.apply_turn(observations)
        self._turns.append(turn)
        return observations

    def state(self) -> Register:
        return self._fold.result()

    def active_state(self) -> dict[str, str]:
        return {e.slot: e.value for e in self.state().active}

    def get_prunable_turns(self, turn_count: int) -> tuple[Retired, ...]:
        return retire(self.state(), (Kind.SPEECH,) * turn_count)

    def get_retirement_violations(self, proposed) -> list[Violation]:
        return retirement_violations(self.state(), proposed)


def _slot_data(slot: Slot) -> dict:
    """A slot as the schema mapping ``load_schema`` reads."""
    return {
        "patterns": slot.plain_patterns,
        "contract": slot.contract,
        "actions": [
            {"tool": a.tool, "argument": a.argument, "effect": a.effect.value} for a in slot.actions
        ],
        **({"scope": slot.scope} if slot.scope is not None else {}),
        **({"yields_to": list(slot.yields_to)} if slot.yields_to else {}),
    }

"""The facts the state wings pass between them: what was said or done about a slot.

An ``Observation`` is one value for one slot at one turn; its ``Op`` says whether it
asserts, pins, revokes or doubts the value, or ends it (a tool call that cancels it), and
its ``Provenance`` says how it was known (declared by the agent, acted on through a tool
call, or inferred from speech). They sit apart from the stages that make and consume them
(extract, declare, register, retire, emit) so that none of those has to import another to
name them.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Op(StrEnum):
    ASSERT = "assert"
    PIN = "pin"
    REVOKE = "revoke"
    UNSURE = "unsure"
    END = "end"  # the value is over (a cancel): never asserted; the slot clears if it held it
    START = "start"  # a new entity begins, not yet named (a booking): the slot's value is over


class Provenance(StrEnum):
    DECLARED = "declared"
    ACTED = "acted"
    INFERRED = "inferred"


# The order a turn's observations are applied in, so the stronger source writes last and wins
PROVENANCE_RANK = {Provenance.INFERRED: 0, Provenance.ACTED: 1, Provenance.DECLARED: 2}


@dataclass(frozen=True)
class Observation:
    """One value for one slot, seen at one turn."""

    slot: str
    value: str
    turn: int
    provenance: Provenance = Provenance.INFERRED
    start: int = 0
    end: int = 0
    op: Op = Op.ASSERT

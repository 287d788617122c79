"""A state-changing tool call's effect waits for the tool's answer.

An assistant turn's observations are held (``Held``) until the tool has answered the
calls that act. A call the tool refused ("Error: not enough seats on flight HAT290")
changed nothing: what it would have ended is not over, it began no new entity, and an
entity's own state (a slot with a scope: the reservation's cabin) is as it was. What it
names is still what the conversation is about (the reservation worked on, the trip's
airports, flights and dates), so those values stay. A call left unanswered (the history
ends with it, or the next message is not its answer) counts as done, as every call did
before answers were read.

Only whether a call took effect is read from its answer (``call_failed``), never a
value: state is still not inferred from machine output.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from compiler.facts import PROVENANCE_RANK, Observation, Op
from compiler.read import Message

# A tool's answer that says the call was refused: "Error: not enough seats on flight
# HAT290", "Exception: ...", or a JSON object carrying an ``error``.
_FAILED_ANSWER = re.compile(r"\s*(?:error|exception)\b", re.IGNORECASE)


def call_failed(answer: str) -> bool:
    """Whether a tool's answer says the call was refused, so it changed nothing.

    Example:
        >>> call_failed("Error: not enough seats on flight HAT290")
        True
        >>> call_failed('{"error": "payment method not found"}')
        True
        >>> call_failed('{"reservation_id": "ABC123", "cabin": "economy"}'), call_failed("")
        (False, False)
        >>> call_failed("No errors were found in the booking.")
        False
        >>> call_failed('{"\\\\u0065rror": "declined"}')  # the key spelled with an escape
        True
    """
    if _FAILED_ANSWER.match(answer):
        return True
    # a JSON "error" key is spelled so in the text, or with a \u escape: an answer with
    # neither (every answer on the dev corpora) is not decoded, where decoding each
    # record a change returned cost about 1% of folding the airline dev corpus
    if "error" not in answer and "\\u" not in answer:
        return False
    if not answer.lstrip().startswith("{"):
        return False
    try:
        decoded = json.loads(answer)
    except (ValueError, RecursionError):
        return False
    return isinstance(decoded, dict) and bool(decoded.get("error"))


@dataclass(frozen=True)
class Held:
    """One turn's observations: ``said`` (speech), ``calls`` (per tool call that acts,
    its id and what it did) and ``declared``; ``waiting``, the ids of the acting calls
    not answered yet, ``failed``, those the tool refused, and ``others``, the turn's
    other calls (a lookup made beside the change), whose answers may come first."""

    speaker: str
    said: tuple[Observation, ...]
    calls: tuple[tuple[str | None, tuple[Observation, ...]], ...]
    declared: tuple[Observation, ...]
    waiting: frozenset[str]
    failed: frozenset[str] = frozenset()
    others: frozenset[str] = frozenset()

    @classmethod
    def of(cls, message: Message, said, acted, declared) -> Held:
        """One turn's observations held: ``acted`` per tool call, as
        ``extract.extract_parts`` gives it; the calls that set or end something wait."""
        waiting = frozenset(call for call, found in acted if call and found)
        others = frozenset(call.id for call in message.tool_calls if call.id) - waiting
        calls = tuple((call, tuple(found)) for call, found in acted)
        return cls(message.role, tuple(said), calls, tuple(declared), waiting, others=others)

    def awaits(self, message: Message) -> bool:
        """Whether ``message`` is an answer to one of this turn's calls, so the turn is
        still being answered.

        Example:
            >>> held = Held("assistant", (), (), (), frozenset({"c1"}), others=frozenset({"c2"}))
            >>> [held.awaits(Message("tool", "{}", tool_call_id=c)) for c in ("c2", "c1", "c3")]
            [True, True, False]
        """
        call = message.tool_call_id
        return message.role == "tool" and (call in self.waiting or call in self.others)

    def answered(self, message: Message) -> Held:
        """This turn's calls after ``message``, a tool message answering one of them.

        Example:
            >>> held = Held("assistant", (), (), (), frozenset({"c1", "c2"}))
            >>> held = held.answered(Message("tool", "Error: no such order", tool_call_id="c1"))
            >>> sorted(held.waiting), sorted(held.failed)
            (['c2'], ['c1'])
        """
        call = message.tool_call_id
        if call not in self.waiting:
            return self
        failed = self.failed | {call} if call_failed(message.text) else self.failed
        waiting = self.waiting - {call}  # (as ``replace`` builds it, without its lookups)
        return Held(
            self.speaker, self.said, self.calls, self.declared, waiting, failed, self.others
        )

    def apply(self, fold) -> None:
        """The turn's observations into ``fold`` (a ``RegisterFold``) as its speaker's,
        but what a refused call would have changed: its ends and starts, and the values it
        would have set in a scoped slot. Speech, then the calls, then declarations, so the
        stronger source writes last."""
        scopes = fold.scopes
        acted = [
            o
            for call, found in self.calls
            for o in found
            if call not in self.failed or (o.op is Op.ASSERT and o.slot not in scopes)
        ]
        batch = [*self.said, *acted, *self.declared]
        if self.declared:
            batch.sort(key=_rank)
        if batch:
            fold.apply_turn(batch, self.speaker)


def take(fold, message: Message, said, acted, declared) -> Held | None:
    """One turn's observations (``said``, ``acted`` and ``declared`` as ``Held.of`` takes
    them) into ``fold`` (a ``RegisterFold``) at once where none of its calls sets or ends
    something, as ``Held.apply`` would fold them with no call refused; else the turn,
    held (returned) until the tool answers. Most turns make no such call: folding them
    without building a ``Held`` compiled airline dev 1.3% to 1.9% faster (``versions.py``,
    cpu time, N=100)."""
    if any(call and found for call, found in acted):
        return Held.of(message, said, acted, declared)
    if acted or declared:
        said = [*said, *(o for _, found in acted for o in found), *declared]
        if declared:
            said.sort(key=_rank)
    if said:
        fold.apply_turn(said, message.role)
    return None


def _rank(observation: Observation) -> int:
    return PROVENANCE_RANK[observation.provenance]


def settled(fold, held: Held | None):
    """The register of ``fold`` as the history stands: a turn whose calls are still
    unanswered (``held``) counts as done, in a copy, so the fold still takes their
    answers."""
    if held is None:
        return fold.result()
    fold = fold.copy()
    held.apply(fold)
    return fold.result()

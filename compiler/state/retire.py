"""Which turns can go.

A turn is retired when every fact it carries has been superseded (or
revoked) and it is not a support of any live fact. A user's turn asks for
something, so it needs more: each of its facts must have been answered in kind
(``answered``), by a later request or decision of the user's for the slot, or by
the agent acting on it or declaring it; an assistant merely saying another value
(another reservation's cabin, in passing) leaves the request standing. A slot kept per
entity (``scope``) is a chain per entity: a value said of one reservation supersedes and
answers nothing said of another, and a new entity started by a tool call (a booking)
supersedes nothing said of the one held before (``displaced_turns``). The last two turns are
never retired: they are the exchange the model is about to continue. Turns
that take part in a tool call (the call and its result) stay, so a
``tool_call_id`` never loses its partner: that includes an assistant turn that
says something and calls a tool in the same message.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from compiler.facts import Provenance
from compiler.state.classify import Kind
from compiler.state.dates import iso_date
from compiler.state.register import REVOKED_SLOT, Entry, Register, value_key

KEEP_LAST = 2


@dataclass(frozen=True)
class Retired:
    """A retired turn and, per slot it carried, the turn that replaced it (or, for a
    slot in ``revoked``, the turn whose declaration revoked it)."""

    turn: int
    superseded: tuple[tuple[str, int], ...]
    revoked: frozenset[str] = frozenset()

    @property
    def reason(self) -> str:
        """Example:
        >>> Retired(1, (("a", 3), ("b", 4)), frozenset({"b"})).reason
        'a superseded by turn 3; b revoked at turn 4'
        """
        parts = [
            f"{slot} {'revoked at' if slot in self.revoked else 'superseded by'} turn {by}"
            for slot, by in self.superseded
        ]
        return "; ".join(parts)


@dataclass(frozen=True)
class Violation:
    slot: str
    value: str
    turn: int
    supports: tuple[int, ...]


def retire(
    register: Register,
    kinds: tuple[Kind, ...],
    calling: frozenset[int] = frozenset(),
    task: int | None = None,
    keeps: Callable[[int], bool] | None = None,
    speakers: tuple[str, ...] | None = None,
) -> tuple[Retired, ...]:
    """Turns whose every fact is dead and which support nothing live; ``calling``
    holds the turns that carry tool calls, whatever else they say, and ``task`` is the
    user's first turn. Neither is ever retired: a tool result must keep its call, and
    the task statement says more than the facts a schema reads out of it ("book a
    flight from New York to Seattle on May 20th" is not only a date). Nor is a turn
    ``keeps`` names, asked only of a turn that would otherwise go: one that carries a
    safety signal ("my son has a severe peanut allergy") besides its superseded address.
    ``speakers`` holds each turn's role, where known: a user's turn then goes only when
    each of its facts was ``answered`` in kind.

    Example:
        >>> from compiler.facts import Observation
        >>> from compiler.state.register import register
        >>> reg = register((Observation("f", "a.py", 0), Observation("f", "b.py", 2)))
        >>> retire(reg, (Kind.SPEECH,) * 5)
        (Retired(turn=0, superseded=(('f', 2),), revoked=frozenset()),)
        >>> retire(reg, (Kind.SPEECH,) * 5, calling=frozenset({0}))
        ()
        >>> speech = (Kind.SPEECH,) * 5
        >>> retire(reg, speech, task=0), retire(reg, speech, keeps={0}.__contains__)
        ((), ())
    """
    carried: dict[int, list[Entry]] = {}
    for entry in register.history:
        for turn in entry.supports:
            carried.setdefault(turn, []).append(entry)
    chains = _chains(register)  # (read by three of the passes below: built once)
    disputed = disputed_turns(register, chains) | hedged_turns(register, chains)
    disputed |= displaced_turns(register)
    place = _places(chains) if speakers is not None else {}
    last_kept = len(kinds) - KEEP_LAST
    retired = []
    for turn in sorted(carried):
        if turn >= last_kept:  # (sorted: every turn after it is as late)
            break
        entries = carried[turn]
        if kinds[turn] in (Kind.TOOL_CALL, Kind.MACHINE):
            continue
        if turn in calling or turn == task or turn in disputed:
            continue
        if any(entry.live for entry in entries):
            continue
        asked = speakers is not None and speakers[turn] == "user"
        if asked and not all(answered(e, turn, _later(place, e), speakers) for e in entries):
            continue  # a request still standing
        if keeps is not None and keeps(turn):  # (it reads the turn's text: asked last)
            continue
        superseded = tuple(
            sorted(
                {
                    (e.slot, e.superseded_by if e.superseded_by is not None else e.revoked_at)
                    for e in entries
                }
            )
        )
        revoked = frozenset(e.slot for e in entries if e.superseded_by is None)
        retired.append(Retired(turn, superseded, revoked))
    return tuple(retired)


_AGENTS_OWN = frozenset({Provenance.ACTED, Provenance.DECLARED})
_ISO_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")


def answered(entry: Entry, turn: int, later: tuple[Entry, ...], speakers) -> bool:
    """Whether what the user's ``turn`` said of ``entry`` (a value no longer live) was
    answered in kind: the agent acted on the value or declared it (then, or after another
    value came between), or ended or revoked it, or restated it in fewer or more words
    ("Rerouted to 900 Pine Avenue, Suite 12" for the user's "900 Pine Avenue, Suite 12,
    Chicago, IL 60601": ``restates``), or the user asked for or decided on a later value of
    the slot, or the agent declared one (a declaration is the state it commits to, not a
    mention). The agent naming or acting on another value is no answer: it did something
    else, and the request may still be waiting. ``later``: the slot's entries after
    ``entry``, in order.

    Example:
        >>> from compiler.facts import Observation
        >>> from compiler.state.register import register
        >>> asked = Observation("cabin", "economy", 1)  # "downgrade us to economy"
        >>> reported = Observation("cabin", "business", 2)  # another booking's cabin
        >>> first, second = register((asked, reported)).history
        >>> answered(first, 1, (second,), ("user", "user", "assistant"))
        False
        >>> answered(first, 1, (second,), ("user", "user", "user"))  # the user changed it
        True
    """
    if entry.revoked_at is not None or entry.provenance in _AGENTS_OWN:
        return True
    asked = value_key(entry.value)
    for other in later:
        if other.provenance is Provenance.DECLARED or restates(asked, value_key(other.value)):
            return True
        if any(t > turn and speakers[t] == "user" for t in other.supports):
            return True
    return False


def restates(asked: str, said: str) -> bool:
    """Whether ``said`` is the value ``asked`` (both ``value_key``), or one of them the
    other cut short where a word ends: the same request confirmed in fewer or more words;
    or the same day, one of them written without its year ("May 27" asked, 2024-05-27
    booked: for retiring a request, the year the agent acted on is the one meant).

    Example:
        >>> restates("900 pine avenue, suite 12, chicago", "900 pine avenue, suite 12")
        True
        >>> restates("may 27", "2024-05-27"), restates("may 27", "2024-05-28")
        (True, False)
        >>> restates("economy", "basic economy"), restates("hat12", "hat123")
        (False, False)
    """
    if asked == said:
        return True
    for dated, bare in ((asked, said), (said, asked)):
        if _ISO_DAY.fullmatch(dated) and iso_date(bare, int(dated[:4])) == dated:
            return True
    short, long = sorted((asked, said), key=len)
    return long.startswith(short) and not long[len(short)].isalnum()


def chain_key(entry: Entry) -> tuple[str, str | None]:
    """What an entry's value replaces and is replaced by: its slot's values, for a slot
    kept per entity those of its entity.

    Example:
        >>> chain_key(Entry("cabin", "economy", 1, Provenance.INFERRED, (1,), entity="AB12CD"))
        ('cabin', 'ab12cd')
    """
    return entry.slot, None if entry.entity is None else value_key(entry.entity)


def _chains(register: Register) -> dict[tuple[str, str | None], list[Entry]]:
    chains: dict[tuple[str, str | None], list[Entry]] = {}
    for entry in register.history:
        chains.setdefault(chain_key(entry), []).append(entry)
    return chains


def _places(chains: dict) -> dict[int, tuple[list[Entry], int]]:
    """Per entry of the history (by ``id``), its chain and its place in it: the entries
    set after it are sliced (``_later``) only for the few a user's turn asks about."""
    return {
        id(entry): (chain, index) for chain in chains.values() for index, entry in enumerate(chain)
    }


def _later(places: dict, entry: Entry) -> list[Entry]:
    """The entries of ``entry``'s chain set after it, in order."""
    chain, index = places[id(entry)]
    return chain[index + 1 :]


def displaced_turns(register: Register) -> frozenset[int]:
    """Turns that said a value a new entity displaced: a booking of a new reservation
    ends the old one's tenure as the reservation in hand, but it replaces nothing said of
    the old one ("H9ZU1C cannot be cancelled" stays true and is said nowhere else). A value
    is superseded only by another value for the same entity; such a turn is not retired.

    Example:
        >>> from compiler.facts import Observation, Op, Provenance
        >>> from compiler.state.register import register
        >>> held = Observation("res", "AB12CD", 1)
        >>> booked = Observation("res", "", 3, Provenance.ACTED, op=Op.START)
        >>> displaced_turns(register((held, booked)))
        frozenset({1})
        >>> other = Observation("res", "ZZ99ZZ", 3)  # the user named another: a correction
        >>> displaced_turns(register((held, other)))
        frozenset()
    """
    return frozenset(t for i in register.displaced for t in register.history[i].supports)


def disputed_turns(register: Register, chains: dict | None = None) -> frozenset[int]:
    """Turns that said a value the register refused, while what it refused it for still
    stands: a conflict whose kept value is still live, or a value said after the slot was
    revoked while it stays revoked. Such a turn carries a fact nothing superseded, the only
    place the model can see that someone disagreed, so it is not retired. Only the latest
    turn to say each refused value is kept: a user who repeats "900 Pine Ave" twenty times
    disagrees once, and keeping every repetition would stop a long session retiring.

    Example:
        >>> from compiler.facts import Observation, Provenance
        >>> from compiler.state.register import register
        >>> said = Observation("addr", "9 Elm", 2, Provenance.INFERRED)
        >>> declared = Observation("addr", "3 Oak", 1, Provenance.DECLARED)
        >>> disputed_turns(register((declared, said)))
        frozenset({2})
        >>> again = Observation("addr", "9 ELM", 5, Provenance.INFERRED)
        >>> disputed_turns(register((declared, said, again)))  # the latest says it
        frozenset({5})
        >>> later = Observation("addr", "5 Ash", 4, Provenance.DECLARED)
        >>> disputed_turns(register((declared, said, later)))  # the dispute is moot
        frozenset()
    """
    latest: dict[tuple[str, str], int] = {}  # (slot, refused value) → the latest turn
    if register.conflicts:  # (``chains``: ``_chains(register)``, where the caller has it)
        # an entry is known by the turn that set it, its first support: a stronger source
        # restating it moves its ``turn`` (``register``), not where it began
        live = {
            key: entry.supports[0]
            for key, chain in (chains if chains is not None else _chains(register)).items()
            for entry in chain
            if entry.live
        }
        for c in register.conflicts:
            if live.get(chain_key(c.kept)) == c.kept.supports[0]:
                key = (c.slot, value_key(c.refused_value))
                latest[key] = max(c.refused_turn, latest.get(key, c.refused_turn))
    voided = set(register.revoked)
    for r in register.refusals:
        if r.kind == REVOKED_SLOT and r.slot in voided:
            key = (r.slot, value_key(r.value or ""))
            latest[key] = max(r.turn, latest.get(key, r.turn))
    return frozenset(latest.values())


def hedged_turns(register: Register, chains: dict | None = None) -> frozenset[int]:
    """Turns that said the last firm value of a slot now held only as ``unsure``: an agent
    that declares "maybe gate B12" has not taken back "gate A3", and with the turn that said
    A3 retired the model would see only the guess. The latest turn to say that value is
    kept while the unsure value stands; a declaration that settles it, or a revoke, lets
    the turn go. A revoke between the two ends the chain: the firm value was voided. A
    turn that only declared the firm value is not kept: its block was stripped, so it
    shows nothing of the value.

    Example:
        >>> from compiler.facts import Observation, Op, Provenance
        >>> from compiler.state.register import register
        >>> firm = Observation("gate", "A3", 1)
        >>> guess = Observation("gate", "B12", 3, Provenance.DECLARED, op=Op.UNSURE)
        >>> hedged_turns(register((firm, guess)))
        frozenset({1})
        >>> settled = Observation("gate", "B12", 5, Provenance.DECLARED)
        >>> hedged_turns(register((firm, guess, settled)))
        frozenset()
        >>> declared = Observation("gate", "A3", 1, Provenance.DECLARED)
        >>> hedged_turns(register((declared, guess)))
        frozenset()
    """
    kept = set()
    for entries in (chains if chains is not None else _chains(register)).values():
        if not (entries[-1].live and entries[-1].unsure):
            continue
        for entry in reversed(entries[:-1]):
            if entry.superseded_by is None:  # revoked: nothing firm stands behind the guess
                break
            if not entry.unsure:
                # a turn that only declared the value shows nothing of it: its block is gone
                shown = [t for t in entry.supports if not _declared_at(entry, t)]
                if shown:
                    kept.add(max(shown))
                break
    return frozenset(kept)


def _declared_at(entry: Entry, turn: int) -> bool:
    """Whether ``turn`` is where ``entry`` was declared: the turn that gave it its
    provenance (``register`` moves an entry's ``turn`` to its strongest source)."""
    return entry.provenance is Provenance.DECLARED and turn == entry.turn


def retirement_violations(register: Register, proposed) -> list[Violation]:
    """Live facts that retiring ``proposed`` turns would leave with no support.

    Example:
        >>> from compiler.facts import Observation
        >>> from compiler.state.register import register
        >>> reg = register((Observation("pay", "card", 0),))
        >>> retirement_violations(reg, {0})
        [Violation(slot='pay', value='card', turn=0, supports=(0,))]
    """
    proposed = set(proposed)
    return [
        Violation(entry.slot, entry.value, entry.turn, entry.supports)
        for entry in register.history
        if entry.live and set(entry.supports) <= proposed
    ]

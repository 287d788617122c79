"""The authored schema form: named fragments, and a reason and examples per pattern.

A shipped schema is written for a person to keep up. Beside ``slots`` it may hold
``fragments``, named pieces of regex a pattern uses by writing ``(?&name)``::

    {"fragments": {"cabin": "(economy|business)",
                   "not_days": "(?!\\\\s+days?\\\\b)"},
     "slots": {"cabin_class": {"patterns": [
        {"regex": "\\\\bupgrade\\\\s+to\\\\s+(?&cabin)(?&not_days)",
         "reason": "a customer asking to move up names the cabin after 'upgrade to'",
         "matches": {"Please upgrade me to business.": "business"},
         "rejects": ["It takes five business days."]}]}}}

Each pattern is a plain string (the old form) or an object with ``regex`` and
``reason``, and examples: ``matches`` maps a text to the value the pattern's first
match captures there, ``rejects`` lists texts it must not match at all. The
examples are checked by ``example_failures`` (the test suite runs it over every
shipped pattern), not at load time: a compile loads its schema, and should not pay
for the schema's tests.

Decisions worth knowing:

- ``(?&name)`` is PCRE's call of a named group, and Python's ``re`` refuses it, so a
  reference can never be mistaken for a pattern's own syntax (``{2,3}`` is a
  quantifier, ``{name}`` a literal). The scan skips escapes and character classes,
  so ``\\\\(?&`` and ``[(?&]`` stay as written.
- Expansion is textual: the compiled regex is the authored one with each reference
  replaced by its fragment, expanded in turn. So that a fragment means the same
  wherever it is put, it must compile on its own and have no ``|`` outside a group.
- A fragment may use other fragments; a cycle is refused, naming the chain. A
  fragment no pattern uses is refused too: it would be read and kept up for nothing.
"""

from __future__ import annotations

import hashlib
import json
import re
from enum import StrEnum
from functools import lru_cache
from typing import Any

from compiler.errors import SchemaError
from compiler.state.patterns import PLAIN_PATTERN_KEYS, PatternNote


class Effect(StrEnum):
    """What a tool call does to the slot its argument names.

    ``sets``: the value is asserted, as the agent's act (book, update). ``ends``: the
    value is over (cancel, delete): it is never asserted, and if it is the slot's current
    value the slot is cleared. ``reads``: the call only looks (get, search, list); it is no
    action on the slot, and nothing is read from it. ``starts``: the call makes a new
    entity of the slot's kind whose value it does not carry (a booking, whose id only its
    result gives): the slot's value is replaced by none until the new one is named, so
    what a slot scoped by it (``scope``) is set to meanwhile is the new entity's. A
    ``starts`` mapping needs no ``argument``.
    """

    SETS = "sets"
    ENDS = "ends"
    READS = "reads"
    STARTS = "starts"


def action_effect(slot: str, spec: dict) -> Effect:
    """The effect an action mapping declares: its ``effect``, or, in the older form, its
    ``commits`` (true: sets, false: reads); sets when it says neither.

    Example:
        >>> action_effect("a", {"tool": "cancel", "argument": "id", "effect": "ends"})
        <Effect.ENDS: 'ends'>
        >>> action_effect("a", {"tool": "get", "argument": "id", "commits": False})
        <Effect.READS: 'reads'>
        >>> action_effect("a", {"tool": "drop", "argument": "id", "effect": "deletes"})
        ... # doctest: +ELLIPSIS
        Traceback (most recent call last):
        compiler.errors.SchemaError: slot 'a', tool 'drop': unknown effect 'deletes'; ...
    """
    where = f"slot {slot!r}, tool {spec.get('tool')!r}"
    if "effect" in spec:
        if "commits" in spec:
            raise SchemaError(f"{where}: give 'effect' or the older 'commits', not both")
        effect = spec["effect"]
        if effect not in _EFFECTS:
            known = ", ".join(e.value for e in Effect)
            raise SchemaError(f"{where}: unknown effect {effect!r}; an effect is one of {known}")
        return Effect(effect)
    commits = spec.get("commits", True)
    if not isinstance(commits, bool):  # "false" would read as true
        raise SchemaError(f"slot {slot!r}: an action's 'commits' must be true or false")
    return Effect.SETS if commits else Effect.READS


_EFFECTS = frozenset(e.value for e in Effect)


def check_scopes(scopes: dict[str, Any], slots: frozenset[str]) -> None:
    """Refuse a ``scope`` that names no slot of the schema, or scopes that run in a cycle.

    A slot with ``"scope": "active_reservation"`` holds a value per value of that slot
    (its entity): a cabin per reservation. The entity slot may itself be scoped (a seat
    per flight, a flight per reservation), but a chain must end at an unscoped slot.

    Example:
        >>> check_scopes({"cabin": "booking"}, frozenset({"cabin", "booking"}))
        >>> check_scopes({"cabin": "bookin"}, frozenset({"cabin", "booking"}))
        Traceback (most recent call last):
        compiler.errors.SchemaError: slot 'cabin': scope 'bookin' names no slot of this schema
        >>> check_scopes({"a": "b", "b": "a"}, frozenset({"a", "b"}))
        Traceback (most recent call last):
        compiler.errors.SchemaError: slot 'a': scope cycle a → b → a
    """
    for slot, scope in sorted(scopes.items()):
        if not isinstance(scope, str):
            raise SchemaError(f"slot {slot!r}: 'scope' must be the name of another slot")
        if scope not in slots:
            raise SchemaError(f"slot {slot!r}: scope {scope!r} names no slot of this schema")
    for slot in sorted(scopes):
        chain = [slot]
        while chain[-1] in scopes:
            after = scopes[chain[-1]]
            if after in chain:
                cycle = " → ".join((*chain[chain.index(after) :], after))
                raise SchemaError(f"slot {slot!r}: scope cycle {cycle}")
            chain.append(after)


def slot_links(name: str, spec: dict) -> tuple[str | None, tuple[str, ...]]:
    """A slot's ``scope`` (the slot whose values are its entities) and ``yields_to`` (the
    slots that take a value both read at the same place in a turn: a street address after
    "your default address is" is the profile's, not an order's delivery address).

    Example:
        >>> slot_links("a", {"scope": "b", "yields_to": ["c"]})
        ('b', ('c',))
        >>> slot_links("a", {"yields_to": "c"})
        Traceback (most recent call last):
        compiler.errors.SchemaError: slot 'a': 'yields_to' must be a list of other slots' names
    """
    scope, yields = spec.get("scope"), spec.get("yields_to", [])
    if scope is not None and not isinstance(scope, str):
        raise SchemaError(f"slot {name!r}: 'scope' must be the name of another slot")
    if not isinstance(yields, list) or not all(isinstance(y, str) and y != name for y in yields):
        raise SchemaError(f"slot {name!r}: 'yields_to' must be a list of other slots' names")
    return scope, tuple(yields)


def check_yields(yields: dict[str, tuple[str, ...]], slots: frozenset[str]) -> None:
    """Refuse a ``yields_to`` that names no slot of the schema.

    Example:
        >>> check_yields({"address": ("profile",)}, frozenset({"address"}))
        Traceback (most recent call last):
        compiler.errors.SchemaError: slot 'address': yields_to 'profile' names no slot of ...
    """
    for slot, names in sorted(yields.items()):
        for other in names:
            if other not in slots:
                raise SchemaError(
                    f"slot {slot!r}: yields_to {other!r} names no slot of this schema"
                )


FRAGMENT_NAME = re.compile(r"[a-z][a-z0-9_]{0,63}")
PATTERN_KEYS = frozenset({"regex", "reason", "matches", "rejects", "not_after"})


# What the scan reads as one token: a run of plain characters and escapes, a character
# class (a ``]`` first in it, or after ``^``, is a member), a reference, a bare ``(?&``,
# a parenthesis or a bar.
_TOKEN = re.compile(
    r"(?:[^\\\[()|]|\\.)+|\[\^?\]?(?:\\.|[^\]\\])*\]?|\(\?&(?:[^()]*\))?|[()|]",
    re.DOTALL,
)


# A compile given a schema by name loads it each time, and the same strings are scanned
# again: remembered, expanding travel takes 0.09 ms instead of 0.45 (of a 7 ms load;
# timeit, best of 7 × 200).
@lru_cache(maxsize=1024)
def scan(regex: str) -> tuple[tuple[tuple[int, int, str], ...], tuple[int, ...]]:
    """The fragment references in ``regex`` (start, end, name) and the positions of
    its top-level ``|``, skipping escapes and character classes.

    Example:
        >>> scan(r"a(?&x)|[(?&y)]\\(?&z")
        (((1, 6, 'x'),), (6,))
    """
    references: list[tuple[int, int, str]] = []
    bars: list[int] = []
    depth = 0
    for token in _TOKEN.finditer(regex):
        text = token.group()
        if text[0] not in "(|)":
            continue
        if text.startswith("(?&"):
            name = text[3:-1]
            if not text.endswith(")") or not FRAGMENT_NAME.fullmatch(name):
                raise SchemaError(f"bad fragment reference at {token.start()} of {regex!r}")
            references.append((token.start(), token.end(), name))
        elif text == "(":
            depth += 1
        elif text == ")":
            depth -= 1
        elif text == "|" and depth == 0:
            bars.append(token.start())
    return tuple(references), tuple(bars)


class Fragments:
    """The named fragments of one schema, expanded on demand and remembered."""

    def __init__(self, raw: Any):
        if raw is None:
            raw = {}
        if not isinstance(raw, dict):
            raise SchemaError("'fragments' must map names to regex strings")
        for name, text in raw.items():
            if not FRAGMENT_NAME.fullmatch(name) or not isinstance(text, str):
                raise SchemaError(f"fragment {name!r}: a snake_case name and a regex string")
        self.raw = raw
        self.expanded: dict[str, str] = {}
        self.used: set[str] = set()

    def expand(self, regex: str, chain: tuple[str, ...] = ()) -> str:
        """``regex`` with every reference replaced by its fragment, expanded.

        Example:
            >>> Fragments({"a": "x(?&b)", "b": "y"}).expand("(?&a)|(?&b)")
            'xy|y'
        """
        if "(?&" not in regex:  # (most patterns of the old form: spare them the scan)
            return regex
        references, _ = scan(regex)
        parts, last = [], 0
        for start, end, name in references:
            parts += [regex[last:start], self.fragment(name, chain)]
            last = end
        return "".join(parts) + regex[last:]

    def fragment(self, name: str, chain: tuple[str, ...] = ()) -> str:
        if name in chain:
            cycle = " → ".join((*chain[chain.index(name) :], name))
            raise SchemaError(f"fragment cycle: {cycle}")
        if name not in self.raw:
            raise SchemaError(f"unknown fragment {name!r}")
        self.used.add(name)
        if name not in self.expanded:
            text = self.expand(self.raw[name], (*chain, name))
            _check_fragment(name, text)
            self.expanded[name] = text
        return self.expanded[name]

    def check_all_used(self) -> None:
        unused = sorted(set(self.raw) - self.used)
        if unused:
            raise SchemaError(f"fragments no pattern uses: {', '.join(unused)}")


def _check_fragment(name: str, text: str) -> None:
    try:
        re.compile(text)
    except re.error as exc:
        raise SchemaError(f"fragment {name!r} does not compile on its own: {exc}") from exc
    if scan(text)[1]:
        raise SchemaError(f"fragment {name!r} has a '|' outside a group; wrap it in (?:...)")


def expand_authored(data: dict) -> tuple[dict, tuple[PatternNote, ...]]:
    """A schema mapping in the authored form → the same mapping with every pattern a
    plain, expanded string, and the notes written beside the patterns.

    Example:
        >>> data = {"fragments": {"id": "(T-\\\\d+)"}, "slots": {"ticket": {"patterns": [
        ...     {"regex": "ticket (?&id)", "reason": "r", "matches": {"ticket T-1": "T-1"}}]}}}
        >>> plain, notes = expand_authored(data)
        >>> plain["slots"]["ticket"]["patterns"], notes[0].matches
        (['ticket (T-\\\\d+)'], (('ticket T-1', 'T-1'),))
    """
    fragments = Fragments(data.get("fragments"))
    slots = data.get("slots")
    if not isinstance(slots, dict):
        if fragments.raw:
            raise SchemaError("'fragments' are used from 'slots'; this schema has none")
        return data, ()
    plain_slots, notes = {}, []
    for slot, spec in slots.items():
        if not isinstance(spec, dict) or not isinstance(spec.get("patterns"), list):
            plain_slots[slot] = spec  # refused, with its reason, by the loader
            continue
        expanded = []
        for index, pattern in enumerate(spec["patterns"]):
            note = _note(slot, index, pattern, fragments)
            expanded.append(note.plain)
            notes.append(note)
        plain_slots[slot] = {**spec, "patterns": expanded}
    fragments.check_all_used()
    plain = {key: value for key, value in data.items() if key != "fragments"}
    return {**plain, "slots": plain_slots}, tuple(notes)


def _note(slot: str, index: int, pattern: Any, fragments: Fragments) -> PatternNote:
    where = f"slot {slot!r} pattern {index}"
    if isinstance(pattern, dict) and set(pattern) == PLAIN_PATTERN_KEYS:
        # the expanded form of a guarded pattern (``PatternNote.plain``): no reason or
        # examples to carry; its strings are checked where the slot is read (``slot_patterns``)
        regex, reason, matches, rejects = pattern["regex"], "", {}, []
        not_after = pattern["not_after"]
        if not isinstance(regex, str) or not isinstance(not_after, str):
            return PatternNote(slot, index, pattern)  # refused, with its reason, by the loader
    elif isinstance(pattern, dict):
        unknown = sorted(set(pattern) - PATTERN_KEYS)
        if unknown:
            raise SchemaError(f"{where}: unknown keys {', '.join(unknown)}")
        regex, reason = pattern.get("regex"), pattern.get("reason")
        matches, rejects = pattern.get("matches", {}), pattern.get("rejects", [])
        if not isinstance(regex, str) or not isinstance(reason, str) or not reason:
            raise SchemaError(f"{where}: needs a 'regex' string and a 'reason'")
        if not isinstance(matches, dict) or not all(isinstance(v, str) for v in matches.values()):
            raise SchemaError(f"{where}: 'matches' maps each text to the value it captures")
        if not isinstance(rejects, list) or not all(isinstance(t, str) for t in rejects):
            raise SchemaError(f"{where}: 'rejects' is a list of texts")
        not_after = pattern.get("not_after", "")
        if not isinstance(not_after, str):
            raise SchemaError(f"{where}: 'not_after' is a regex string")
    elif isinstance(pattern, str):
        regex, reason, matches, rejects, not_after = pattern, "", {}, [], ""
    else:
        return PatternNote(slot, index, pattern)  # refused, with its reason, by the loader
    try:
        expanded = fragments.expand(regex)
        guard = fragments.expand(not_after) if not_after else ""
    except SchemaError as exc:
        raise SchemaError(f"{where}: {exc}") from None
    return PatternNote(slot, index, expanded, reason, tuple(matches.items()), tuple(rejects), guard)


def digest(slots: tuple, immutable: Any) -> str:
    """What identifies a schema's slots (``Slot``): patterns, contracts, actions, scopes."""
    body = {
        slot.name: {
            "patterns": [p.pattern for p in slot.patterns],
            # (only where a pattern has one, so a schema without them keeps its digest)
            **({"not_after": [g and g.pattern for g in slot.guards]} if any(slot.guards) else {}),
            "contract": slot.contract,
            "actions": [[a.tool, a.argument, _digested(a.effect)] for a in slot.actions],
            # (only where given, so a schema without scopes keeps its digest)
            **({"scope": slot.scope} if slot.scope is not None else {}),
            **({"yields_to": list(slot.yields_to)} if slot.yields_to else {}),
        }
        for slot in slots
    }
    blob = json.dumps([body, sorted(immutable)], sort_keys=True).encode()
    return hashlib.sha256(blob).hexdigest()[:16]


def _digested(effect: Effect) -> bool | str:
    """An effect as the digest writes it: the older ``commits`` flag where it says the
    same, so a schema written without effects keeps its digest."""
    return {Effect.SETS: True, Effect.READS: False}.get(effect, effect.value)

"""The read path: schema patterns over speech, and only over speech.

Per turn and slot, the earliest match that is not negated wins, unless the speaker
corrects it later in the turn ("sorry, my mistake: ship it to ..."). Nothing is
read from machine output (tool results, listings, traces), from an agent's
options menu, or from system messages: those say what exists or what the
rules are, not what the conversation settled on.
"""

from __future__ import annotations

import json
import re
import unicodedata

from compiler.facts import Observation, Op, Provenance
from compiler.frozen import build
from compiler.read import Message, decode_json
from compiler.state.classify import Kind
from compiler.state.patterns import said_before
from compiler.state.prefilter import (
    admits,
    checking_order,
    fold,
    required_literals,
)
from compiler.state.schema import Effect, Schema, Slot, path_steps
from compiler.state.starts import (
    starts_of,
)

SPEAKING_ROLES = frozenset({"user", "assistant"})
# Members named once per message or match, under module names: looking a member up on its
# enum costs several times reading a global.
_SPEECH, _INFERRED, _ACTED, _ASSERT = Kind.SPEECH, Provenance.INFERRED, Provenance.ACTED, Op.ASSERT
_OP_OF = {Effect.SETS: Op.ASSERT, Effect.ENDS: Op.END}
_STARTS = Effect.STARTS


def _observed(slot, value, turn, provenance, start=0, end=0, op=_ASSERT) -> Observation:
    """``Observation(slot, value, turn, provenance, start, end)``, built as ``frozen.build``
    builds: one per match."""
    return build(
        Observation,
        slot=slot,
        value=value,
        turn=turn,
        provenance=provenance,
        start=start,
        end=end,
        op=op,
    )


# A negator voids a match when it stands in the same clause, before it. Its apostrophe
# may be the typographic one (U+2019), as phones and most model output write it.
_NEGATOR = re.compile(
    r"\b(?:not|never|no longer|instead of|rather than|cannot|without|"
    r"(?:can|won|don|doesn|didn|isn|wasn|aren|shouldn|wouldn)['\u2019]t)\b",
    re.IGNORECASE,
)
_NEGATOR_NEEDS = checking_order(required_literals(_NEGATOR))
_CLAUSE_BREAK = re.compile(r"[.;!?\n]|,\s|\s(?:but|and then|so|then)\s", re.IGNORECASE)
_NEGATION_WINDOW = 60
_TRAILING = ".,;:!?)]}\"'`*"
_LEADING = "\"'`(*"


def extract(
    messages: tuple[Message, ...],
    kinds: tuple[Kind, ...],
    schema: Schema | None,
    skip: dict[int, frozenset[str]] | None = None,
):
    """Observations the schema's patterns find in speech, in turn order.

    ``skip`` names, per turn, slots the agent declared in that turn: the
    declaration speaks for them, so the text beside it is not read for them.

    Example:
        >>> from compiler.state.schema import load_schema
        >>> from compiler.state.classify import classify
        >>> msgs = (Message("assistant", "Now editing `src/app.py`."),)
        >>> [(o.slot, o.value) for o in extract(msgs, classify(msgs), load_schema("coding"))]
        [('current_file', 'src/app.py')]
    """
    if schema is None or not schema.slots:
        return ()
    found: list[Observation] = []
    for turn, (message, kind) in enumerate(zip(messages, kinds, strict=True)):
        declared = skip.get(turn, ()) if skip else ()
        found.extend(extract_message(message, kind, turn, schema, declared))
    return tuple(found)


def extract_message(
    message: Message, kind: Kind, turn: int, schema: Schema, declared=(), memo=None
):
    """What one message says (read path) and did (action path). ``memo`` holds the JSON
    texts decoded before (``jsonio.decode_json``): the read keys decode the same
    tool-call arguments (``compiler.compact.read_keys``)."""
    said, acted = extract_parts(message, kind, turn, schema, declared, memo)
    for _, found in acted:
        said.extend(found)
    return said


def extract_parts(
    message: Message, kind: Kind, turn: int, schema: Schema, declared=(), memo=None
) -> tuple[list[Observation], tuple[tuple[str | None, list[Observation]], ...]]:
    """``extract_message`` kept apart: what the message says, and per tool call that sets
    or ends state, its id and what it did, so that a call the tool refused can be dropped
    when its answer comes (``answers.Held``)."""
    said: list[Observation] = []
    if kind is _SPEECH and message.role in SPEAKING_ROLES:
        said = extract_turn(message.content or "", turn, schema)
        if declared:
            said = [o for o in said if o.slot not in declared]
    # only calls that set or end state are read: a lookup's arguments need not even be decoded
    acting = schema.committing_by_tool
    if not (acting and message.role == "assistant" and message.tool_calls):
        return said, ()
    acted = tuple(
        (call.id, extract_actions((call,), turn, acting, memo))
        for call in message.tool_calls
        if call.name in acting
    )
    return said, acted


def extract_actions(calls, turn: int, acting: dict, memo=None) -> list[Observation]:
    """The action path: arguments of the tool calls the agent made, mapped to slots.

    Only calls whose mapping sets or ends state count; a lookup says what the agent
    looked at, not what it settled on. A call that ends a value (a cancel) is an ``END``
    of it: the agent acted on the value, but to close it, not to hold it.

    Example:
        >>> from compiler.read.messages import ToolCall
        >>> from compiler.state.schema import ActionMap
        >>> acting = {"book": (("cabin_class", ActionMap("book", "cabin")),),
        ...           "cancel": (("booking", ActionMap("cancel", "id", Effect.ENDS)),)}
        >>> calls = (ToolCall("book", '{"cabin": "business"}'), ToolCall("cancel", '{"id": "K1"}'))
        >>> [(o.slot, o.value, o.provenance.value, o.op.value)
        ...  for o in extract_actions(calls, 3, acting)]
        [('cabin_class', 'business', 'acted', 'assert'), ('booking', 'K1', 'acted', 'end')]
    """
    found = []
    for call in calls:
        mappings = acting.get(call.name)
        if not mappings:
            continue
        arguments = _arguments(call.arguments, memo)
        for slot, mapping in mappings:
            if not mapping.commits:
                continue
            if mapping.effect is _STARTS:
                found.append(_observed(slot, "", turn, _ACTED, op=Op.START))
                continue
            value = _argument_at(arguments, mapping.steps)
            value = clean_value(value) if value is not None else ""
            if value:
                found.append(_observed(slot, value, turn, _ACTED, op=_OP_OF[mapping.effect]))
    return found


def _arguments(raw: str, memo=None):
    try:
        return decode_json(raw, memo) if raw else None
    except (ValueError, RecursionError):
        return None


def argument_at(arguments, path: str) -> str | None:
    """The scalar at a dotted path (``flights.0.flight_number``), as text.

    Example:
        >>> argument_at({"flights": [{"n": "HAT1"}, {"n": "HAT2"}]}, "flights.-1.n")
        'HAT2'
    """
    return _argument_at(arguments, path_steps(path))


def _argument_at(arguments, steps: tuple[tuple[str, int | None], ...]) -> str | None:
    node = arguments
    for step, index in steps:
        if isinstance(node, dict):
            node = node.get(step)
        elif isinstance(node, list) and index is not None:
            node = node[index] if -len(node) <= index < len(node) else None
        else:
            return None
    if isinstance(node, str):
        return node
    if isinstance(node, bool | int | float):
        return json.dumps(node)
    return None


def extract_turn(text: str, turn: int, schema: Schema) -> list[Observation]:
    """Every slot's first non-negated match in one turn's text, or the value a correction
    later in the turn replaced it with (``_corrected``). Text is read in NFC, so
    a decomposed "café" (e + combining accent) matches as the composed one does and the
    value is written composed."""
    if not text:
        return []
    if not text.isascii() and not unicodedata.is_normalized("NFC", text):
        text = unicodedata.normalize("NFC", text)
    folded = fold(text)
    observations = []
    corrects = None  # whether the turn holds a correction cue at all (``_corrected``)
    for slot in schema.read_slots:
        # ``admits(slot.checks, folded)`` written out: most turns are turned away here, for
        # most slots, and a call per slot and turn cost more than its checks
        for clause in slot.checks:
            for literal in clause:
                if literal in folded:
                    break
            else:
                break  # the turn lacks what every pattern of the slot needs
        else:
            hit = _first_match(text, folded, slot)
            if hit is not None:
                if corrects is None:  # asked once per turn: most turns correct nothing
                    corrects = _has_correction(folded)
                if corrects:
                    hit = _corrected(text, folded, slot, hit)
            if hit is not None:
                value, start, end = hit
                observations.append(_observed(slot.name, value, turn, _INFERRED, start, end))
    if schema.yielding and len(observations) > 1:
        return yielded(observations, schema.yielding)
    return observations


def yielded(observations: list[Observation], yielding: dict) -> list[Observation]:
    """``observations`` but those of a slot that yields (``yields_to``) to a slot whose
    observation in the turn was read at the same place (their matches overlap).

    Example:
        >>> found = [Observation("profile", "5 Elm Road", 1, start=0, end=40),
        ...          Observation("order", "5 Elm Road", 1, start=28, end=40)]
        >>> [o.slot for o in yielded(found, {"order": ("profile",)})]
        ['profile']
    """
    return [
        o
        for o in observations
        if o.slot not in yielding
        or not any(
            other.slot in yielding[o.slot] and other.start < o.end and o.start < other.end
            for other in observations
        )
    ]


def _first_match(text: str, folded: str, slot: Slot) -> tuple[str, int, int] | None:
    best: tuple[str, int, int] | None = None
    for pattern, need, lead, after, guard in slot.readers:
        if need and not admits(need, folded):
            continue
        if lead is None:  # no literal every match starts with: the pattern scans the text
            for match in pattern.finditer(text):
                if best is not None and match.start() >= best[1]:
                    break
                value = _reading(match, text, guard)
                if value:
                    best = (value, match.start(), match.end())
                    break
            continue
        # ``anchored_finditer`` written out, with no generator per pattern and turn: tried
        # only where a leading literal begins, and before the best match so far
        resume = 0
        before = None if best is None else best[1]
        for start in starts_of(folded, lead, text, before, after):
            if start < resume:
                continue  # inside a match already read
            match = pattern.match(text, start)
            if match is None:
                continue
            value = _reading(match, text, guard)
            if value:
                best = (value, start, match.end())
                break
            end = match.end()
            resume = end if end > start else start + 1
    return best


# A speaker correcting themselves within one turn: "ship it to 12 Oak Street. Sorry, my
# mistake: ship it to 45 Elm Road". Only an explicit self-correction counts, and only when
# the new value follows it at once, in the same sentence: "actually", "I mean" or "instead"
# are as often a story about another address or a past order ("Actually, my old address
# was 45 Elm Road", "My wife paid with PayPal instead"), and a wrong value in the header the
# model is told to trust costs more than a correction read one turn late.
_CORRECTION = re.compile(
    r"\b(?:my\s+mistake|correction|scratch\s+that|i\s+meant|sorry,?\s+i\s+mean"
    r"|make\s+that|change\s+(?:that|it)\s+to)\b[\s:,;-]*"
)
_CORRECTION_NEEDS = checking_order(required_literals(_CORRECTION))
CORRECTION_REACH = 30  # the new value must begin within this many characters of the cue
_SENTENCE_END = re.compile(r"[.!?](?:\s|$)|\n")


def _corrected(text: str, folded: str, slot: Slot, hit: tuple[str, int, int]):
    """The value a turn settles on for ``slot``, given its first match ``hit``: a match
    beginning right after an explicit correction cue, in the same sentence, replaces it,
    as often as the speaker corrects themselves.

    Example:
        >>> from compiler import load_schema
        >>> slot = load_schema("logistics").slot("delivery_address")
        >>> def settled(text):
        ...     hit = _first_match(text, text.lower(), slot)
        ...     return _corrected(text, text.lower(), slot, hit)[0]
        >>> settled("Ship it to 12 Oak Street. Sorry, my mistake: ship it to 45 Elm Road.")
        '45 Elm Road'
        >>> settled("Ship it to 12 Oak Street. Actually, my old address was 45 Elm Road.")
        '12 Oak Street'
    """
    if len(folded) != len(text):  # (a folded character changed length: positions differ)
        return hit
    at = hit[2]
    while (cue := _CORRECTION.search(folded, at)) is not None:
        at = cue.end()
        # the value must start near the cue, so only a short stretch after it is read
        # (this keeps a long turn with many cues linear)
        stretch = slice(at, at + CORRECTION_REACH + _VALUE_REACH)
        end = _SENTENCE_END.search(text[stretch], 0, CORRECTION_REACH)
        reach = CORRECTION_REACH if end is None else end.start()
        later = _first_match(text[stretch], folded[stretch], slot)
        if later is not None and later[1] <= reach and later[0] != hit[0]:
            hit = (later[0], later[1] + at, later[2] + at)
            at = hit[2]
    return hit


_VALUE_REACH = 300  # longer than a value a slot pattern reads, for the stretch read after a cue


def _has_correction(folded: str) -> bool:
    """Whether a turn holds a correction cue anywhere: asked once per turn, where
    ``_corrected`` would look for one after each slot's match (a turn without one
    anywhere has none after any match).

    Example:
        >>> _has_correction("ship it to 12 oak st. sorry, my mistake: 45 elm rd")
        True
        >>> _has_correction("make it 3, please")
        False
    """
    return admits(_CORRECTION_NEEDS, folded) and _CORRECTION.search(folded) is not None


def _reading(match: re.Match, text: str, guard: re.Pattern | None = None) -> str:
    """The value a match reads: its last group, cleaned; "" when that is empty, or a
    negator or the pattern's guard (``not_after``, earlier in the sentence) voids it."""
    value = clean_value(match.group(match.lastindex or 1) or "")
    if not value or is_negated(text, match.start()):
        return ""
    if guard is not None and said_before(guard, text, match.start()):
        return ""
    return value


def clean_value(raw: str) -> str:
    """Trim what surrounds a value without eating a leading ``./``.

    Example:
        >>> clean_value(" `./tests/test_a.py`. ")
        './tests/test_a.py'
    """
    value = " ".join(raw.split())
    return value.lstrip(_LEADING).rstrip(_TRAILING).strip()


def is_negated(text: str, start: int) -> bool:
    """A negator earlier in the same clause, within 60 characters.

    Example:
        >>> is_negated("do not open foo.py", 12)
        True
        >>> is_negated("not that one. open foo.py", 19)
        False
    """
    window = text[max(0, start - _NEGATION_WINDOW) : start]
    if not admits(_NEGATOR_NEEDS, fold(window)):
        return False  # no negator in the window, so none in its last clause
    breaks = list(_CLAUSE_BREAK.finditer(window))
    if breaks:
        window = window[breaks[-1].end() :]
    return bool(_NEGATOR.search(window))

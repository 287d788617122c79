"""Lay out the compiled context.

``compact``: the state header goes at the head (into the first system
message, or a new one), retired turns are left out, compacted payloads
replace their originals. It sends the fewest tokens, and rewrites the early
part of the prompt whenever a fact changes.

``cache_friendly``: the input is emitted in order and the register goes into
append-only *state notes*, so that the compile of ``history[:n+1]`` starts
with the exact messages of the compile of ``history[:n]`` wherever the loop
calls the model. Why: a provider bills the part of a prompt that repeats the
previous prompt from its first token at a cached rate r (0.1 to 0.5 of the
input price at OpenAI, 0.1 at Anthropic, whose writes cost 1.25). A note that
moves with the tail is re-sent at the full rate on every call, and under
Anthropic breakpoints a breakpoint on a moving tail is never read again: every
call is then written at 1.25. A note that stays where it was written costs its
tokens once at the full rate and then r per later call, like any message.

* A *call point* is where the loop called the model: right before each
  assistant message of the history (its prompt ended there), and the end of
  the history (the call being compiled). The notes are a function of the
  history up to their call point only, so the stateless API and the proxy
  find the same ones without storing anything.
* A note is placed at a call point only when the register's lines changed
  since the previous note (a value or its marks, pinned and unsure: a fact
  stated again at a later turn, or by another source, as when the agent acts on
  what the user said, is what the model reads above already, and its turn and
  source alone are no change; the telemetry's state keeps both).
  The first note holds the whole register (and the invariants and taught
  protocol, which never change within a loop); later
  ones hold only the lines that are new or changed (``[STATE_CHANGES]``),
  since every earlier note stays in front of the model. A note is the whole
  register again only when a slot left it (a delta cannot say that without a
  line of a new shape). Re-sending the whole register every K notes would
  cost its tokens at the full rate once and at r on every later call, for
  nothing the model does not already read above: K is never.
* ``cache_marks`` marks the last message, the end of the stable prefix (in
  this layout every compile at a call point is a prefix of the next one), with
  ``cache_control`` for targets with explicit breakpoints.

Every block we write has a marker line followed by ``  - `` lines whose
values are JSON-quoted (no raw newline can end a line early), so
``strip_compiled_one`` can remove exactly what an earlier compile added and
compiling compiled output never stacks headers.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from json.encoder import encode_basestring

from compiler.facts import Op, Provenance
from compiler.frozen import build
from compiler.layout.notes import INVARIANTS_MARKER, Notes, render_block
from compiler.protocol import INSTRUCTION
from compiler.read import Message, with_content
from compiler.state import Entry, Register

STATE_MARKER = "[ACTIVE_AGENT_STATE]"
RECALL_MARKER = "[RETIRED_TURN_RECALL"
MODES = ("compact", "cache_friendly")
# the roles a compile writes into (the header, a recall): no other message has any of it
STRIPPED_ROLES = frozenset({"system", "user"})

# One line of each block exactly as ``_line`` / ``invariant_lines`` write it. The
# two-space indent is optional (the plain-text reader strips a continuation indent),
# but every line of a block must carry the same indent as its first. A line for another
# entity than the current one starts with the entity slot and its value
# (``state_lines``).
_QUOTED = r'"(?:[^"\\\n]|\\[^\n])*"'
_STATE_LINE = (
    rf"- (?:([a-z0-9_]+) ({_QUOTED}): )?"
    rf"([a-z0-9_]+) = ({_QUOTED}) \(turn \d+ \[([a-z]+(?:, [a-z]+)*)\]\)"
)
_RULE_LINE = r"- \S+(?: \S+)*"
# (a client may have turned every line break into CRLF)
_BLOCK = re.compile(
    r"^(?:\[(?:ACTIVE_AGENT_STATE|STATE_REGISTER|STATE_CHANGES)\]\r?\n(?P<s>(?:  )?)"
    rf"{_STATE_LINE}(?:\r?\n(?P=s){_STATE_LINE})*"
    r"|\[DECLARED_INVARIANTS\]\r?\n(?P<r>(?:  )?)"
    rf"{_RULE_LINE}(?:\r?\n(?P=r){_RULE_LINE})*)"
    r"(?:\r?\n\r?\n|(?:\r?\n)?\Z)",
    re.MULTILINE,
)
RECALL_END = "[/RETIRED_TURN_RECALL]"
# Exactly what ``_recall_text`` appends: a blank line, the opening marker, bracket-free
# text (``_recall_text`` neutralises brackets) and the closing marker, ending the message.
_RECALL_TAIL = re.compile(
    r"\r?\n\r?\n\[RETIRED_TURN_RECALL turn=\d+ role=[a-z]+\]: [^\[\]]*"
    r"\r?\n\[/RETIRED_TURN_RECALL\]\Z"
)


@dataclass(frozen=True)
class Recall:
    turn: int
    role: str
    text: str
    score: float


@dataclass(frozen=True)
class Emitted:
    """Output messages and, for each, the input index it came from (None: ours)."""

    messages: tuple[Message, ...]
    origins: tuple[int | None, ...]
    recall_placed: bool = False


def strip_compiled_one(message: Message) -> tuple[Message | None, bool]:
    """One message without what an earlier compile wrote into it (None: nothing left).

    Only our own shapes go: a block whose indent a plain-text reader stripped still
    counts, a marker merely mentioned does not, and a recall is removed only as the
    exact delimited tail ``emit`` appended.

    Example:
        >>> header = '[ACTIVE_AGENT_STATE]\\n- a = "1" (turn 0 [inferred])\\n\\nBe kind.'
        >>> strip_compiled_one(Message("system", header))[0].content
        'Be kind.'
        >>> mention = "[ACTIVE_AGENT_STATE]\\n- keep me\\n\\nBe kind."
        >>> strip_compiled_one(Message("system", mention))[1]
        False
        >>> tail = _recall_text(Recall(2, "user", "W123", 1.0))
        >>> strip_compiled_one(Message("user", "hi\\n\\n" + tail))[0].content
        'hi'
        >>> log = "Log:\\n[RETIRED_TURN_RECALL turn=2 role=user]: refund W123."
        >>> strip_compiled_one(Message("user", log))[1]
        False
    """
    text, role = message.content, message.role
    # every mark of ours holds a "]": a text without one (most, a long system prompt
    # too) is not searched for each mark (one scan for a character costs far less)
    if not text or role not in STRIPPED_ROLES or "]" not in text:
        return message, False
    if role == "system":
        if "]\n  - " in text or "]\n- " in text or "]\r\n" in text:
            text = _BLOCK.sub("", text)
        if text and "[STATE_PROTOCOL]" in text:
            text = INSTRUCTION.sub("", text)
    elif RECALL_MARKER in text:
        text = _RECALL_TAIL.sub("", text)
    if text == message.content:
        return message, False
    if role == "system" and not text:  # (whitespace left is the caller's own)
        return None, True
    return with_content(message, text), True


_STATE_FIELDS = re.compile(rf"^(?:  )?{_STATE_LINE}\r?$", re.MULTILINE)  # slot, value, flags


def declared_in_header(text: str) -> tuple[tuple[str, str, Op], ...]:
    r"""The declared facts a state block of ours in ``text`` carries: slot, value and how
    it was declared (pinned, unsure or asserted). When compiled output is compiled
    again, the block is all that is left of them: the declaring turn lost its
    ``<contextgc-state>`` block to the first compile. Inferred and acted facts are read
    again from the turns that support them, which a compile never drops.

    Example:
        >>> header = ('[ACTIVE_AGENT_STATE]\n  - gate = "4921" (turn 2 [declared, pinned])\n'
        ...           '  - city = "Oslo" (turn 0 [inferred])\n\nBe kind.')
        >>> declared_in_header(header)
        (('gate', '4921', <Op.PIN: 'pin'>),)
        >>> declared_in_header("[ACTIVE_AGENT_STATE]\n- keep me")
        ()
    """
    found = []
    for block in _BLOCK.finditer(text):
        if block.group().startswith(INVARIANTS_MARKER):
            continue
        for scope, _, slot, quoted, flags in _STATE_FIELDS.findall(block.group()):
            provenance, *marks = flags.split(", ")
            if provenance != Provenance.DECLARED or scope:  # (another entity's: not now)
                continue
            op = Op.PIN if "pinned" in marks else Op.UNSURE if "unsure" in marks else Op.ASSERT
            found.append((slot, json.loads(quoted), op))
    return tuple(found)


StateLines = tuple[tuple[str, str], ...]  # (slot, its line), in the register's order


def keyed_state_lines(register: Register, number: Callable[[int], int] | None = None) -> StateLines:
    """``state_lines``, each with its slot: what a state note compares."""
    return tuple((entry.slot, _line(register, entry, number)) for entry in register.active)


def state_lines(register: Register, number: Callable[[int], int] | None = None) -> list[str]:
    """One line per live slot: value, turn, provenance and flags; then one per live value
    of a slot kept per entity for the other entities, led by the entity. ``number`` gives
    the turn as the caller counts it (see ``Compilation.numbers``); by default, as read."""
    lines = [_line(register, entry, number) for entry in register.active]
    if register.others:
        scopes = dict(register.scopes)
        lines += [
            _line(register, entry, number, f"{scopes[entry.slot]} {_quote(entry.entity or '')}: ")
            for entry in register.others
        ]
    return lines


def _line(
    register: Register, entry: Entry, number: Callable[[int], int] | None, lead: str = ""
) -> str:
    turn = entry.turn if number is None else number(entry.turn)
    flags = [entry.provenance._value_]  # (its value, without the call ``value`` makes)
    if entry.pinned:
        flags.append("pinned")
    if entry.unsure:
        flags.append("unsure")
    value = _quote(register.shown_value(entry))
    return f"  - {lead}{entry.slot} = {value} (turn {turn} [{', '.join(flags)}])"


def _quote(value: str) -> str:
    """JSON quoting, with angle brackets escaped so no value forges protocol markup.
    (``encode_basestring`` is what ``json.dumps(value, ensure_ascii=False)`` calls for a
    string, without building an encoder first.)"""
    return encode_basestring(value).replace("<", "\\u003c").replace(">", "\\u003e")


def invariant_lines(invariants: tuple[str, ...]) -> list[str]:
    return [f"  - {' '.join(rule.split())}" for rule in invariants]


def emit(
    messages: tuple[Message, ...],
    *,
    register: Register,
    retired: frozenset[int],
    compacted: dict[int, str | Message],
    mode: str,
    invariants: tuple[str, ...] = (),
    recall: Recall | None = None,
    instruction: str = "",
    number: Callable[[int], int] | None = None,
    points: tuple[tuple[int, StateLines], ...] = (),
    notes: dict | None = None,
) -> Emitted:
    """Lay the compiled messages out for ``mode``.

    ``instruction`` (the taught write protocol) goes into the first system
    message in ``compact`` mode, and into the first state note in
    ``cache_friendly`` mode so the cached prefix stays untouched. ``number``
    renumbers the turns the text names (the state lines, a recall) as the
    caller counts them. ``points`` (``cache_friendly``): each earlier call
    point, the index of the assistant message it came before, with the state
    lines as of there (``keyed_state_lines``). ``notes`` (``cache_friendly``): a memo a
    longer history's compile is given again, where the ``Notes`` of ``points`` are kept
    so that it reads only the points that are new.
    """
    if recall is not None and number is not None:
        recall = replace(recall, turn=number(recall.turn))
    rules = invariant_lines(invariants)
    if mode == "cache_friendly":
        final = (len(messages), keyed_state_lines(register, number))
        key = (tuple(rules), instruction)
        read = (notes or {}).get(key) or Notes(rules, instruction)
        read = read.read_on(points)
        if notes is not None:  # (one entry: the options a loop compiles with)
            notes.clear()
            notes[key] = read
        return _cache_friendly(messages, read, final, compacted)
    lines = state_lines(register, number)
    kept = [
        (i, _replaced(m, compacted[i]) if i in compacted else m)
        for i, m in enumerate(messages)
        if i not in retired
    ]
    placed = False
    if recall is not None and kept and kept[-1][1].role == "user":
        index, last = kept[-1]
        kept[-1] = (index, with_content(last, last.text + "\n\n" + _recall_text(recall)))
        placed = True
    state, invariants_block = (
        render_block(STATE_MARKER, lines),
        render_block(INVARIANTS_MARKER, rules),
    )
    header = "\n\n".join(b for b in (state, invariants_block, instruction) if b)
    if header and kept and kept[0][1].role == "system":
        index, first = kept[0]
        body = first.text
        kept[0] = (index, with_content(first, f"{header}\n\n{body}" if body else header))
    elif header:
        kept.insert(0, (None, Message("system", header)))
    origins, out = zip(*kept, strict=True) if kept else ((), ())  # the pairs, unzipped
    return build(Emitted, messages=out, origins=origins, recall_placed=placed)


def _replaced(message: Message, replacement: str | Message) -> Message:
    """A compacted payload: its text, or a message already built for it."""
    if isinstance(replacement, Message):
        return replacement
    return with_content(message, replacement)


def _cache_friendly(messages, notes: Notes, final, compacted) -> Emitted:
    """The messages in order (a payload re-encoded losslessly where it was), a state note
    before each call point whose lines changed: ``notes`` those of the earlier points,
    then the one of the ``final`` point (the end of the history), if it takes one."""
    placed, made = notes.placed, notes.messages
    last = notes.note(*final)
    if last is not None:
        placed, made = [*placed, last], [*made, Message("system", last[1])]
    out = list(messages)
    for index, replacement in compacted.items():
        out[index] = _replaced(messages[index], replacement)
    origins: list[int | None] = list(range(len(messages)))
    for (index, _), note in zip(reversed(placed), reversed(made), strict=True):
        out.insert(index, note)
        origins.insert(index, None)
    return build(Emitted, messages=tuple(out), origins=tuple(origins), recall_placed=False)


def _recall_text(recall: Recall) -> str:
    """Recalled text with brackets neutralised, so it cannot forge our markers, and
    closed by ``RECALL_END`` so ``strip_compiled_one`` can tell it from user text.

    Example:
        >>> print(_recall_text(Recall(2, "user", "see [1]", 1.0)))
        [RETIRED_TURN_RECALL turn=2 role=user]: see (1)
        [/RETIRED_TURN_RECALL]
    """
    safe = recall.text.replace("[", "(").replace("]", ")")
    return f"[RETIRED_TURN_RECALL turn={recall.turn} role={recall.role}]: {safe}\n{RECALL_END}"

"""The stages as a fold over messages.

``Fold`` holds what the per-message stages derived from a history so far —
markup stripped, declarations read, kind, observations folded into the
register, read keys — and extends it one message at a time. ``finish`` then
runs the whole-history stages (retirement, the payload plan, recall, layout),
which are linear in the history and cheap. A full compile is ``Fold`` from
empty; an agent loop that calls again with one more turn resumes a copy of the
previous ``Fold`` (see ``compiler.incremental``), so both take the same code
path and give the same bytes.

The per-message stages run in one method, ``Fold.advance``, in the order its docstring
gives (as functions over a tuple they cost more per message: see there); the
whole-history stages, once per compile, are data: ``stages.HISTORY_STAGES``.
"""

from __future__ import annotations

from compiler.compact import Checkpoints, next_read_key, status_values
from compiler.compact.plan import NO_STATUS
from compiler.frozen import build
from compiler.layout import (
    CHANGES_MARKER,
    REGISTER_MARKER,
    STATE_MARKER,
    STRIPPED_ROLES,
    declared_in_header,
    strip_compiled_one,
)
from compiler.layout.emit import keyed_state_lines
from compiler.loop import LoopCheckpoints
from compiler.memo import Memo
from compiler.protocol import DeclareState
from compiler.read import Message
from compiler.stages import HISTORY_STAGES, Made, numbers_of, settle_call
from compiler.state import Kind, RegisterFold, classify_next, extract_parts
from compiler.state.answers import Held, settled, take
from compiler.types import Compilation, Options


class Fold:
    """Per-message stage results for a history, extendable and copyable."""

    def __init__(self, options: Options, *, by_item: bool = False, resumable: bool = True):
        schema = options.schema
        self.options = options
        self.resumable = resumable  # if not, the plan's inputs are let go once it is made
        # how the caller counts turns: by_item, each message's place in the caller's list
        # (``line - 1``, which counts items the reader skipped); else as they were read.
        # ``sources`` holds, per clean message, its index in ``original``.
        self.by_item = by_item
        self.sources: list[int] = []
        # how many of the caller's items were read (by_item), skipped ones included
        self.items = 0
        self.keys: list = []
        self.original: list[Message] = []
        self.warnings: list = []
        self.clean: list[Message] = []
        self.kinds: list[Kind] = []
        self.read_keys: list[tuple] = []
        self.markup_stripped = 0
        self.carried: tuple = ()  # declared facts of a stripped header, not folded yet
        self.declare = DeclareState(schema, options.declaration_policy, options.value_policy)
        self.fold = RegisterFold(*((schema.immutable, schema.scopes) if schema else ()))
        self.held: Held | None = None  # a turn whose state-changing calls await answers
        self.task_seen = False
        self.calls: dict = {}  # each tool call read so far, by id (``next_read_key``)
        self.fields: dict = {}  # each set of a record's fields read so far (the same)
        # per message, the SWE-agent status its text ends with (open file, directory),
        # and whether any message states one (few histories do)
        self.stated: list[tuple[str | None, str | None]] = []
        self.statuses = False
        # cache_friendly: each call point (an assistant turn) and the state lines before it
        self.points: list[tuple[int, tuple]] = []
        # the register's count of observations applied when the last call point's lines
        # were built (``RegisterFold.applied``): the same count, the same lines
        self.lines_applied = -1
        self.checkpoints = Checkpoints(options.cached_rate)  # cache_friendly's cuts so far
        # compact, told the provider's cached rate: compiled for a loop (``compiler.loop``)
        looping = options.mode == "compact" and options.cached_rate is not None
        self.loop = LoopCheckpoints(options.cached_rate) if looping else None
        self.memo = Memo()
        # whether each message's decoded JSON is let go once its own stages have read it:
        # a one-off cache_friendly compile reads it nowhere after (its plan re-encodes each
        # payload as it goes, and its checkpoints decode without a memo), so holding every
        # payload's to the end only raised the peak (by about 1.3x the input on airline)
        self.drop_decoded = not resumable and options.mode == "cache_friendly"
        self.pairing = None  # the history cache's scan for calls that do not pair

    def copy(self) -> Fold:
        twin = Fold.__new__(Fold)
        twin.__dict__.update(self.__dict__)
        for name in _LISTS:
            setattr(twin, name, list(getattr(self, name)))
        twin.calls, twin.fields = dict(self.calls), dict(self.fields)
        twin.memo = self.memo.copy()
        twin.declare = self.declare.copy()
        twin.fold, twin.checkpoints = self.fold.copy(), self.checkpoints.copy()
        if self.loop is not None:
            twin.loop = self.loop.copy()
        if self.pairing is not None:
            twin.pairing = self.pairing.copy()
        return twin

    def extend(self, messages, keys=None, warnings=(), items=None) -> Fold:
        """Fold more messages in. ``keys`` identify the input items they came from;
        ``items`` is how many items those were (by default one per message, or per key)."""
        for message in messages:
            self.advance(message)
        if keys is not None:
            self.keys.extend(keys)
        if items is None:
            items = len(keys) if keys is not None else len(messages)
        self.items += items
        self.warnings.extend(warnings)
        return self

    def advance(self, message: Message) -> None:
        """Every per-message stage, for one more message: strip a compile's own markup
        (a stripped header's declared facts carried), declare (the write path), classify,
        extract and fold into the register, read key, status lines. Before an assistant
        message, a loop's call point is settled (``compiler.loop``).

        (One method: the same stages as functions run over a tuple, as the whole-history
        ones are, folded the dev corpora's messages 1.6% (airline) and 4.8% (retail)
        slower, timed in one process, best of 9 alternating runs.)"""
        if self.loop is not None and message.role == "assistant" and self.clean:
            settle_call(self)
        self.original.append(message)
        if message.role in STRIPPED_ROLES:  # (only these can carry what a compile wrote)
            stripped, touched = strip_compiled_one(message)
            self.markup_stripped += touched
            if touched and message.role == "system" and _holds_header(self, message, stripped):
                self.carry(declared_in_header(message.content), stripped is None)
            message = stripped
            if message is None:
                return
        clean = self.clean
        turn = len(clean)
        if self.held is not None:
            _answer(self, message)
        if self.carried:  # declared in a header this message held, or one just before it
            self.fold_carried(turn)
        if turn and message.role == "assistant" and self.options.mode == "cache_friendly":
            self.points.append((turn, _point_lines(self)))
        self.sources.append(len(self.original) - 1)
        declare = self.declare
        before = len(declare.observations)
        message = declare.message(turn, message)
        previous = clean[-1] if clean else None
        kind, self.task_seen = classify_next(message, self.task_seen)
        self._observe(message, kind, turn, declare.observations[before:])
        decoded = self.memo.decoded
        self.read_keys.append(
            next_read_key(message, kind, previous, self.calls, decoded, self.fields)
        )
        if self.drop_decoded and decoded:
            decoded.clear()
        clean.append(message)
        self.kinds.append(kind)
        stated = status_values(message.content or "")
        self.stated.append(stated)
        self.statuses = self.statuses or stated != NO_STATUS

    def _observe(self, message: Message, kind: Kind, turn: int, declared) -> None:
        schema = self.options.schema
        said, acted = [], ()
        if schema is not None:
            skip = self.declare.keys_by_turn.get(turn, ())
            said, acted = extract_parts(message, kind, turn, schema, skip, self.memo.decoded)
        if said or acted or declared:  # held where its effect waits for the tool's answers
            held = take(self.fold, message, said, acted, declared)
            if held is not None:
                self.held = held

    def carry(self, facts: tuple, gone: bool) -> None:
        """Declared facts read back from a stripped header (``emit.declared_in_header``).
        They hold as of where the header stood: a header that was a message of its own
        (``gone``) after the last turn read (a register at the tail) is folded at that
        turn, any other before the next message's own observations."""
        if not facts:
            return
        self.carried = (*self.carried, *facts)
        if gone and self.clean:
            self.fold_carried(len(self.clean) - 1)

    def fold_carried(self, turn: int) -> None:
        self.fold.apply_turn(self.declare.carry(turn, self.carried))
        self.carried = ()

    def finish(self, *, remember: bool = True) -> Compilation:
        """The whole-history stages (``HISTORY_STAGES``). ``remember``: this fold is kept
        for later calls, so the result memoises what it builds from messages the fold
        holds; a one-off compile remembers nothing, and lets go of its memo here, before
        the caller builds its output and telemetry (the decoded JSON of every payload is
        the largest part of a compile's peak memory)."""
        made = Made(tuple(self.clean), tuple(self.kinds), settled(self.fold, self.held), remember)
        made.numbers = numbers = numbers_of(self)
        made.number = numbers.__getitem__ if numbers is not None else None
        for stage in HISTORY_STAGES:
            stage(self, made)
        memo = self.memo
        if not remember:
            self.memo = Memo()
        return build(  # Compilation(...), built as frozen.build builds
            Compilation,
            original=tuple(self.original),
            input=made.clean,
            kinds=made.kinds,
            register=made.register,
            retired=made.retired,
            compacted=made.compacted,
            emitted=made.emitted,
            markup_stripped=self.markup_stripped,
            declared=self.declare.result(made.clean),
            options=self.options,
            recall=made.recall,
            instruction=made.instruction,
            numbers=numbers,
            skipped_at=_skipped_at(self, numbers),
            token_memo=memo.tokens if remember else None,
            dict_memo=memo.dicts if remember else None,
            held=made.plan.held if remember else None,
        )

    def number(self, turn: int) -> int:
        """One clean message's turn number as ``stages.numbers_of`` gives it (earlier turns keep
        theirs as the history grows)."""
        source = self.sources[turn]
        return self.original[source].line - 1 if self.by_item else source


def _point_lines(fold: Fold) -> tuple:
    """The state lines at a call point: the last point's where the register applied no
    observation since (earlier turns keep their numbers, so the lines are the same), else
    built from the register. Most calls leave the register as it was: reusing their lines
    compiled cache_friendly 5.8% faster on airline dev (N=100) and 4.9% on retail (N=46)
    (``versions.py``, cpu time, 3 rounds of 3)."""
    register = fold.fold
    if fold.points and register.applied == fold.lines_applied:
        return fold.points[-1][1]
    fold.lines_applied = register.applied
    lines = keyed_state_lines(register.result(), fold.number)
    return _shared_lines(fold.points, lines)


def _shared_lines(points: list, lines: tuple) -> tuple:
    """A call point's state lines, each (slot, line) equal to one at the point before
    being that one: most calls leave the register as it was, and every point holding
    lines of its own was about half the input's size on the airline dev corpus."""
    if not points:
        return lines
    before = points[-1][1]
    if lines == before:
        return before
    known = {pair: pair for pair in before}
    return tuple([known.get(pair, pair) for pair in lines])


def _skipped_at(fold: Fold, numbers) -> int | None:
    """Where the caller's list holds the first item the reader skipped (by_item only),
    asked only where the reader may have skipped one: numbering moved, or items were read
    past the last message (a skipped item at the end)."""
    if not fold.by_item or (numbers is None and fold.items <= len(fold.original)):
        return None
    for index, message in enumerate(fold.original):
        if message.line - 1 != index:
            return index
    return len(fold.original) if fold.items > len(fold.original) else None


def _answer(fold: Fold, message: Message) -> None:
    """``message`` answers one of the held turn's calls, or the held turn is over: a
    call it does not answer counts as done."""
    held = fold.held
    if held.awaits(message):
        held = fold.held = held.answered(message)
        if held.waiting:
            return
    fold.held = None
    held.apply(fold.fold)


def _holds_header(fold: Fold, message: Message, stripped: Message | None) -> bool:
    """Whether a system message holds a state block where a compile writes one: at
    the head of the first message (``compact``), or as the whole of a message
    (``cache_friendly``'s register, or ``compact``'s header where the history had no
    system message, wherever a caller then put it: after its own system prompt, say).
    A block quoted anywhere else (a ``system:`` line in a pasted transcript) declares
    nothing."""
    text = message.content
    if len(fold.original) == 1 and text.startswith(STATE_MARKER):
        return True
    return stripped is None and text.startswith((REGISTER_MARKER, STATE_MARKER, CHANGES_MARKER))


_LISTS = (
    "keys",
    "original",
    "warnings",
    "clean",
    "kinds",
    "read_keys",
    "sources",
    "stated",
    "points",
)

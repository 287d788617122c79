"""The stages as a fold over messages.

``Fold`` holds what the per-message stages derived from a history so far —
markup stripped, declarations read, kind, observations folded into the
register, read keys — and extends it one message at a time. ``finish`` then
runs the whole-history stages (retirement, the payload plan, recall, layout),
which are linear in the history and cheap. A full compile is ``Fold`` from
empty; an agent loop that calls again with one more turn resumes a copy of the
previous ``Fold`` (see ``compiler.incremental``), so both take the same code
path and give the same bytes.

The order of the stages is data: ``MESSAGE_STAGES`` run on each message in turn,
``HISTORY_STAGES`` once per compile over the whole history.
"""

from __future__ import annotations

from dataclasses import dataclass

from compiler.compact import has_safety_signal, next_read_key, status_values
from compiler.compact.plan import NO_STATUS, PayloadPlan
from compiler.facts import PROVENANCE_RANK
from compiler.frozen import build
from compiler.layout import (
    CHANGES_MARKER,
    REGISTER_MARKER,
    STATE_MARKER,
    STRIPPED_ROLES,
    declared_in_header,
    strip_compiled_one,
)
from compiler.layout.emit import Emitted, Recall, emit, keyed_state_lines
from compiler.layout.recall import recall
from compiler.memo import Memo
from compiler.protocol import DeclareState, render_instruction
from compiler.read import Message
from compiler.state import Kind, RegisterFold, classify_next, extract_message
from compiler.state.retire import retire
from compiler.types import Compilation, Options


class Fold:
    """Per-message stage results for a history, extendable and copyable."""

    def __init__(self, options: Options, *, by_item: bool = False, resumable: bool = True):
        schema = options.schema
        self.options = options
        # whether a later compile may resume this fold; one that is not lets go of what
        # only a later compile would read again as soon as it is read
        self.resumable = resumable
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
        self.declared: list = []  # what the message being folded declared
        self.declare = DeclareState(schema, options.declaration_policy, options.value_policy)
        self.fold = RegisterFold(*((schema.immutable, schema.scopes) if schema else ()))
        self.task_seen = False
        self.calls: dict = {}  # each tool call read so far, by id (``next_read_key``)
        # per message, the SWE-agent status its text ends with (open file, directory),
        # and whether any message states one (few histories do)
        self.stated: list[tuple[str | None, str | None]] = []
        self.statuses = False
        # cache_friendly: each call point (an assistant turn) and the state lines before it
        self.points: list[tuple[int, tuple]] = []
        self.memo = Memo()

    def copy(self) -> Fold:
        twin = Fold.__new__(Fold)
        twin.__dict__.update(self.__dict__)
        for name in _LISTS:
            setattr(twin, name, list(getattr(self, name)))
        twin.calls = dict(self.calls)
        twin.memo = self.memo.copy()
        twin.declare = self.declare.copy()
        twin.fold = self.fold.copy()
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
        """Every per-message stage, for one more message; a stage that leaves nothing of
        it (a compiled header stripped whole) ends its fold."""
        self.original.append(message)
        turn = len(self.clean)
        for stage in MESSAGE_STAGES:
            message = stage(self, message, turn)
            if message is None:
                return
        self.clean.append(message)

    def holds_header(self, message: Message, stripped: Message | None) -> bool:
        """Whether a system message holds a state block where a compile writes one: at
        the head of the first message (``compact``), or as the whole of a message
        (``cache_friendly``'s register, or ``compact``'s header where the history had no
        system message, wherever a caller then put it: after its own system prompt, say).
        A block quoted anywhere else (a ``system:`` line in a pasted transcript) declares
        nothing."""
        text = message.content
        if len(self.original) == 1 and text.startswith(STATE_MARKER):
            return True
        return stripped is None and text.startswith((REGISTER_MARKER, STATE_MARKER, CHANGES_MARKER))

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
        made = Made(tuple(self.clean), tuple(self.kinds), self.fold.result(), remember)
        made.numbers = numbers = self._numbers()
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
            skipped_at=self._skipped_at() if self._skipped(numbers) else None,
            token_memo=memo.tokens if remember else None,
            dict_memo=memo.dicts if remember else None,
            held=made.plan.held if remember else None,
        )

    def _numbers(self) -> tuple[int, ...] | None:
        """Each clean message's turn number as the caller counts it: its place in the
        caller's list (``by_item``), or among the messages read from text. None where that
        is its index already, as it is unless an item was skipped or a compiled header
        stripped."""
        original = self.original
        if not original:
            return None
        if not self.by_item:
            return None if len(self.sources) == len(original) else tuple(self.sources)
        if len(self.sources) == len(original) == original[-1].line:
            return None
        return tuple(original[source].line - 1 for source in self.sources)

    def number(self, turn: int) -> int:
        """One clean message's turn number as ``_numbers`` gives it (earlier turns keep
        theirs as the history grows)."""
        source = self.sources[turn]
        return self.original[source].line - 1 if self.by_item else source

    def _skipped(self, numbers) -> bool:
        """Whether the reader may have skipped an item of the caller's list: numbering
        moved, or items were read past the last message (a skipped item at the end)."""
        return numbers is not None or self.items > len(self.original)

    def _skipped_at(self) -> int | None:
        """Where the caller's list holds the first item the reader skipped (by_item only)."""
        if not self.by_item:
            return None
        for index, message in enumerate(self.original):
            if message.line - 1 != index:
                return index
        return len(self.original) if self.items > len(self.original) else None


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


# The per-message stages: each takes the fold, the message as the stage before left it
# and its turn (its index among the clean messages), and returns the message for the
# next stage, or None where nothing of it is left to fold.


def strip(fold: Fold, message: Message, turn: int) -> Message | None:
    """A compile's own markup out of a message; a compiled header's declared facts
    carried, to be folded where it stood."""
    if message.role not in STRIPPED_ROLES:  # (only these can carry what a compile wrote)
        return message
    stripped, touched = strip_compiled_one(message)
    fold.markup_stripped += touched
    if touched and message.role == "system" and fold.holds_header(message, stripped):
        fold.carry(declared_in_header(message.content), stripped is None)
    return stripped


def place(fold: Fold, message: Message, turn: int) -> Message:
    """Carried facts folded before this message's own; in ``cache_friendly``, the
    state before an assistant turn kept for its call point; where the message stood."""
    if fold.carried:  # declared in a header this message held, or one just before it
        fold.fold_carried(turn)
    if turn and message.role == "assistant" and fold.options.mode == "cache_friendly":
        fold.points.append((turn, keyed_state_lines(fold.fold.result(), fold.number)))
    fold.sources.append(len(fold.original) - 1)
    return message


def declare(fold: Fold, message: Message, turn: int) -> Message:
    """The write path: protocol blocks read and stripped; what they declared kept for
    ``register``."""
    observations = fold.declare.observations
    before = len(observations)
    message = fold.declare.message(turn, message)
    fold.declared = observations[before:]
    return message


def classify(fold: Fold, message: Message, turn: int) -> Message:
    kind, fold.task_seen = classify_next(message, fold.task_seen)
    fold.kinds.append(kind)
    return message


def register(fold: Fold, message: Message, turn: int) -> Message:
    """The read and action paths' observations, with what the message declared, folded
    into the register."""
    schema, declared, inferred = fold.options.schema, fold.declared, []
    if schema is not None:
        skip = fold.declare.keys_by_turn.get(turn, ())
        inferred = extract_message(message, fold.kinds[-1], turn, schema, skip, fold.memo.decoded)
    if declared:
        batch = sorted((*inferred, *declared), key=lambda o: PROVENANCE_RANK[o.provenance])
        fold.fold.apply_turn(batch, message.role)
    elif inferred:  # in provenance order already: the read path's, then the action path's
        fold.fold.apply_turn(inferred, message.role)
    return message


def read_key(fold: Fold, message: Message, turn: int) -> Message:
    """What the message reads (a file, a record), for stale reads."""
    previous = fold.clean[-1] if fold.clean else None
    decoded = fold.memo.decoded
    fold.read_keys.append(next_read_key(message, fold.kinds[-1], previous, fold.calls, decoded))
    if not fold.resumable:
        _release(fold, message, decoded)
    return message


def _release(fold: Fold, message: Message, decoded: dict) -> None:
    """For a fold no later compile resumes, the decoded JSON nothing after the per-message
    stages reads: a tool call's arguments, and in ``cache_friendly`` (whose payload plan
    re-encodes a payload as it reads it) the payload's own (keyed by its stripped text,
    as ``read_keys.record_key`` decodes it)."""
    for call in message.tool_calls:
        decoded.pop(call.arguments, None)
    if fold.options.mode != "compact" and message.content:
        decoded.pop(message.content.strip(), None)


def status(fold: Fold, message: Message, turn: int) -> Message:
    """The SWE-agent status lines the message ends with, for repeats."""
    stated = status_values(message.content or "")
    fold.stated.append(stated)
    fold.statuses = fold.statuses or stated != NO_STATUS
    return message


MESSAGE_STAGES = (strip, place, declare, classify, register, read_key, status)


@dataclass(slots=True)
class Made:
    """What the whole-history stages have made so far, each stage filling its part."""

    clean: tuple[Message, ...]
    kinds: tuple[Kind, ...]
    register: object
    remember: bool = True  # (``Fold.finish``)
    numbers: tuple[int, ...] | None = None
    number: object = None
    retired: tuple = ()
    gone: frozenset[int] = frozenset()  # the retired turns
    plan: PayloadPlan | None = None
    compacted: dict | None = None
    recall: Recall | None = None
    instruction: str = ""
    emitted: Emitted | None = None


def retire_turns(fold: Fold, made: Made) -> None:
    """``compact``: the turns whose facts were all replaced, retired."""
    if fold.options.mode != "compact":
        return
    clean = made.clean
    calling = frozenset(i for i, message in enumerate(clean) if message.tool_calls)
    task = next((i for i, m in enumerate(clean) if m.role == "user" and _says(m)), None)

    def speaks_of_safety(turn: int) -> bool:  # (asked only of a turn that would go)
        return has_safety_signal(clean[turn].text)

    speakers = tuple(message.role for message in clean)
    made.retired = retire(made.register, made.kinds, calling, task, speaks_of_safety, speakers)
    made.gone = frozenset(r.turn for r in made.retired)


def plan_payloads(fold: Fold, made: Made) -> None:
    """How each payload is shown (``compact.plan``)."""
    plan = PayloadPlan(
        made.clean, made.kinds, fold.read_keys, fold.stated, fold.statuses, fold.memo, made.remember
    )
    made.plan = plan
    if fold.options.mode == "compact":
        made.compacted = plan.compacted(made.gone, made.number)
    else:
        made.compacted = plan.first_sight()
    if not made.remember:  # what a later compile would reuse, let go before the layout
        fold.memo.forget_payloads()
    if not fold.resumable:  # (read by the plan, and by the read key of a message to come)
        fold.read_keys.clear()
        fold.calls.clear()


def recall_turns(fold: Fold, made: Made) -> None:
    made.recall = recall(fold.options.recall_query, made.clean, tuple(sorted(made.gone)))


def teach(fold: Fold, made: Made) -> None:
    """The protocol instruction, where the options ask to teach it."""
    options = fold.options
    if options.teach_protocol:
        made.instruction = render_instruction(options.schema.slot_names if options.schema else ())


def lay_out(fold: Fold, made: Made) -> None:
    plan = made.plan
    made.emitted = emit(
        made.clean,
        register=made.register,
        retired=made.gone,
        compacted={i: plan.replacement(i, c) for i, c in made.compacted.items()},
        mode=fold.options.mode,
        invariants=fold.options.invariants,
        recall=made.recall,
        instruction=made.instruction,
        number=made.number,
        points=tuple(fold.points),
    )


HISTORY_STAGES = (retire_turns, plan_payloads, recall_turns, teach, lay_out)


def _says(message: Message) -> bool:
    """Whether a message holds any text (the task is the first user turn that does)."""
    return bool(message.content and message.content.strip())

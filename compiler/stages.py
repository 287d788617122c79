"""The whole-history stages, run once per compile in the order ``HISTORY_STAGES`` gives.

Each stage reads the ``Fold`` (what the per-message stages derived) and fills its part
of ``Made``: retirement, the payload plan, recall, the protocol instruction, the
layout. ``compiler.fold`` runs them from ``Fold.finish``; a ``compact`` compile told
the provider's cached rate also runs the first two at each call point
(``settle_call``, ``compiler.loop``).
"""

from __future__ import annotations

from dataclasses import dataclass

from compiler.compact import has_safety_signal
from compiler.compact.plan import PayloadPlan
from compiler.layout.emit import Emitted, Recall, emit
from compiler.layout.recall import recall
from compiler.protocol import render_instruction
from compiler.read import Message
from compiler.state import Kind
from compiler.state.requests import asks_more
from compiler.state.retire import retire


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
    first_seen: dict | None = None  # compact in a loop: each payload as first seen


def retire_turns(fold, made: Made) -> None:
    """``compact``: the turns whose facts were all replaced, retired."""
    if fold.options.mode != "compact":
        return
    clean = made.clean
    calling = frozenset(i for i, message in enumerate(clean) if message.tool_calls)
    task = next((i for i, m in enumerate(clean) if m.role == "user" and _says(m)), None)

    def carries_more(turn: int) -> bool:  # a safety signal, or a request no slot holds
        return has_safety_signal(clean[turn].text) or asks_more(clean[turn], turn, made.register)

    speakers = tuple(message.role for message in clean)
    made.retired = retire(made.register, made.kinds, calling, task, carries_more, speakers)
    made.gone = frozenset(r.turn for r in made.retired)


def payload_plan(fold, made: Made) -> PayloadPlan:
    return PayloadPlan(
        made.clean,
        made.kinds,
        fold.read_keys,
        fold.stated,
        fold.statuses,
        fold.memo,
        made.remember,
    )


def settle_call(fold) -> None:
    """``compact`` in a loop: decide the call point at the end of the history so far, as
    the last ``finish`` decided it where that was this history's (``compiler.loop``)."""
    loop = fold.loop
    pending = loop.pending
    if pending is None or pending.end != len(fold.clean):
        made = Made(tuple(fold.clean), tuple(fold.kinds), fold.fold.result())
        made.numbers = numbers = numbers_of(fold)
        made.number = numbers.__getitem__ if numbers is not None else None
        retire_turns(fold, made)
        plan = payload_plan(fold, made)
        made.compacted = plan.compacted(made.gone, made.number)
        pending = loop.decide_at(made, plan.first_sight(made.number), fold.memo.pointed)
    loop.keep(pending)


def plan_payloads(fold, made: Made) -> None:
    """How each payload is shown (``compact.plan``)."""
    made.plan = plan = payload_plan(fold, made)
    if fold.options.mode == "compact":
        made.compacted = plan.compacted(made.gone, made.number)
    else:
        cuts = fold.checkpoints.cached_rate is not None  # (else nothing is ever cut)
        made.compacted = fold.checkpoints.cut(fold, made, plan.first_sight(made.number, cuts))
    if not made.remember:  # what a later compile would reuse, let go before the layout
        fold.memo.forget_payloads()
    if fold.loop is not None:  # (compact in a loop: the payloads after its frozen head)
        made.first_seen = plan.first_sight(made.number)
    if not fold.resumable:  # (read by the plan, and by the read key of a message to come)
        fold.read_keys.clear()
        fold.calls.clear()
        fold.fields.clear()


def recall_turns(fold, made: Made) -> None:
    made.recall = recall(fold.options.recall_query, made.clean, tuple(sorted(made.gone)))


def teach(fold, made: Made) -> None:
    """The protocol instruction, where the options ask to teach it."""
    options = fold.options
    if options.teach_protocol:
        made.instruction = render_instruction(options.schema.slot_names if options.schema else ())


def lay_out(fold, made: Made) -> None:
    plan = made.plan
    if fold.loop is not None:
        made.emitted = fold.loop.compile(made, fold.options, fold.memo.pointed)
        return
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
        notes=fold.memo.notes if made.remember else None,
    )


HISTORY_STAGES = (retire_turns, plan_payloads, recall_turns, teach, lay_out)


def _says(message: Message) -> bool:
    """Whether a message holds any text (the task is the first user turn that does)."""
    return bool(message.content and message.content.strip())


def numbers_of(fold) -> tuple[int, ...] | None:
    """Each clean message's turn number as the caller counts it: its place in the
    caller's list (``by_item``), or among the messages read from text. None where that
    is its index already, as it is unless an item was skipped or a compiled header
    stripped."""
    original = fold.original
    if not original:
        return None
    if not fold.by_item:
        return None if len(fold.sources) == len(original) else tuple(fold.sources)
    if len(fold.sources) == len(original) == original[-1].line:
        return None
    return tuple(original[source].line - 1 for source in fold.sources)

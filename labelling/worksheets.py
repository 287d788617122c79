"""Building a worksheet: which extractions people will judge.

The sample is drawn so that labelling measures every slot, not the easiest one:

- round-robin across the schema's slots, each up to the per-slot budget;
- within a slot, one row per value and one per transcript (repeats inflate n);
- rows already labelled, or already waiting on another worksheet, are skipped;
- a slot short of its budget is named. Within a window (the first ``limit``
  transcripts) the cause is left open — the window may be too small or the corpus
  may hold no more, and only a wider window tells them apart; over the whole corpus
  the cause is known and said.

An optional mechanical suggestion is attached as evidence (is the value in the turn,
the turn's role, whether the classifier called it machine output). It never becomes
a verdict; a verdict saved beside one records that it was offered.
"""

from __future__ import annotations

import random
from collections import defaultdict
from dataclasses import dataclass, field

from django.contrib.auth import get_user_model
from django.db import transaction

from compiler import load_schema
from labelling.compiling import compile_corpus, compile_retirements, turn_text
from labelling.models import (
    CompileRun,
    Corpus,
    Extraction,
    Label,
    MemberRole,
    Membership,
    Retirement,
    RetirementLabel,
    Role,
    TurnKind,
    Worksheet,
    WorksheetKind,
    WorksheetRow,
)

SUGGESTION_LIMITS = (
    "A text check, not a judgement: it cannot see whether the agent had already moved on, "
    "which is how every 'confirmed error' this project once carried was mislabelled."
)


@dataclass(frozen=True)
class Sampling:
    """How to draw the rows. ``limit``: only the first N transcripts (None: all).
    ``seed``: shuffle candidates with this seed first (None: file order)."""

    per_slot_budget: int = 12
    limit: int | None = None
    seed: int | None = None
    suggest: bool = False


@dataclass
class Draw:
    rows: list[Extraction] = field(default_factory=list)
    shortfalls: list[dict] = field(default_factory=list)
    skipped: dict = field(default_factory=dict)


def draw(candidates: list[Extraction], slots: list[str], budget: int, taken: set) -> Draw:
    """Round-robin over ``slots``: each takes its next candidate whose value and
    transcript it has not used, skipping keys in ``taken``, until each has ``budget``.

    Example:
        >>> from types import SimpleNamespace as NS
        >>> def e(t, slot, value):
        ...     return NS(transcript_id=t, slot=slot, value=value, turn=0)
        >>> cands = [e(1, "a", "x"), e(1, "a", "y"), e(2, "a", "x"), e(2, "a", "z"), e(1, "b", "q")]
        >>> d = draw(cands, ["a", "b"], 2, set())
        >>> [(r.slot, r.transcript_id, r.value) for r in d.rows]
        [('a', 1, 'x'), ('b', 1, 'q'), ('a', 2, 'z')]
        >>> d.shortfalls
        [{'slot': 'b', 'budget': 2, 'rows': 1}]
    """
    queues: dict[str, list] = defaultdict(list)
    skipped = {"labelled_or_on_another_worksheet": 0}
    for candidate in candidates:
        if _key(candidate) in taken:
            skipped["labelled_or_on_another_worksheet"] += 1
        else:
            queues[candidate.slot].append(candidate)
    picked: dict[str, list] = {slot: [] for slot in slots}
    seen = {slot: (set(), set()) for slot in slots}  # values, transcripts
    cursors = dict.fromkeys(slots, 0)
    order: list = []
    while True:
        progressed = False
        for slot in slots:
            if len(picked[slot]) >= budget:
                continue
            chosen = _next(queues[slot], cursors, slot, seen[slot])
            if chosen is not None:
                picked[slot].append(chosen)
                order.append(chosen)
                progressed = True
        if not progressed:
            break
    shortfalls = [
        {"slot": slot, "budget": budget, "rows": len(picked[slot])}
        for slot in slots
        if len(picked[slot]) < budget
    ]
    return Draw(order, shortfalls, skipped)


def _next(queue: list, cursors: dict, slot: str, seen: tuple[set, set]):
    values, transcripts = seen
    while cursors[slot] < len(queue):
        candidate = queue[cursors[slot]]
        cursors[slot] += 1
        value = candidate.value.strip().casefold()
        if value in values or candidate.transcript_id in transcripts:
            continue
        values.add(value)
        transcripts.add(candidate.transcript_id)
        return candidate
    return None


def _key(extraction) -> tuple:
    return (extraction.transcript_id, extraction.slot, extraction.turn, extraction.value)


def taken_keys(corpus: Corpus, schema_name: str) -> set:
    """Keys already labelled, or already on a worksheet of this corpus and schema."""
    labelled = Label.objects.filter(transcript__corpus=corpus, schema_name=schema_name)
    on_sheets = Extraction.objects.filter(
        rows__worksheet__run__corpus=corpus, rows__worksheet__schema_name=schema_name
    )
    return {_key(x) for x in labelled.only("transcript_id", "slot", "turn", "value")} | {
        _key(x) for x in on_sheets.only("transcript_id", "slot", "turn", "value")
    }


def suggestion_for(extraction: Extraction) -> dict:
    """Mechanical evidence about one extraction; never a verdict."""
    message = extraction.transcript.messages[extraction.turn]
    in_turn = extraction.value.casefold() in turn_text(message).casefold()
    machine = extraction.kind == TurnKind.MACHINE
    speaking = extraction.role in (Role.USER, Role.ASSISTANT)
    return {
        "value_in_turn": in_turn,
        "role": extraction.role,
        "machine_output": machine,
        "reading": "consistent" if in_turn and speaking and not machine else "doubtful",
        "limits": SUGGESTION_LIMITS,
    }


def explain(shortfall: dict, window: int, total: int) -> str:
    """Why a slot is short, as far as the sample can tell."""
    got, budget, slot = shortfall["rows"], shortfall["budget"], shortfall["slot"]
    if window >= total:
        return (
            f"{slot}: {got} of {budget} rows — the whole corpus ({total} transcripts) was read, "
            "so it holds no more unlabelled, distinct values for this slot."
        )
    return (
        f"{slot}: {got} of {budget} rows from the first {window} of {total} transcripts — "
        "the window may be too small, or the corpus may hold no more; widen it to tell."
    )


def build_worksheet(
    corpus: Corpus,
    schema_name: str,
    *,
    name: str,
    creator,
    sampling: Sampling,
    reviewers=(),
    adjudicators=(),
    reviews_per_row: int = 1,
) -> Worksheet:
    """Compile (or reuse) the run, draw the sample, store the worksheet and its rows."""
    compile_run = compile_corpus(corpus, schema_name)
    total, window = _window(corpus, sampling)
    candidates = list(
        compile_run.extractions.filter(transcript__position__lt=window)
        .select_related("transcript")
        .order_by("transcript__position", "turn", "slot", "value")
    )
    _shuffle(candidates, sampling)
    # Off-schema slots a declaration registered are sampled too: they were extracted.
    slots = sorted(set(load_schema(schema_name).slot_names) | {c.slot for c in candidates})
    result = draw(candidates, slots, sampling.per_slot_budget, taken_keys(corpus, schema_name))

    def row(worksheet: Worksheet, position: int, extraction) -> WorksheetRow:
        suggestion = suggestion_for(extraction) if sampling.suggest else None
        return WorksheetRow(
            worksheet=worksheet, extraction=extraction, position=position, suggestion=suggestion
        )

    drawn = Drawn(compile_run, schema_name, sampling, total, window, len(candidates), result)
    members = (reviewers, adjudicators, reviews_per_row)
    figures = {"suggest": sampling.suggest}
    return _store(drawn, row, members, figures, name=name, created_by=creator)


def add_members(worksheet: Worksheet, users, role: MemberRole) -> None:
    User = get_user_model()
    for user in users:
        if isinstance(user, str):
            user = User.objects.get(username=user)
        Membership.objects.update_or_create(worksheet=worksheet, user=user, defaults={"role": role})


RETIREMENT_RULE = (
    "Judged at the transcript's last turn, where the compile retired it: would the model, "
    "continuing from there, need this turn? safe_to_drop: what it carried is replaced by a "
    "later request or decision for the same thing (same reservation, order or file), or "
    "completed by the agent's action, or restated by a turn that stays (a confirmation, the "
    "user's own words, a tool result). still_needed: it carries something no turn that stays "
    "carries: a request still pending or never done, a consent, an outcome or fact not "
    "restated later (also when the turn that answered it is retired too)."
)


def stored_retirements(compile_run: CompileRun) -> list[Retirement]:
    """The run's retired turns, compiled now if the run was stored before they were kept
    (a run that retires nothing is compiled again each time: it costs one compile)."""
    if not compile_run.retirements.exists():
        schema = load_schema(compile_run.schema_name)
        fresh = []
        for transcript in compile_run.corpus.transcripts.order_by("position"):
            fresh += compile_retirements(transcript, schema)
        for retirement in fresh:
            retirement.run = compile_run
        Retirement.objects.bulk_create(fresh, ignore_conflicts=True)
    return list(
        compile_run.retirements.select_related("transcript").order_by(
            "transcript__position", "turn"
        )
    )


def draw_retirements(candidates: list, budget: int, taken: set) -> Draw:
    """Up to ``budget`` candidates whose (transcript, turn) is not in ``taken``, in order.

    Example:
        >>> from types import SimpleNamespace as NS
        >>> cands = [NS(transcript_id=1, turn=4), NS(transcript_id=1, turn=6)]
        >>> d = draw_retirements(cands, 1, {(1, 4)})
        >>> [(r.transcript_id, r.turn) for r in d.rows], d.shortfalls, d.skipped
        ([(1, 6)], [], {'labelled_or_on_another_worksheet': 1})
    """
    fresh = [c for c in candidates if (c.transcript_id, c.turn) not in taken]
    rows = fresh[:budget]
    shortfalls = (
        []
        if len(rows) >= budget
        else [{"slot": "retired turns", "budget": budget, "rows": len(rows)}]
    )
    return Draw(
        rows, shortfalls, {"labelled_or_on_another_worksheet": len(candidates) - len(fresh)}
    )


def taken_retirements(corpus: Corpus, schema_name: str) -> set:
    """(transcript, turn) of retired turns already labelled, or already on a worksheet."""
    labelled = RetirementLabel.objects.filter(transcript__corpus=corpus, schema_name=schema_name)
    on_sheets = Retirement.objects.filter(
        rows__worksheet__run__corpus=corpus, rows__worksheet__schema_name=schema_name
    )
    return {(x.transcript_id, x.turn) for x in labelled} | {
        (x.transcript_id, x.turn) for x in on_sheets
    }


def build_retirement_worksheet(
    corpus: Corpus,
    schema_name: str,
    *,
    name: str,
    creator,
    sampling: Sampling,
    reviewers=(),
    adjudicators=(),
    reviews_per_row: int = 1,
) -> Worksheet:
    """A worksheet whose rows are turns a ``compact`` compile retired: up to
    ``per_slot_budget`` of them, shuffled with the seed (file order without one), skipping
    turns already labelled or waiting on another worksheet."""
    compile_run = compile_corpus(corpus, schema_name)
    total, window = _window(corpus, sampling)
    candidates = [r for r in stored_retirements(compile_run) if r.transcript.position < window]
    _shuffle(candidates, sampling)
    result = draw_retirements(
        candidates, sampling.per_slot_budget, taken_retirements(corpus, schema_name)
    )

    def row(worksheet: Worksheet, position: int, retirement) -> WorksheetRow:
        return WorksheetRow(worksheet=worksheet, retirement=retirement, position=position)

    drawn = Drawn(compile_run, schema_name, sampling, total, window, len(candidates), result)
    members = (reviewers, adjudicators, reviews_per_row)
    return _store(
        drawn,
        row,
        members,
        {},
        name=name,
        created_by=creator,
        kind=WorksheetKind.RETIREMENT,
        rule=RETIREMENT_RULE,
    )


@dataclass(frozen=True)
class Drawn:
    """A sample drawn for a worksheet, with what the worksheet records of how: the run,
    the transcripts read (``window`` of ``total``), how many candidates there were, and
    the draw (its rows, shortfalls and skips)."""

    run: CompileRun
    schema_name: str
    sampling: Sampling
    total: int
    window: int
    candidates: int
    result: Draw


def _window(corpus: Corpus, sampling: Sampling) -> tuple[int, int]:
    """The corpus's transcripts, and how many of them the sample reads."""
    total = corpus.transcripts.count()
    return total, total if sampling.limit is None else min(sampling.limit, total)


def _shuffle(candidates: list, sampling: Sampling) -> None:
    """The candidates in the seed's order (as stored, without a seed)."""
    if sampling.seed is not None:
        random.Random(sampling.seed).shuffle(candidates)


def _store(drawn: Drawn, row, members, figures: dict, **fields) -> Worksheet:
    """The worksheet, its rows (``row(worksheet, position, drawn)`` each) and its members
    (reviewers, adjudicators, reviews per row), in one transaction; ``figures`` adds to
    what ``sampling`` records, ``fields`` to the worksheet's own (its name, its kind)."""
    sampling, result = drawn.sampling, drawn.result
    for shortfall in result.shortfalls:
        shortfall["reason"] = explain(shortfall, drawn.window, drawn.total)
    reviewers, adjudicators, reviews_per_row = members
    recorded = {
        "limit": sampling.limit,
        "window": drawn.window,
        "transcripts": drawn.total,
        "seed": sampling.seed,
        **figures,
        "candidates": drawn.candidates,
        **result.skipped,
    }
    with transaction.atomic():
        worksheet = Worksheet.objects.create(
            run=drawn.run,
            schema_name=drawn.schema_name,
            schema_digest=drawn.run.schema_digest,
            per_slot_budget=sampling.per_slot_budget,
            reviews_per_row=reviews_per_row,
            sampling=recorded,
            shortfalls=result.shortfalls,
            **fields,
        )
        WorksheetRow.objects.bulk_create(
            row(worksheet, position, item) for position, item in enumerate(result.rows, start=1)
        )
        add_members(worksheet, reviewers, MemberRole.REVIEWER)
        add_members(worksheet, adjudicators, MemberRole.ADJUDICATOR)
    return worksheet

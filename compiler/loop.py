"""``compact`` in an agent loop: the compiled prefix only grows between priced checkpoints.

A loop sends its whole history again on every call, and the provider bills the part of
a prompt that repeats the previous prompt from its first token at a cached rate r of
the input price. A one-off ``compact`` compile rewrites its early part whenever a fact
changes (the header opens the system message), a turn retires, a read goes stale or a
payload leaves the recent ones: every such change bills the rest of the prompt at the
full rate again. Replayed call by call on the dev corpora that cost up to 2.5 times the
raw history's bill. Given the provider's rate (the option ``cached_rate``), ``compact``
compiles for the loop instead:

* A *call point* is where the loop called the model: before each assistant message of
  the history, and the end of the history (the call being compiled). A *checkpoint* is
  a call point c where ``compact``'s decisions about the history up to c are taken:
  the turns it retires, the payloads it cuts (shapes, stale-read notices, repeats).
  They then hold, frozen, until the next checkpoint; every payload after c, and any
  before it that ``compact`` leaves as read, is shown as first seen (``cache_friendly``'s
  lossless re-encodings and repeat cuts, decided from the history before the payload
  alone).
* The state goes where it breaks nothing: in ``cache_friendly``'s state notes, one at
  each call point whose lines changed, the first holding the whole register, the
  rules and the taught protocol (``emit_loop``). A note depends on the history up
  to its call point only, so it is the same in every later prompt; the system prompt
  is never touched, and a checkpoint breaks the cached prefix only from the first
  message whose form it changes. So each prompt is a byte prefix of the next until the
  next checkpoint; before the first checkpoint the prompt is ``cache_friendly``'s.
* Which call points are checkpoints is a function of the history alone, decided call
  point by call point in order (``LoopCheckpoints.decide``), so the stateless API, the
  proxy and a resumed incremental compile find the same ones with nothing stored.

When a checkpoint pays. In units of one uncached input token, at call point q, with X
the prompt kept as it is (the decisions of the last checkpoint), Y the prompt with
``compact``'s decisions about the history up to q, and m the part of Y that opens the
prompt as kept (characters stand for tokens: the rule compares counts of the same
text):

* taking it bills the P = Y − m tokens after the first change at the full rate instead
  of r, once: (1 − r)·P;
* every call it is put off bills the X − Y tokens that a checkpoint there would have
  cut, at r (they are in the cached prefix).

The calls still to come are unknown, and must not be guessed from anything but the
history. The rule is rent or buy: keep paying the rent — r·(X − Y) at each call point
since the last checkpoint — until what it has come to exceeds the price of buying:

    r · Σ (X_q' − Y_q') > (1 − r) · P,   q' the call points after the last checkpoint, q included

Whatever the loop's length, this costs at most about twice what the best choice made
knowing the length costs, and a loop that ends just after a change never pays for a
break it could not earn back. (``compact.checkpoints`` derives the same rule for
``cache_friendly``'s cuts; a checkpoint that pays at some rate pays at every higher one.)

One guard on top: the bill so far, priced as the provider prices it (each prompt
against the one before it, characters for tokens), never goes above the raw
history's. A checkpoint is taken only if, after paying for it, what every call so far
has cost is still at most what sending the raw history would have cost: a break is
paid from savings already made, never from savings hoped for.

Without ``cached_rate`` nothing here runs: a one-off ``compact`` compile is what it
always was (its header at the head of the prompt), the fewest tokens now.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from compiler.compact.checkpoints import pays, size
from compiler.frozen import build
from compiler.layout.emit import (  # (the notes, payloads and recall as emit writes them)
    Emitted,
    Recall,
    StateLines,
    _recall_text,
    _replaced,
    invariant_lines,
    keyed_state_lines,
)
from compiler.layout.notes import Notes
from compiler.layout.recall import recall as find_recall
from compiler.read import Message, with_content


@dataclass(frozen=True)
class Decisions:
    """``compact``'s decisions about the history up to call point ``at``: the turns it
    retires (``retired``, and their indices ``gone``) and the payloads it cuts."""

    at: int = 0
    retired: tuple = ()
    gone: frozenset[int] = frozenset()
    cuts: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Choice:
    """What ``LoopCheckpoints.decide`` chose at the call point ``end``: the decisions in
    force (a checkpoint's, where ``take``), each payload as then shown, the call point's
    state lines, and the figures the rule carries to the next call point."""

    end: int
    lines: StateLines
    decisions: Decisions
    shown: dict
    take: bool
    raw: int  # the raw history's characters
    sent: int  # the prompt's characters
    raw_cost: float  # what the call costs the raw history, and this prompt
    cost: float
    excess: float  # Σ(X − Y) since the last checkpoint, this call point's included


def shown(decisions: Decisions, first_seen: dict, pointed: dict) -> dict:
    """Each payload as a loop's prompt shows it under ``decisions``: cut where they cut
    it, else as first seen. A first-seen file view whose lines point at a view cut or
    retired there is shown as read: what the pointer stands for is gone.

    Example:
        >>> cut = Decisions(4, (), frozenset({1}), {2: "cut"})
        >>> sorted(shown(cut, {1: "a", 2: "b", 3: "c", 5: "d"}, {5: [2]}).items())
        [(2, 'cut'), (3, 'c')]
    """
    gone, cuts = decisions.gone, decisions.cuts

    def lost(view: int) -> bool:
        return view < decisions.at and (view in cuts or view in gone)

    found = {}
    for index, result in first_seen.items():
        if index in gone or index in cuts:
            continue
        if any(lost(view) for view in pointed.get(index, ())):
            continue
        found[index] = result
    found.update(cuts)
    return found


class LoopCheckpoints:
    """The checkpoints of one history so far, and what the rule reads of the calls
    since: settled call point by call point, in order, so that a resumed copy gives what
    a run from the start gives."""

    def __init__(self, cached_rate: float):
        self.cached_rate = cached_rate
        self.frozen = Decisions()  # the decisions of the last checkpoint
        self.points: list[tuple[int, StateLines]] = []  # every call point and its lines
        self.taken: list[int] = []  # the call points that were checkpoints
        self.excess = 0  # Σ(X − Y) since the last checkpoint: the rent is r times it
        self.ledger = 0.0  # what the raw history's calls cost so far, less ours
        self.sent = 0  # the characters of the last prompt
        self.raw = 0  # the raw history's characters up to the last call point
        self.raw_sizes = [0]  # characters of the raw history before each message
        self.pending: Choice | None = None  # the end of the history, as last finished
        # the notes of ``points`` read so far, bare (for the rule's sizes) and as the
        # prompt writes them (with the rules and the instruction of ``key``): a longer
        # history's call reads only its new points
        self.bare = Notes([], "")
        self.written: Notes | None = None
        self.key = None

    def copy(self) -> LoopCheckpoints:
        twin = LoopCheckpoints.__new__(LoopCheckpoints)
        twin.__dict__.update(self.__dict__)
        twin.points, twin.taken = list(self.points), list(self.taken)
        twin.raw_sizes = list(self.raw_sizes)
        return twin

    def decide(self, clean, lines: StateLines, now: Decisions, first_seen, pointed) -> Choice:
        """The choice at the call point that ends ``clean`` (its state lines ``lines``):
        the decisions of the last checkpoint kept, or ``compact``'s there (``now``) taken
        (see the module's docstring). ``keep`` records it."""
        rate, end = self.cached_rate, len(clean)
        for message in clean[len(self.raw_sizes) - 1 :]:
            self.raw_sizes.append(self.raw_sizes[-1] + size(message))
        self.bare = self.bare.read_on(self.points)
        notes = [(i, len(text)) for i, text in _with_end(self.bare, end, lines)]
        frozen = self.frozen
        kept_shown = shown(frozen, first_seen, pointed)
        kept_texts = _texts(kept_shown)
        kept_sizes = self._sizes(clean, frozen.gone, kept_texts)
        stay = sum(kept_sizes) + sum(chars for _, chars in notes)
        raw = self.raw_sizes[end]
        raw_cost = rate * self.raw + (raw - self.raw)
        stay_cost = rate * min(self.sent, stay) + (stay - min(self.sent, stay))
        choice = Choice(
            end, lines, frozen, kept_shown, False, raw, stay, raw_cost, stay_cost, self.excess
        )
        now_shown = shown(now, first_seen, pointed)
        now_texts = _texts(now_shown)
        if now.gone == frozen.gone and now_texts == kept_texts:  # (nothing shown changes)
            return choice
        sizes = self._sizes(clean, now.gone, now_texts)
        buy = stay - sum(kept_sizes) + sum(sizes)
        changed = (frozen.gone ^ now.gone).union(
            i for i in kept_texts.keys() | now_texts.keys() if kept_texts.get(i) != now_texts.get(i)
        )
        first = min(changed)  # the first message the two prompts show otherwise
        before = sum(kept_sizes[:first]) + sum(chars for i, chars in notes if i <= first)
        same = min(before, self.sent)  # m: what opens both prompts, as far as was sent
        excess = self.excess + stay - buy
        buy_cost = rate * same + (buy - same)
        if pays(excess, buy - same, rate) and self.ledger + raw_cost - buy_cost >= 0:
            return Choice(end, lines, now, now_shown, True, raw, buy, raw_cost, buy_cost, 0)
        return Choice(end, lines, frozen, kept_shown, False, raw, stay, raw_cost, stay_cost, excess)

    def _sizes(self, clean, gone, texts: dict) -> list[int]:
        """Each message's characters as a prompt shows it: none where retired, its text as
        ``texts`` gives it, and its calls."""
        raw = self.raw_sizes
        found = []
        for index, message in enumerate(clean):
            if index in gone:
                found.append(0)
            elif index in texts:
                calls = raw[index + 1] - raw[index] - len(message.text)
                found.append(len(texts[index]) + calls)
            else:
                found.append(raw[index + 1] - raw[index])
        return found

    def keep(self, choice: Choice) -> None:
        """Record the choice ``decide`` made."""
        self.points.append((choice.end, choice.lines))
        if choice.take:
            self.frozen = choice.decisions
            self.taken.append(choice.end)
        self.excess, self.ledger = choice.excess, self.ledger + choice.raw_cost - choice.cost
        self.sent, self.raw = choice.sent, choice.raw
        self.pending = None

    def compile(self, made, options, pointed: dict) -> Emitted:
        """The prompt at the end of the history of ``made`` (a fold's ``Made``, the
        one-off ``compact`` compile's parts): the decisions of the last checkpoint, or of
        this one, and the state in notes. The choice is kept for the call point the next
        message makes of the end, if it is an assistant's; ``made`` is left holding what
        the prompt shows (retired turns, payloads, a recall)."""
        choice = self.pending = self.decide_at(made, made.first_seen, pointed)
        decisions = choice.decisions
        made.retired, made.gone, made.compacted = decisions.retired, decisions.gone, choice.shown
        shown = None
        if options.recall_query is not None:
            gone = tuple(sorted(made.gone))
            made.recall = shown = find_recall(options.recall_query, made.clean, gone)
            if shown is not None and made.number is not None:
                shown = replace(shown, turn=made.number(shown.turn))
        plan = made.plan
        built = {i: plan.replacement(i, c) for i, c in choice.shown.items()}
        rules = invariant_lines(options.invariants)
        key = (tuple(rules), made.instruction)
        if self.written is None or key != self.key:
            self.written, self.key = Notes(rules, made.instruction), key
        self.written = self.written.read_on(self.points)
        notes = _with_end(self.written, choice.end, choice.lines)
        return emit_loop(made.clean, decisions.gone, built, notes, shown)

    def decide_at(self, made, first_seen: dict, pointed: dict) -> Choice:
        """``decide`` at the end of the history of ``made``, with ``compact``'s decisions
        there (its ``retired``, ``gone`` and ``compacted``)."""
        now = Decisions(len(made.clean), made.retired, made.gone, made.compacted)
        lines = keyed_state_lines(made.register, made.number)
        return self.decide(made.clean, lines, now, first_seen, pointed)


def emit_loop(
    messages,
    gone: frozenset[int],
    compacted: dict[int, str | Message],
    notes: list[tuple[int, str]],
    recall: Recall | None = None,
) -> Emitted:
    """The messages in order but the retired ones (``gone``), each payload as
    ``compacted`` shows it, and the state notes (index, text) as ``cache_friendly``
    writes them at its call points (``notes._notes``: the first holds the whole register,
    the rules and the instruction), each before the message of its index; a note whose
    message is retired goes before the next one kept. The system prompt is never
    touched. A recall goes at the end of the last message, a user turn, as ``compact``
    places it.
    """
    out: list[Message] = []
    origins: list[int | None] = []
    at = 0
    for index, message in enumerate(messages):
        while at < len(notes) and notes[at][0] <= index:
            out.append(Message("system", notes[at][1]))
            origins.append(None)
            at += 1
        if index in gone:
            continue
        out.append(_replaced(message, compacted[index]) if index in compacted else message)
        origins.append(index)
    for _, note in notes[at:]:
        out.append(Message("system", note))
        origins.append(None)
    placed = False
    if recall is not None and out and out[-1].role == "user":
        out[-1] = with_content(out[-1], out[-1].text + "\n\n" + _recall_text(recall))
        placed = True
    return build(Emitted, messages=tuple(out), origins=tuple(origins), recall_placed=placed)


def _with_end(notes: Notes, end: int, lines: StateLines) -> list[tuple[int, str]]:
    """(index, text) of each state note: those ``notes`` placed, and the one the call
    point ``end`` (its state lines ``lines``) takes, if any (``notes._notes`` over the
    points read and this one)."""
    last = notes.note(end, lines)
    return notes.placed if last is None else [*notes.placed, last]


def _texts(compacted: dict) -> dict[int, str]:
    return {index: result.text for index, result in compacted.items()}

"""Checkpoints: the calls at which a ``cache_friendly`` compile cuts old tool payloads.

An agent loop re-sends its whole history on every call, and the provider bills the part
of a prompt that repeats the previous prompt from its first token at a cached rate r of
the input price. ``cache_friendly`` keeps that prefix byte-stable; a lossy cut of an old
payload breaks it. A cut pays only when what it saves on the calls after it outweighs
what the broken prefix costs once. In units of one uncached input token:

* a cut at a call breaks the prefix at the first payload it changes: the P tokens from
  there to the end of the prompt are billed at the full rate instead of r, once:
  (1 − r)·P, with P counted after the cut;
* a payload cut by s tokens was billed s at r on this call and would be on every later
  call: the cut saves r·s on this call and on each of the L calls after it, r·s·(L + 1).

So a cut pays when r·Σ s·(L + 1) > (1 − r)·P. L is unknown when the loop calls, and must
come from the history alone, so that the stateless API and a proxy find the same
checkpoints with nothing stored. Two estimates come to mind:

* the calls made so far (a loop seen at a random moment of its life is as likely to run
  longer than it has as shorter). It makes a long loop cut every payload as soon as it
  leaves the recent calls, when P is largest, and a loop that ends a call or two later
  pays the break for nothing: on SWE-agent runs of 11 to 14 calls it cuts at the last
  calls and the bill rises above the raw history's;
* per payload, the calls since it could first be cut (it left the recent calls). That
  is the break-even rule of rent or buy: keep paying the cached rate for an old payload
  until what it has cost since it could have been cut reaches what cutting costs, then
  cut. Whatever the loop's length, a payload so handled costs at most twice what the
  best choice made knowing that length costs, and a payload that has only just become
  old is never cut at the end of a loop.

The second is the rule here, at each call point c of the history::

    r · Σ s_i · (L_i + 1) > (1 − r) · P
    L_i: the call points before c since payload i left the last RECENT_CALLS calls

Every quantity is a function of the history up to c (characters stand for tokens: the
rule compares two counts of the same text, so the ratio is what matters). The rate is
the option ``cached_rate``; without it (the default) no checkpoint is looked for and
no payload is cut. Looking costs a ``compact`` cut of every old payload a rule's bound
lets through, about a third to a half again of a ``cache_friendly`` compile's time on
the dev corpora, and at 0.1, the lowest rate a major provider bills, no cut paid on any
of them; so a caller who knows its provider's rate names it. A checkpoint that pays at
some rate pays at every higher one (r / (1 − r) grows with r). Anthropic's writes
cost 1.25, so a break there costs (1.25 − r)·P rather than (1 − r)·P;
``tests/bench/billed.py`` measures that column too.

What is cut, and what stays:

* The payloads the agent answered in its last ``RECENT_CALLS`` turns, and those it has
  not answered yet, stay whole: they are what it is acting on. The older ones not
  settled yet (from the *frontier* on) are the candidates.
* A candidate is cut as ``compact`` mode cuts a payload, from the history up to the
  checkpoint alone: a read that a later one replaced becomes its notice (safety lines
  kept), else its shape's compaction (safety rows kept, omissions counted in the text),
  whichever is shorter; SWE-agent's advice to review an edit becomes a marker when a
  later payload repeats it. Every identifier of the payload that the cut text no longer
  holds (nor, for a notice, the read that replaced it) is listed on a last line, so an
  id the agent uses later is still in front of it.
* A file view that a later payload's first sight points at (``view_repeats``) is never
  a candidate from that payload on: what the pointer stands for stays in front of the
  model. With checkpoints (a ``cached_rate``) the pointer is written only to a view no
  checkpoint before it can have cut; with none, nothing is ever cut, so to any view.
* At a checkpoint every candidate is settled: cut where that is shorter, else kept as
  it is, and the frontier moves past them. A settled payload never changes again, so
  between checkpoints each compile starts with the compile before it, byte for byte.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from compiler.compact.compact import (
    Compacted,
    compact,
    has_review_checklist,
    omit_review_checklist,
)
from compiler.compact.repeats import Repeat
from compiler.compact.stale import elide, elide_record, replaced_reads
from compiler.read import Message
from compiler.state import Kind

DEFAULT_CACHED_RATE = None  # no checkpoints unless the caller names its rate
# the payloads of the agent's last three turns stay whole (as many as observation
# masking's usual setting keeps)
RECENT_CALLS = 3
# a run of letters, digits and underscores holding a digit, four characters or more (as
# the identifier-retention measure counts one)
_IDENTIFIER = re.compile(r"(?<![\w#])#?[A-Za-z0-9_]*\d[A-Za-z0-9_]*(?:\.\d+)?")
_JSON_ARRAY = re.compile(r'\s*\[\s*[\[{"\]\d-]')
IDS_NOTE = "(identifiers in what was cut: {})"


def pays(saved_calls: int, broken: int, cached_rate: float) -> bool:
    """Whether a cut pays: ``saved_calls`` is Σ S·(L + 1) over the payloads it cuts (the
    tokens each saves, times the calls it is estimated to save them on), ``broken`` the
    tokens P from the first payload it changes to the prompt's end:
    r·Σ S·(L + 1) > (1 − r)·P.

    Example:
        >>> pays(saved_calls=1000 * 45, broken=5000, cached_rate=0.1)  # 4500 > 4500
        False
        >>> pays(saved_calls=1000 * 46, broken=5000, cached_rate=0.1)  # 4600 > 4500
        True
        >>> pays(saved_calls=1000 * 5, broken=5000, cached_rate=0.5)  # 2500 > 2500
        False
        >>> pays(saved_calls=1000 * 6, broken=5000, cached_rate=0.5)
        True
        >>> pays(saved_calls=10**9, broken=1, cached_rate=0.0)  # nothing cached: no saving
        False
        >>> pays(saved_calls=1, broken=10**9, cached_rate=1.0)  # nothing discounted: no cost
        True
    """
    return cached_rate * saved_calls > (1 - cached_rate) * broken


def identifiers(text: str) -> list[str]:
    """The identifiers of ``text``, each once, in order.

    Example:
        >>> identifiers("order #W4923227, card 4336, flight HAT136, line 12, #W4923227")
        ['#W4923227', '4336', 'HAT136']
    """
    found = (match.group(0) for match in _IDENTIFIER.finditer(text))
    return list(dict.fromkeys(word for word in found if len(word) >= 4))


@dataclass(frozen=True)
class History:
    """What a checkpoint reads of the history: the messages as read, their kinds and read
    keys, the payloads shown otherwise than as read before any cut (first sight), the
    turn number the caller counts, and the JSON texts decoded so far."""

    messages: Sequence[Message]
    kinds: Sequence[Kind]
    read_keys: Sequence[tuple]
    shown: dict[int, Compacted]
    number: Callable[[int], int]
    memo: dict
    # each file view a first-sight pointer points at, and the first payload pointing at it
    pointed: dict = field(default_factory=dict)


def size(message: Message, shown: Compacted | None = None) -> int:
    """A message's characters as the model reads them: its text (as shown) and its calls.

    Example:
        >>> size(Message("tool", "0123456789")), size(Message("assistant", "ok"))
        (10, 2)
    """
    text = shown.text if shown is not None else message.text
    return len(text) + sum(
        len(c.name or "") + len(str(c.arguments or "")) for c in message.tool_calls
    )


class Checkpoints:
    """The checkpoints of one history so far and the cuts they settled; settled call
    point by call point, in order, so that resuming a copy gives what a run from the
    start gives."""

    def __init__(self, cached_rate: float | None = DEFAULT_CACHED_RATE):
        self.cached_rate = cached_rate
        self.frontier = 0  # the payloads before it are settled
        self.cuts: dict[int, Compacted] = {}
        self.taken: list[int] = []  # the call points that were checkpoints
        self.settled = 0  # how many call points are decided
        # per message read so far: characters before it (``size``, before any cut); the
        # payloads a checkpoint may cut, and those that advise reviewing an edit, in order
        self.before: list[int] = [0]
        self.payloads: list[int] = []
        self.advising: list[int] = []
        self.shaped: dict[int, Compacted] = {}  # a payload's shape compaction
        self.words: dict[int, list[str]] = {}  # a message's identifiers
        self.made: dict[tuple, Compacted | None] = {}  # a payload's cut, by what it depends on
        self.last: tuple = ()  # the last decision at the end of a history: (point, frontier, cuts)

    def copy(self) -> Checkpoints:
        if self.cached_rate is None:  # nothing is ever decided or cut: one may be shared
            return self
        twin = Checkpoints.__new__(Checkpoints)
        twin.__dict__.update(self.__dict__)
        twin.cuts, twin.taken, twin.made = dict(self.cuts), list(self.taken), dict(self.made)
        twin.shaped, twin.words = dict(self.shaped), dict(self.words)
        twin.before, twin.payloads = list(self.before), list(self.payloads)
        twin.advising = list(self.advising)
        return twin

    def cut(self, fold, made, shown: dict[int, Compacted]) -> dict[int, Compacted]:
        """The payloads of a ``Fold`` being finished (``made``, its ``Made``) as first seen
        (``shown``), the old ones as the checkpoints up to the end cut them; as first
        seen where no ``cached_rate`` was given."""
        if self.cached_rate is None:
            return shown
        decoded = fold.memo.decoded if made.remember else {}  # (a one-off compile's: none)
        pointed = made.plan.pointed
        history = History(
            made.clean, made.kinds, fold.read_keys, shown, fold.number, decoded, pointed
        )
        cuts = self.settle(history, [turn for turn, _ in fold.points])
        return {**shown, **cuts} if cuts else shown

    def settle(self, history: History, points: Sequence[int]) -> dict[int, Compacted]:
        """Decide every call point of ``points`` (each the index of the message a call
        came before, in order) not decided yet, then the end of the history, which is
        not kept (the next message may not be a call); the cuts in force at the end."""
        self._read(history)
        replaced: list = []  # the replaced reads, found when first asked for (``_worth``)
        for at in range(self.settled, len(points)):
            self._decide(history, points, at, replaced, keep=True)
        self.settled = len(points)
        extra = self._decide(history, (*points, len(history.messages)), len(points), replaced)
        return {**self.cuts, **extra} if extra else self.cuts

    def _read(self, history: History) -> None:
        """The per-message figures of the messages not read yet."""
        messages, kinds, shown = history.messages, history.kinds, history.shown
        for index in range(len(self.before) - 1, len(messages)):
            message = messages[index]
            self.before.append(self.before[-1] + size(message, shown.get(index)))
            if kinds[index] is Kind.MACHINE and message.role != "assistant" and message.content:
                self.payloads.append(index)
                if has_review_checklist(message.content):
                    self.advising.append(index)

    def _decide(self, history, points, at: int, replaced: list, keep: bool = False) -> dict:
        """The cuts a checkpoint at ``points[at]`` makes, or none where it does not pay."""
        point = points[at]
        if at < RECENT_CALLS:
            return {}
        if self.last[:2] == (point, self.frontier):  # decided at the end of a shorter history
            cuts = self.last[2]
        else:
            cuts = self._worth(history, points, at, replaced)
            self.last = (point, self.frontier, cuts)
        if keep and cuts:
            self.cuts.update(cuts)
            self.frontier = points[at - RECENT_CALLS]
            self.taken.append(point)
        return cuts

    def _worth(self, history, points, at: int, replaced: list) -> dict:
        """The cuts at ``points[at]`` where they pay (``pays``), else none."""
        point, boundary = points[at], points[at - RECENT_CALLS]  # after it: kept whole
        payloads, before, rate = self.payloads, self.before, self.cached_rate
        candidates = payloads[
            bisect_left(payloads, self.frontier) : bisect_left(payloads, boundary)
        ]
        if history.pointed:  # a view a payload before this point points at stays whole
            pointed = history.pointed
            candidates = [i for i in candidates if pointed.get(i, point) >= point]
        if not candidates:
            return {}
        # each candidate's calls: this one and those since it could first be cut
        calls = {index: at - bisect_right(points, index) - RECENT_CALLS + 1 for index in candidates}
        most = sum((before[i + 1] - before[i]) * calls[i] for i in candidates)
        if not pays(most, before[point] - before[boundary], rate):
            return {}  # not even cutting them all away would pay
        if not replaced:
            replaced.append(replaced_reads(list(history.read_keys)))
        cuts = self._cuts(history, candidates, point, replaced[0])
        if not cuts:
            return {}
        saved = {i: before[i + 1] - before[i] - len(cut.text) for i, cut in cuts.items()}
        broken = before[point] - before[min(cuts)] - sum(saved.values())
        if not pays(sum(saved[i] * calls[i] for i in cuts), broken, rate):
            return {}
        return cuts

    def _cuts(self, history: History, candidates: list[int], point: int, replaced) -> dict:
        """Each candidate's cut as of a checkpoint at ``point``, where it is shorter: a read
        replaced before ``point`` as its notice, the advice to review an edit as a marker
        where one before ``point`` repeats it."""
        advising = self.advising
        latest = advising[bisect_left(advising, point) - 1] if advising else -1
        found = {}
        for index in candidates:
            entry = replaced.get(index)
            entry = entry if entry is not None and entry[1] < point else None
            key = (index, entry, index < latest)
            if key not in self.made:
                self.made[key] = self._cut(history, index, entry, index < latest)
            cut = self.made[key]
            if cut is not None and len(cut.text) < self.before[index + 1] - self.before[index]:
                found[index] = cut
        return found

    def _cut(self, history: History, index: int, entry, advised_later: bool):
        """One payload cut as ``compact`` mode cuts it (see the module's docstring)."""
        message = history.messages[index]
        text = message.content
        result = self.shaped.get(index)
        if result is None:  # its shape's compaction, whatever the history after it
            shown = history.shown.get(index)
            # status lines dropped at first sight stay dropped; a lossless re-encoding is
            # no payload shape, so the original is shaped
            base = shown.text if shown is not None and shown.shape == Repeat.STATUS.value else text
            result = self.shaped[index] = compact(base, tool_name=message.name, memo=history.memo)
        words = self._identifiers(history, index)
        known = set(words)
        if entry is not None:
            key, later = entry
            notice = _notice(history, index, key, later)
            if notice.changed and (not result.changed or len(notice.text) < len(result.text)):
                result = notice
                known.difference_update(self._identifiers(history, later))
        if advised_later:
            without = omit_review_checklist(result.text)
            if without is not None:
                result = replace(result, text=without, changed=True)
        if not result.changed:
            return None
        kept = set(identifiers(result.text)) if known else known
        lost = [word for word in words if word in known and word not in kept]
        if lost:
            result = replace(result, text=result.text + "\n" + IDS_NOTE.format(" ".join(lost)))
        return replace(result, original_chars=len(text), compacted_chars=len(result.text))

    def _identifiers(self, history: History, index: int) -> list[str]:
        """``identifiers`` of a message as read, once per message."""
        known = self.words.get(index)
        if known is None:
            known = self.words[index] = identifiers(history.messages[index].text)
        return known


def _notice(history: History, index: int, key: str, later: int) -> Compacted:
    """A read that a later one replaced, as its notice (as ``compact`` mode writes it)."""
    text = history.messages[index].content
    shown = history.number(later)
    if key.startswith("record ") or _JSON_ARRAY.match(text):
        later_text = history.messages[later].content
        return elide_record(text, later_text, replaced_by=shown, key=key, memo=history.memo)
    window = _partly_shown(history.read_keys, index, later, key)
    return elide(text, replaced_by=shown, key=key, window=window)


def _partly_shown(read_keys, index: int, later: int, key: str):
    """The later file view's window when it leaves out lines of this one's, else None."""
    if not key.startswith("file "):
        return None
    window, earlier = dict(read_keys[later]).get(key), dict(read_keys[index])[key]
    covered = window.first <= earlier.first and earlier.last <= window.last
    return None if covered or earlier.preview or not earlier.last else window

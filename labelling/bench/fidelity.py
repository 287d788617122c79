"""Did the compiled context keep what the agent went on to use?

Token reduction alone rewards a compiler for cutting what the agent still needs. This
figure checks the other side. At every assistant turn that uses an identifier (in its
words or in its tool-call arguments) which it can only have learned from a tool payload —
the identifier appears in some payload before the turn and in no user or system turn
before it — the history before that turn is compiled, as an agent loop compiles it for
that very call, and the identifier is looked for in the compiled messages. Recall is
found / looked for, over every such (turn, identifier) pair.

A payload is a ``tool`` turn, or a ``user`` turn whose text a tool wrote: SWE-agent and
similar harnesses file every observation under ``user``, and counting those as things
the user said left the coding corpora with almost nothing to probe. Whether text was
written by a tool is ``compiler.classify.looks_like_machine_output``, the same test for
both libraries. An identifier counts as kept only as a whole identifier of the compiled
text, so ``4336`` is not found in ``43360``.

An identifier is a run of letters, digits and underscores (with an optional leading
``#``) that holds a digit and is at least four characters long: order and reservation
numbers, item ids, card endings, flight numbers, prices. Words without a digit are left
out: they are too often said by the user as well.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from compiler import content_text, looks_like_machine_output

_IDENTIFIER = re.compile(r"(?<![\w#])#?[A-Za-z0-9_]*\d[A-Za-z0-9_]*(?:\.\d+)?")
MIN_CHARS = 4


def identifiers(text: str | None) -> set[str]:
    """The identifiers in ``text``.

    Example:
        >>> sorted(identifiers("Order #W4923227, card ending 4336, flight HAT136 on day 20."))
        ['#W4923227', '4336', 'HAT136']
        >>> sorted(identifiers('{"item_id": "6452271382", "price": 258.84}'))
        ['258.84', '6452271382']
    """
    found = (match.group(0) for match in _IDENTIFIER.finditer(text or ""))
    return {word for word in found if len(word) >= MIN_CHARS}


def used_by(message: dict) -> set[str]:
    """What an assistant turn uses: identifiers in its text and its tool-call arguments."""
    if message.get("role") != "assistant":
        return set()
    used = identifiers(content_text(message.get("content")))
    for call in message.get("tool_calls") or ():
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict):
            used |= identifiers(str(function.get("arguments") or ""))
    return used


@dataclass(frozen=True)
class Probe:
    """One assistant turn: the history before it, and what it used from payloads."""

    turn: int
    history: list[dict]
    wanted: frozenset[str]


def probes(messages: list[dict]) -> list[Probe]:
    """Every turn that uses an identifier only a payload before it had given.

    Example:
        >>> history = [
        ...     {"role": "user", "content": "Where is order #W1234?"},
        ...     {"role": "tool", "content": '{"order_id": "#W1234", "item_id": "5550001"}'},
        ...     {"role": "assistant", "content": "Order #W1234 holds item 5550001."},
        ... ]
        >>> [(p.turn, sorted(p.wanted)) for p in probes(history)]
        [(2, ['5550001'])]
        >>> history[1]["role"] = "user"  # a harness that files observations as user turns
        >>> [(p.turn, sorted(p.wanted)) for p in probes(history)]
        [(2, ['5550001'])]
    """
    learned: set[str] = set()
    said: set[str] = set()
    found = []
    for turn, message in enumerate(messages):
        wanted = (used_by(message) & learned) - said
        if wanted:
            found.append(Probe(turn, messages[:turn], frozenset(wanted)))
        role = message.get("role")
        if role not in ("tool", "user", "system"):
            continue
        text = content_text(message.get("content"))
        if role == "tool" or (role == "user" and looks_like_machine_output(text)):
            learned |= identifiers(text)
        else:
            said |= identifiers(text)
    return found


@dataclass
class Recall:
    turns: int = 0
    wanted: int = 0
    kept: int = 0

    @property
    def rate(self) -> float | None:
        return round(self.kept / self.wanted, 6) if self.wanted else None

    def figures(self) -> dict:
        """The counts and the rate, as a report holds them."""
        return {"turns": self.turns, "wanted": self.wanted, "kept": self.kept, "rate": self.rate}


def identifier_recall(
    compile_messages: Callable[[list[dict]], tuple[list[dict], dict]],
    transcripts: Iterable[list[dict]],
) -> Recall:
    """Compile each probe's history with ``compile_messages``; count what survived.

    Example:
        >>> history = [
        ...     {"role": "user", "content": "Where is order #W1234?"},
        ...     {"role": "tool", "content": '{"order_id": "#W1234", "item_id": "5550001"}'},
        ...     {"role": "assistant", "content": "Order #W1234 holds item 5550001."},
        ... ]
        >>> keep_all = lambda messages: (messages, {})
        >>> drop_tools = lambda messages: ([m for m in messages if m["role"] != "tool"], {})
        >>> identifier_recall(keep_all, [history]), identifier_recall(drop_tools, [history])
        (Recall(turns=1, wanted=1, kept=1), Recall(turns=1, wanted=1, kept=0))
    """
    recall = Recall()
    for messages in transcripts:
        for probe in probes(messages):
            compiled, _ = compile_messages(copy.deepcopy(probe.history))
            visible = identifiers("\n".join(_visible(message) for message in compiled))
            recall.turns += 1
            recall.wanted += len(probe.wanted)
            recall.kept += len(probe.wanted & visible)
    return recall


def _visible(message: dict) -> str:
    """Everything of a message the model reads: its text and its tool calls."""
    calls = message.get("tool_calls")
    return content_text(message.get("content")) + ("\n" + json.dumps(calls) if calls else "")

"""Retired-turn recall: lexical, not semantic.

A query is matched against the text of the turns compaction retired, by
shared words (stop words aside), shared word stems, and whole-phrase
containment. "What did we decide about billing?" will not find a turn that
only says "invoice".
"""

from __future__ import annotations

import re

from compiler.layout.emit import Recall
from compiler.read import Message

MIN_SCORE = 0.2
_WORD = re.compile(r"[a-z0-9]+(?:[_./-][a-z0-9]+)*")
_STOP = frozenset(
    """a an and are as at be but by did do does for from had has have i in is it its me my
    of on or our so that the this to was we were what when where which who will with you
    your about again can could should would please""".split()
)


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP}


def _stem(word: str) -> str:
    return word[:5] if len(word) > 5 else word


def recall(query: str | None, messages: tuple[Message, ...], retired: tuple[int, ...]):
    """The retired turn that best matches ``query``, or None.

    Example:
        >>> msgs = (Message("user", "ship it to the Denver warehouse"), Message("user", "ok"))
        >>> recall("which warehouse?", msgs, (0,)).turn
        0
        >>> recall("refund policy", msgs, (0,)) is None
        True
    """
    if not query or not retired:
        return None
    wanted = _words(query)
    if not wanted:
        return None
    stems = {_stem(w) for w in wanted}
    phrase = " ".join(query.lower().split()).strip(" ?.!")
    best: Recall | None = None
    for turn in retired:
        text = messages[turn].text
        score = _score(text, wanted, stems, phrase)
        if score >= MIN_SCORE and (best is None or score > best.score):
            best = Recall(turn, messages[turn].role, text, round(score, 3))
    return best


def _score(text: str, wanted: set[str], stems: set[str], phrase: str) -> float:
    words = _words(text)
    shared = len(wanted & words) / len(wanted)
    shared_stems = len(stems & {_stem(w) for w in words}) / len(stems)
    bonus = 0.5 if phrase and phrase in " ".join(text.lower().split()) else 0.0
    return 0.7 * shared + 0.3 * shared_stems + bonus

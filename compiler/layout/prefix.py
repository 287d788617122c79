"""How many leading messages of a compiled prompt are the caller's own, unchanged: the
part of the prompt a provider's cache can still hold from the caller's previous call."""

from __future__ import annotations

from compiler.read import Message, message_to_dict
from compiler.read.messages import chat_keys_only


def given_dicts(result) -> tuple[dict | None, ...] | None:
    """Each input message's dict as the caller gave it, less keys no chat API takes (None
    for one read from text), kept in the token memo as ``telemetry._figures`` keeps its figures and
    built for the new messages only; None where no memo outlives the compile. (Never
    handed out: ``prefix_kept`` only compares them.)"""
    memo, original = result.token_memo, result.original
    if memo is None:
        return None
    givens = memo.get(_GIVENS, ())
    if len(givens) > len(original):
        givens = ()
    if len(givens) < len(original):
        givens = memo[_GIVENS] = (*givens, *map(_given, original[len(givens) :]))
    return givens


_GIVENS = "chat-key dicts of the input messages"


def _given(message: Message) -> dict | None:
    return chat_keys_only(dict(message.source)) if message.source else None


def prefix_kept(
    original: tuple[Message, ...],
    emitted: tuple[Message, ...],
    output: list[dict],
    givens: tuple[dict | None, ...] | None = None,
) -> int:
    """Leading output messages equal to what the caller gave, by diffing the dicts: a
    message read from a dict against that dict, so a role written out in another
    spelling ("USER" as "user") ends the prefix. Keys no chat API takes are not compared:
    they are never sent (see ``CHAT_KEYS``). Only a message read from text, and emitted
    as it was read, needs no diff: there is no dict of the caller's to differ."""
    count = 0
    for before, message, after in zip(original, emitted, output, strict=False):
        if givens is not None:
            given = givens[count]
        else:  # (inline: a one-off compile builds each once)
            given = chat_keys_only(dict(before.source)) if before.source else None
        if given is not None and not _equal(given, after):
            break
        if given is None and message is not before and not _equal(message_to_dict(before), after):
            break
        count += 1
    return count


def _equal(a, b) -> bool:
    """``a == b``, also for values nested deeper than the stack left allows (compared
    pair by pair from a list instead of by recursion).

    Example:
        >>> deep, other = [], []
        >>> for _ in range(5000):
        ...     deep, other = [deep], [other]
        >>> _equal(deep, other), _equal(deep, [[1]])
        (True, False)
    """
    try:
        return a == b
    except RecursionError:
        pass
    todo = [(a, b)]
    while todo:
        a, b = todo.pop()
        if isinstance(a, dict) and isinstance(b, dict):
            if a.keys() != b.keys():
                return False
            todo.extend((a[key], b[key]) for key in a)
        elif isinstance(a, list | tuple) and isinstance(b, list | tuple):
            if type(a) is not type(b) or len(a) != len(b):
                return False
            todo.extend(zip(a, b, strict=True))
        elif isinstance(a, dict | list | tuple) or isinstance(b, dict | list | tuple) or a != b:
            return False  # a container against anything else, or two values that differ
    return True

"""Whether a user's turn asks for more than its slot values.

A schema reads a few things out of a request ("upgrade to economy"); the same turn may
ask for others it has no slot for ("change the passenger to myself", "add three checked
bags"). When the slot's value is superseded, the turn still carries those: retiring it
would drop a request nothing answered. A request is a clause led by a verb that asks for
a change (``_ASKS``), in its base form where a request puts it ("changed", "changes" and
"changing" report or describe); it is read when one of the turn's slot values is said
inside it.
"""

from __future__ import annotations

import re

# verbs that ask for a change to a booking, an order or an account, in their base form
# and where a request puts them: at a clause's start or after "to", "please", "you",
# "we", "I", "me" ("help me update", "can we cancel"), not as a noun ("the change", "a
# change fee", "a return flight", "return on May 25")
_ASKS = re.compile(
    r"(?:^|\b(?:to|please|you|we|i|me)\s+)(?:also\s+|just\s+)?"
    r"(?:change|modify|update|switch|upgrade|downgrade|add|remove|cancel|book|rebook"
    r"|return|exchange|refund)\b"
    r"(?!\s+(?:on|fees?|trip|flights?|legs?|dates?|policy|window|option)\b)",
    re.IGNORECASE,
)
# where one request ends and another begins: a sentence's end, a comma, or "and"
_CLAUSE_END = re.compile(r"[.?!;,\n]+|\s+and\s+", re.IGNORECASE)


def _clauses(text: str) -> list[tuple[int, int]]:
    spans, start = [], 0
    for end in _CLAUSE_END.finditer(text):
        spans.append((start, end.start()))
        start = end.end()
    spans.append((start, len(text)))
    return spans


def unread_request(text: str, values: tuple[str, ...]) -> bool:
    """Whether ``text`` asks for a change in a clause that says none of ``values`` (the
    slot values read from it): a request the schema has no slot for.

    Example:
        >>> unread_request("I'd like to change the passenger to myself, upgrade to "
        ...     "economy class, and add three checked bags.", ("economy",))
        True
        >>> unread_request("Please change it to 101 Highway, New York, 10001.",
        ...     ("101 Highway, New York, 10001",))
        False
        >>> unread_request("Yes, let's go with the economy class.", ("economy",))
        False
        >>> unread_request("It can't be changed, and the changes cost $50.", ())
        False
        >>> unread_request("Please proceed with the change. Depart May 2 and return on May 5.",
        ...     ("May 2",))
        False
        >>> unread_request("Can we cancel it and book a new one?", ())
        True
    """
    found = [
        (m.start(), m.end())
        for value in values
        if value
        for m in re.finditer(re.escape(value), text, re.IGNORECASE)
    ]
    for start, end in _clauses(text):
        if not _ASKS.search(text[start:end].strip()):
            continue
        if not any(a < end and b > start for a, b in found):
            return True
    return False


def asks_more(message, turn: int, register) -> bool:
    """Whether ``message``, a user's turn ``turn``, asks for a change none of the slot
    values ``register`` read from it says (``unread_request``); other speakers ask nothing."""
    if message.role != "user":
        return False
    said = tuple(entry.value for entry in register.history if turn in entry.supports)
    return unread_request(message.text, said)

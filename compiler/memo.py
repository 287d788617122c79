"""What a compile builds from a history's messages that a later compile may reuse.

An agent loop compiles the same history again with a turn or two more
(``compiler.incremental``): every result here is keyed by a message's index in the
history (or by its id, while the history holds it) and depends only on what the key
names, so the next compile finds it still true. A one-off compile uses the same object
and drops it at the end.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields


@dataclass(slots=True)
class Memo:
    """The one cache a ``Fold`` carries from compile to compile; ``copy`` before a
    resumed compile changes it.

    Example:
        >>> memo = Memo()
        >>> memo.decoded["[1]"] = [1]
        >>> twin = memo.copy()
        >>> twin.decoded["{}"] = {}
        >>> sorted(memo.decoded), sorted(twin.decoded)
        (['[1]'], ['[1]', '{}'])
    """

    # JSON texts and the value each decodes to: payloads read as a record, compacted,
    # compared (stale.py), and the JSON a compaction wrote (compact_json), so the
    # repeats pass reads it back without decoding it
    decoded: dict[str, object] = field(default_factory=dict)
    # per payload index: its compaction by shape, or (an int) the longest stale-read
    # notice it is known to lose to before it is made
    shaped: dict = field(default_factory=dict)
    # per (payload index, later turn as the caller counts it): its stale-read notice
    elided: dict = field(default_factory=dict)
    # what the repeats pass reads of a payload, by index and with the text read: the
    # JSON it shows, and the result it built
    shown: dict[int, tuple] = field(default_factory=dict)
    repeated: dict[int, tuple] = field(default_factory=dict)
    # what the repeats pass read of a payload's text, by what was asked of which payload:
    # a history compiled again with one more turn asks the same of every earlier one
    read: dict[tuple, tuple] = field(default_factory=dict)
    # cache_friendly: each payload's lossless re-encoding, None where there is none
    encoded: dict = field(default_factory=dict)
    # cache_friendly: per payload index, the earlier file views its lines point at
    pointed: dict = field(default_factory=dict)
    # cache_friendly: per file view's payload index, its lines as first shown (read_view)
    views: dict = field(default_factory=dict)
    # cache_friendly: where the first-sight pass over the payloads stopped, and what it
    # had found (``PayloadPlan.first_sight``), under "at"
    sighted: dict = field(default_factory=dict)
    # per payload index: its compaction result and the message built from it
    replacements: dict[int, tuple] = field(default_factory=dict)
    # token counts and output dicts of messages the history holds, by id (an id is only
    # a key while the history keeps the message alive)
    tokens: dict = field(default_factory=dict)
    dicts: dict = field(default_factory=dict)
    # cache_friendly: the state notes of the call points so far (``emit.Notes``)
    notes: dict = field(default_factory=dict)

    def copy(self) -> Memo:
        return Memo(*(dict(getattr(self, name)) for name in _NAMES))

    def forget_payloads(self) -> None:
        """Empty what only a later compile of the payloads reads again (all but the
        replacement messages and what is keyed on them), for a compile that has no later
        one: so its peak memory does not hold every payload's decoded JSON to the end."""
        for name in _PAYLOADS:
            getattr(self, name).clear()


_NAMES = tuple(spec.name for spec in fields(Memo))
_PAYLOADS = (
    "decoded",
    "shaped",
    "elided",
    "shown",
    "repeated",
    "read",
    "encoded",
    "pointed",
    "views",
)

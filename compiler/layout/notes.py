"""``cache_friendly``'s state notes: which call points take one, and what each says.

A note is placed at a call point only when the register's lines changed since the
previous note (``emit`` says why): the first holds the whole register, the rules and the
taught protocol; later ones what changed (``[STATE_CHANGES]``), or the whole register
again where a slot left it. ``Notes`` reads the points in order and is read on by a
longer history's compile, so a loop's call reads only its new points.
"""

from __future__ import annotations

from compiler.read import Message

REGISTER_MARKER = "[STATE_REGISTER]"
CHANGES_MARKER = "[STATE_CHANGES]"  # a state note holding only what changed since the last
INVARIANTS_MARKER = "[DECLARED_INVARIANTS]"


def render_block(marker: str, lines: list[str]) -> str:
    return "\n".join([marker, *lines]) if lines else ""


def _notes(points, rules, instruction):
    """(index, text) of each state note: the first holds the whole register, the rules
    and the instruction; later ones what changed since the note before (the whole
    register again where a slot left it).

    Example:
        >>> a = ("a", '  - a = "1" (turn 0 [inferred])')
        >>> b = ("b", '  - b = "2" (turn 2 [inferred])')
        >>> for index, text in _notes([(1, (a,)), (3, (a,)), (5, (a, b))], [], ""):
        ...     print(index, text.splitlines())
        1 ['[STATE_REGISTER]', '  - a = "1" (turn 0 [inferred])']
        5 ['[STATE_CHANGES]', '  - b = "2" (turn 2 [inferred])']
        >>> again = ("a", '  - a = "1" (turn 6 [inferred])')  # stated again: no note
        >>> acted = ("a", '  - a = "1" (turn 8 [acted])')  # acted on: no note either
        >>> [index for index, _ in _notes([(1, (a,)), (7, (again,)), (9, (acted,))], [], "")]
        [1]
    """
    return Notes(rules, instruction).read_on(points).placed


class Notes:
    """The state notes of the call points read so far (``_notes``), and what the next
    point's note is written against. A history compiled again with one more turn reads
    only its new points (the fold keeps this in its memo); a ``Notes`` once read on is
    never changed, so two compiles may share it."""

    __slots__ = ("before", "first", "instruction", "messages", "placed", "read", "rules", "shown")

    def __init__(self, rules, instruction):
        self.rules, self.instruction = rules, instruction
        self.read = 0  # points read
        self.placed: list[tuple[int, str]] = []  # (index, text) of each note so far
        self.messages: list[Message] = []  # each note as a message (built once)
        self.shown: dict[str, str] = {}  # slot: its line, as the notes so far leave it
        self.first = True  # no note yet
        self.before = None  # the lines at the point before

    def read_on(self, points) -> Notes:
        """These notes read on to the end of ``points`` (of which the first ``read`` were
        read): itself where there is nothing new, else a new ``Notes``."""
        if len(points) <= self.read:
            return self
        twin = Notes.__new__(Notes)
        for name in Notes.__slots__:
            setattr(twin, name, getattr(self, name))
        twin.placed, twin.messages = list(self.placed), list(self.messages)
        for index, keyed in points[self.read :]:
            note = twin._take(index, keyed)
            if note is not None:
                twin.placed.append(note)
                twin.messages.append(Message("system", note[1]))
        twin.read = len(points)
        return twin

    def note(self, index: int, keyed) -> tuple[int, str] | None:
        """The note a point after those read would take, these notes left as they are."""
        twin = Notes.__new__(Notes)
        for name in Notes.__slots__:
            setattr(twin, name, getattr(self, name))
        return twin._take(index, keyed)

    def _take(self, index: int, keyed) -> tuple[int, str] | None:
        """One more point: its note, if it takes one (``shown`` is replaced, never changed
        in place, so a shallow twin leaves this one's as it was)."""
        if keyed == self.before:  # as at the point before, which its note (or none) settled
            return None
        self.before = keyed
        shown, first, rules, instruction = self.shown, self.first, self.rules, self.instruction
        lines = dict(keyed)
        # a line is new when its value or its marks (pinned, unsure) are: the same fact
        # stated again at a later turn, or by another source (the agent acting on what
        # was said, or declaring it), is what the model reads above already
        changed = [
            (slot, line)
            for slot, line in keyed
            if line != (was := shown.get(slot)) and _unsourced(was) != _unsourced(line)
        ]
        gone = shown.keys() - lines.keys()
        if not changed and not gone and not (first and (rules or instruction)):
            return None
        if first or gone:
            blocks, now = [render_block(REGISTER_MARKER, list(lines.values()))], lines
        else:
            blocks = [render_block(CHANGES_MARKER, [line for _, line in changed])]
            now = {**shown, **dict(changed)}
        if first:
            blocks += [render_block(INVARIANTS_MARKER, rules), instruction]
        text = "\n\n".join(b for b in blocks if b)
        self.shown = now
        if text:
            self.first = False
            return index, text
        return None


def _unsourced(line: str | None) -> str | None:
    """A state line without its turn and source, its marks kept (the last ``(turn N`` of
    a line is ours: the value before it is quoted).

    Example:
        >>> _unsourced('  - a = "1" (turn 12 [acted, pinned])')
        '  - a = "1" [pinned]'
        >>> _unsourced('  - a = "(turn 3 [x])" (turn 12 [inferred])')
        '  - a = "(turn 3 [x])" []'
    """
    if line is None:
        return None
    head, _, tail = line.rpartition(" (turn ")
    marks = tail.partition(" [")[2].removesuffix("])").split(", ")[1:]
    return f"{head} [{', '.join(marks)}]"

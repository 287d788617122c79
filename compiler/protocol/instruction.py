"""The instruction that teaches an agent the write protocol (``compiler.protocol.protocol``), and
the exact pattern of what it writes, so a recompile removes this text and nothing else.

The instruction names the schema's slots; ``engine`` puts it where ``emit`` places it
(``teach_protocol=True``): the head of the first system message in ``compact`` mode, the
tail in ``cache_friendly``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from compiler.protocol.block_body import normalise_key

INSTRUCTION_START = "[STATE_PROTOCOL]"
INSTRUCTION_END = "[/STATE_PROTOCOL]"


def render_instruction(slots: Sequence[str], *, max_slots: int = 16) -> str:
    """The instruction that teaches the protocol, naming the schema's slots.

    The schema is the vocabulary: its slots are listed whether or not anything is
    in state yet, and the example uses a real slot, never a placeholder key a
    model could copy as an entity name. With no slots there is nothing to teach,
    and the result is ``""``.

    Example:
        >>> print(render_instruction(["current_file", "failing_test"]))
        [STATE_PROTOCOL]
        Tracked slots (the only keys to use): current_file, failing_test.
        ...
        <contextgc-state>{"assert":{"current_file":"..."}}</contextgc-state>
        ...
        [/STATE_PROTOCOL]
        >>> render_instruction([])
        ''
    """
    names = list(dict.fromkeys(k for k in map(normalise_key, slots) if k))
    if not names:
        return ""
    shown = names[: max(1, max_slots)]
    listed = ", ".join(shown)
    if len(names) > len(shown):
        listed += f" (+{len(names) - len(shown)} more)"
    example = json.dumps({"assert": {shown[0]: "..."}}, separators=(",", ":"))
    return "\n".join(
        (
            INSTRUCTION_START,
            f"{_SLOTS_LEAD}{listed}.",
            _INSTRUCTION_LINES[0],
            f"<contextgc-state>{example}</contextgc-state>",
            *_INSTRUCTION_LINES[1:],
            INSTRUCTION_END,
        )
    )


_SLOTS_LEAD = "Tracked slots (the only keys to use): "
_INSTRUCTION_LINES = (
    "When your turn changes one, end the reply with ONE block, e.g.",
    "Ops, any of them in that one block:",
    '"assert": {slot: value} - now true, replaces the old value',
    '"pin": {slot: value} - true and fixed until you pin it again',
    '"unsure": {slot: value} - maybe true, not confirmed',
    '"revoke": [slot, ...] - no longer true: void it',
    "Values are plain strings, never null, objects or lists. Declare only what "
    "changed this turn; if nothing changed, emit no block.",
)
# Exactly what ``render_instruction`` writes, and the blank lines after it (a client may
# have turned its line breaks into CRLF): only the slot list and the example's slot vary.
# Text a user put between the two markers is not ours.
INSTRUCTION = re.compile(
    r"\r?\n".join(
        (
            re.escape(INSTRUCTION_START),
            re.escape(_SLOTS_LEAD) + r"[^\r\n]+\.",
            re.escape(_INSTRUCTION_LINES[0]),
            r'<contextgc-state>\{"assert":\{"[^\r\n]*":"\.\.\."\}\}</contextgc-state>',
            *map(re.escape, _INSTRUCTION_LINES[1:]),
            re.escape(INSTRUCTION_END),
        )
    )
    + r"(?:\r?\n)*"
)

"""The write path: an agent may end a turn with a ``<contextgc-state>`` block that declares
state. This wing finds and strips those blocks (in text and in tool-call arguments), reads
their JSON bodies, trusts them only from the assistant, gates their keys and values by the
declaration and value policies, and holds the instruction that teaches an agent to write
them.
"""

from compiler.protocol.block_body import normalise_key
from compiler.protocol.declare import POLICIES, Declared, DeclareState
from compiler.protocol.instruction import INSTRUCTION, render_instruction

__all__ = [
    "INSTRUCTION",
    "POLICIES",
    "DeclareState",
    "Declared",
    "normalise_key",
    "render_instruction",
]

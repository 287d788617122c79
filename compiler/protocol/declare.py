"""The write path, per message: strip every block, trust only the assistant, gate keys and values.

Only the assistant may declare. A block in a user, tool or system turn may be a
pasted injection or a quote of documentation; it is stripped from what the model
receives, counted, reported as a refused write, and never applied. Blocks are also
stripped from tool-call arguments (never parsed there).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from compiler.facts import Observation, Op, Provenance
from compiler.frozen import build
from compiler.protocol.arguments import strip_blocks_in_arguments
from compiler.protocol.protocol import protocol, strip_blocks
from compiler.read import Message, ToolCall, content_text, with_content
from compiler.state import Refusal, Schema, satisfies

POLICIES = ("flag", "reject", "off")
DECLARING_ROLES = frozenset({"assistant"})
# fields a provider sends beside the content, where a block is stripped but never applied
SIDE_FIELDS = frozenset({"refusal", "reasoning_content", "reasoning"})
_MARK = "contextgc-state"
# ``_MARK in text.lower()`` without lowering the text: no character but an ASCII letter
# lower-cases to one of the mark's letters, so the two agree (tests/test_fold_speed_*),
# and a pattern that opens on the uncased "-" is tried at each "-" only: lowering every
# message, tool payloads and system prompts included, copied all of them
_MARKED = re.compile(r"-(?<=contextgc-)state", re.IGNORECASE | re.ASCII)


def marked(text: str) -> bool:
    """Whether ``text`` holds the block mark in any case (``_MARK in text.lower()``).

    Example:
        >>> marked("<ContextGC-State>"), marked("context-state")
        (True, False)
    """
    return "-" in text and _MARKED.search(text) is not None  # (most texts hold no "-")


@dataclass(frozen=True)
class Declared:
    """What the write path found: stripped messages, declared observations, refusals."""

    messages: tuple[Message, ...]
    observations: tuple[Observation, ...] = ()
    keys_by_turn: dict = field(default_factory=dict)
    refusals: tuple[Refusal, ...] = ()
    counts: dict = field(default_factory=dict)
    off_schema_keys: tuple[str, ...] = ()
    problems: tuple[tuple[int, str], ...] = ()  # (turn, what was wrong)


def declare(
    messages: tuple[Message, ...],
    schema: Schema | None,
    *,
    declaration_policy: str = "flag",
    value_policy: str = "flag",
) -> Declared:
    """Strip and read every ``<contextgc-state>`` block; apply the gates.

    Example:
        >>> block = '<contextgc-state>{"assert": {"cabin_class": "business"}}</contextgc-state>'
        >>> d = declare((Message("assistant", "Upgraded. " + block),), None)
        >>> d.messages[0].content, [(o.slot, o.value) for o in d.observations]
        ('Upgraded.', [('cabin_class', 'business')])
    """
    state = DeclareState(schema, declaration_policy, value_policy)
    out = tuple(state.message(turn, message) for turn, message in enumerate(messages))
    return state.result(out)


class DeclareState:
    """Accumulates one history's declarations, a message at a time."""

    def __init__(self, schema: Schema | None, declaration_policy: str, value_policy: str):
        self.schema = schema
        self.key_policy = declaration_policy
        self.value_policy = value_policy
        self.observations: list[Observation] = []
        self.keys_by_turn: dict[int, set[str]] = {}
        self.refusals: list[Refusal] = []
        self.off_schema: list[str] = []
        self.problems: list[tuple[int, str]] = []
        self.counts = dict.fromkeys(
            (
                "turns_with_block",
                "asserted",
                "pinned",
                "revoked",
                "unsure",
                "malformed",
                "blocks_stripped",
                "blocks_in_untrusted_roles",
                "value_shape_rejected",
                "carried_from_header",  # read back from a compiled header (compiler.fold)
            ),
            0,
        )

    def copy(self) -> DeclareState:
        twin = DeclareState(self.schema, self.key_policy, self.value_policy)
        twin.observations = list(self.observations)
        twin.keys_by_turn = {turn: set(keys) for turn, keys in self.keys_by_turn.items()}
        twin.refusals = list(self.refusals)
        twin.off_schema = list(self.off_schema)
        twin.problems = list(self.problems)
        twin.counts = dict(self.counts)
        return twin

    def result(self, messages: tuple[Message, ...]) -> Declared:
        return build(  # Declared(...), built as frozen.build builds
            Declared,
            messages=messages,
            observations=tuple(self.observations),
            keys_by_turn={t: frozenset(k) for t, k in self.keys_by_turn.items()},
            refusals=tuple(self.refusals),
            counts=dict(self.counts),
            off_schema_keys=tuple(dict.fromkeys(self.off_schema)),
            problems=tuple(self.problems),
        )

    def message(self, turn: int, message: Message) -> Message:
        if message.tool_calls:  # (most messages make no call)
            message = self._strip_calls(message)
        if message.source:
            message = self._strip_side_fields(message)
        text = message.content
        if not text or not marked(text):
            return message
        stripped, declaration = protocol(text)
        self.counts["blocks_stripped"] += declaration.blocks
        if message.role not in DECLARING_ROLES:
            self._untrusted(turn, message.role, declaration.blocks)
        elif declaration.blocks:
            self._trusted(turn, declaration)
        return _stripped_content(message, stripped, declaration)

    def _strip_side_fields(self, message: Message) -> Message:
        """Blocks in the fields beside the content a provider may send back (a refusal,
        the reasoning) are stripped and counted, never applied: what the agent declares is
        what it said, and left there a block would be read again by the next compile."""
        changed = None
        for key, value in message.source:
            if key in SIDE_FIELDS and type(value) is str and marked(value):
                changed = changed or {}
                changed[key] = self._stripped(value)
            elif key == "content" and type(value) is list:  # a refusal sent as a part
                parts = [self._strip_refusal_part(part) for part in value]
                if any(new is not old for new, old in zip(parts, value, strict=True)):
                    changed = changed or {}
                    changed[key] = parts
        if changed is None:
            return message
        source = tuple((key, changed.get(key, value)) for key, value in message.source)
        return replace(message, source=source)

    def _strip_refusal_part(self, part):
        """A ``{"type": "refusal", "refusal": ...}`` part with its blocks stripped."""
        if type(part) is not dict or type(part.get("refusal")) is not str:
            return part
        if not marked(part["refusal"]):
            return part
        return {**part, "refusal": self._stripped(part["refusal"])}

    def _stripped(self, text: str) -> str:
        """``text`` with its blocks stripped, never applied; they are counted."""
        text, removed = strip_blocks(text)
        self.counts["blocks_stripped"] += removed
        return text

    def _strip_calls(self, message: Message) -> Message:
        if not message.tool_calls or not any(marked(c.arguments) for c in message.tool_calls):
            return message
        calls = []
        for call in message.tool_calls:
            arguments, removed = strip_blocks_in_arguments(call.arguments)
            self.counts["blocks_stripped"] += removed
            calls.append(ToolCall(call.name, arguments, call.id))
        return replace(message, tool_calls=tuple(calls), source=_with_calls(message, calls))

    def carry(self, turn: int, facts) -> list[Observation]:
        """Declared facts read back from a compiled header (``emit.declared_in_header``) as
        observations at ``turn``, through the key and value gates a declaration passes;
        counted as carried, not as declared again."""
        kept = [
            Observation(key, value, turn, Provenance.DECLARED, op=op)
            for key, value, op in facts
            if self._key_allowed(turn, key, value) and self._value_allowed(turn, key, value)
        ]
        self.counts["carried_from_header"] += len(kept)
        return kept

    def _untrusted(self, turn: int, role: str, blocks: int) -> None:
        if not blocks:
            return
        self.counts["blocks_in_untrusted_roles"] += blocks
        reason = f"a {role} turn may not declare state; {blocks} block(s) stripped, not applied"
        self.refusals.append(Refusal("-", turn, "untrusted_declaration_ignored", reason))

    def _trusted(self, turn: int, declaration) -> None:
        self.counts["turns_with_block"] += 1
        self.counts["malformed"] += declaration.malformed
        self.problems.extend((turn, problem) for problem in declaration.problems)
        for op, entries in (
            (Op.ASSERT, declaration.asserts),
            (Op.PIN, declaration.pins),
            (Op.UNSURE, declaration.unsure),
        ):
            for key, value in entries:
                self._write(turn, op, key, value)
        for key in declaration.revokes:  # the key gate only: a revoke carries no value
            if self._key_allowed(turn, key, ""):
                self._keep(turn, Op.REVOKE, key, "")

    def _write(self, turn: int, op: Op, key: str, value: str) -> None:
        if not self._key_allowed(turn, key, value) or not self._value_allowed(turn, key, value):
            return
        self._keep(turn, op, key, value)

    def _keep(self, turn: int, op: Op, key: str, value: str) -> None:
        counter = {Op.ASSERT: "asserted", Op.PIN: "pinned", Op.REVOKE: "revoked"}
        self.counts[counter.get(op, "unsure")] += 1
        self.observations.append(Observation(key, value, turn, Provenance.DECLARED, op=op))
        self.keys_by_turn.setdefault(turn, set()).add(key)

    def _key_allowed(self, turn: int, key: str, value: str) -> bool:
        if self.schema is None or self.key_policy == "off" or self.schema.slot(key):
            return True
        self.off_schema.append(key)
        dropped = self.key_policy == "reject"
        reason = f"{key!r} is not a slot of the {self.schema.name} schema"
        self.refusals.append(Refusal(key, turn, "off_schema_declaration", reason, value, dropped))
        return not dropped

    def _value_allowed(self, turn: int, key: str, value: str) -> bool:
        slot = self.schema.slot(key) if self.schema is not None else None
        if self.value_policy == "off" or slot is None or satisfies(slot.contract, value):
            return True
        self.counts["value_shape_rejected"] += 1
        dropped = self.value_policy == "reject"
        reason = f"{value[:80]!r} does not have the shape of {key}"
        self.refusals.append(Refusal(key, turn, "value_shape_rejected", reason, value, dropped))
        return not dropped


def _stripped_content(message: Message, stripped: str, declaration) -> Message:
    """``message`` with its blocks stripped. Content read from parts (text beside an
    image) is stripped a part at a time, so each part keeps its place and a part that
    was nothing but a block goes; ``stripped``, the whole text stripped, is what the
    declaration was read from and what any other content becomes. The whole text is
    used for parts too where a part-wise strip would not say the same: a block split
    across two parts, text an earlier stage already changed (a recall an earlier compile
    appended), or no part left at all.

    Example:
        >>> image = {"type": "image_url", "image_url": {"url": "u"}}
        >>> said = 'Seen. <contextgc-state>{"revoke": "a"}</contextgc-state>'
        >>> parts = [{"type": "text", "text": "Look:"}, image, {"type": "text", "text": said}]
        >>> m = Message("assistant", "Look:\\n" + said, source=(("content", parts),))
        >>> m = _stripped_content(m, "Look:\\nSeen.", protocol(m.content)[1])
        >>> dict(m.source)["content"] == [parts[0], image, {"type": "text", "text": "Seen."}]
        True
        >>> m.content
        'Look:\\nSeen.'
    """
    raw = dict(message.source).get("content") if message.source else None
    if not isinstance(raw, list) or content_text(raw) != message.content:
        return with_content(message, stripped)
    parts, blocks, malformed = [], 0, 0
    for part in raw:
        if isinstance(part, str) or (isinstance(part, dict) and isinstance(part.get("text"), str)):
            text = part if isinstance(part, str) else part["text"]
            if marked(text):
                text, found = protocol(text)
                blocks, malformed = blocks + found.blocks, malformed + found.malformed
                if not text:
                    continue  # nothing but a block
                part = text if isinstance(part, str) else {**part, "text": text}
        parts.append(part)
    if not parts or (blocks, malformed) != (declaration.blocks, declaration.malformed):
        return with_content(message, stripped)
    source = tuple((k, parts if k == "content" else v) for k, v in message.source)
    return replace(message, content=content_text(parts), source=source)


def _with_calls(message: Message, calls: list[ToolCall]) -> tuple:
    """The message's source items with stripped arguments written back where each call
    was read from: ``function.arguments``, a flat call's ``arguments``, or a legacy
    ``function_call``. A call is paired with the source item it was read from (every
    dict in ``tool_calls``, as ``tool_calls_from`` reads them), and only arguments the
    strip changed are written, so a call's other spelling stays as the caller sent it.

    Example:
        >>> source = (("role", "assistant"), ("tool_calls", [
        ...     {"id": "a", "name": "note", "arguments": "hi <b>"},
        ...     {"id": "b", "function": {"name": "rm", "arguments": "x"}}]))
        >>> m = Message("assistant", None, tool_calls=(ToolCall("note", "hi <b>", "a"),
        ...     ToolCall("rm", "x", "b")), source=source)
        >>> dict(_with_calls(m, [ToolCall("note", "hi ", "a"), ToolCall("rm", "x", "b")]))
        {'role': 'assistant', 'tool_calls': [{'id': 'a', 'name': 'note', 'arguments': 'hi '},
        {'id': 'b', 'function': {'name': 'rm', 'arguments': 'x'}}]}
    """
    if not message.source:
        return ()
    items = dict(message.source)
    raw = items.get("tool_calls")
    pairs = zip(message.tool_calls, calls, strict=True)
    if isinstance(raw, list):
        fixed = []
        for item in raw:
            if isinstance(item, dict):
                before, after = next(pairs, (None, None))
                if after is not None and after.arguments != before.arguments:
                    item = _with_arguments(item, after.arguments)
            fixed.append(item)
        items["tool_calls"] = fixed
    elif isinstance(items.get("function_call"), dict):  # the legacy single call
        before, after = next(pairs, (None, None))
        if after is not None and after.arguments != before.arguments:
            items["function_call"] = {**items["function_call"], "arguments": after.arguments}
    return tuple(items.items())


def _with_arguments(item: dict, arguments: str) -> dict:
    """A tool-call item with ``arguments`` where its shape keeps them."""
    if isinstance(item.get("function"), dict):
        return {**item, "function": {**item["function"], "arguments": arguments}}
    return {**item, "arguments": arguments}

"""Stale reads: tool output that a later identical read has replaced.

When an agent reads the same thing twice — the same tool called with the same
arguments, or the same file shown again in its editor window — the earlier
output describes a state the later one supersedes. It is what the transcript
used to say, not what is true now, so the compact stage replaces it with a
short notice (keeping any safety row it carried).
"""

from __future__ import annotations

import json
import re
from bisect import bisect_right

from compiler.classify import Kind
from compiler.compact import Compacted, safety_spans
from compiler.messages import Message

_FILE_VIEW = re.compile(r"^\[File: (.+?) \(\d+ lines total\)\]", re.MULTILINE)
# A one-line command in the fence that ends an agent's turn (SWE-agent's protocol).
_COMMAND = re.compile(r"```[^\n]*\n([^\n`]+)\n```\Z")


def read_key(
    message: Message, calls: dict[str, tuple[str, str]], previous: Message | None = None
) -> str | None:
    """What a payload is a read of: a tool call with its arguments, a file shown,
    or the one-line shell command the agent ran just before it.

    Example:
        >>> read_key(Message("user", "[File: /a/b.py (12 lines total)]\\n1:x"), {})
        'file /a/b.py'
        >>> read_key(Message("user", "ok"), {}, Message("assistant", "Run it.\\n```\\nls -a\\n```"))
        'command ls -a'
    """
    if message.tool_call_id and message.tool_call_id in calls:
        name, arguments = calls[message.tool_call_id]
        if name:
            return f"call {name} {arguments}"
    view = _FILE_VIEW.search(message.text)
    if view:
        return f"file {view.group(1).strip()}"
    if previous is not None and previous.role == "assistant":
        command = _COMMAND.search(previous.text.rstrip())
        if command:
            return f"command {command.group(1).strip()}"
    return None


def stale_reads(
    messages: tuple[Message, ...], kinds: tuple[Kind, ...]
) -> dict[int, tuple[str, int]]:
    """Payload index → (what it read, the index of the later read that replaced it).

    Example:
        >>> view = "[File: /a.py (3 lines total)]\\n1:a\\n2:b"
        >>> msgs = (Message("user", view), Message("user", "ok"), Message("user", view))
        >>> stale_reads(msgs, (Kind.MACHINE, Kind.SPEECH, Kind.MACHINE))
        {0: ('file /a.py', 2)}
    """
    calls: dict[str, tuple[str, str]] = {}
    keys: list[str | None] = []
    previous = None
    for message, kind in zip(messages, kinds, strict=True):
        keys.append(next_read_key(message, kind, previous, calls))
        previous = message
    return replaced_reads(keys)


def next_read_key(message: Message, kind: Kind, previous: Message | None, calls: dict):
    """The read key of one message; records its tool calls in ``calls`` first."""
    for call in message.tool_calls:
        if call.id:
            calls[call.id] = (call.name, _canonical(call.arguments))
    if kind is not Kind.MACHINE:
        return None
    return read_key(message, calls, previous)


def replaced_reads(keys: list[str | None]) -> dict[int, tuple[str, int]]:
    """Index → (key, index of the next read with the same key)."""
    last: dict[str, int] = {}
    replaced: dict[int, tuple[str, int]] = {}
    for index, key in enumerate(keys):
        if key is None:
            continue
        if key in last:
            replaced[last[key]] = (key, index)
        last[key] = index
    return replaced


def safety_lines(text: str) -> list[str]:
    """The lines a safety signal starts on, in order, from one scan of the text."""
    starts = [start for start, _ in safety_spans(text)]
    if not starts:
        return []
    lines = text.split("\n")
    offsets, at = [], 0
    for line in lines:
        offsets.append(at)
        at += len(line) + 1
    return [lines[i] for i in sorted({bisect_right(offsets, start) - 1 for start in starts})]


def _canonical(arguments: str) -> str:
    try:
        return json.dumps(json.loads(arguments), sort_keys=True, separators=(",", ":"))
    except (ValueError, RecursionError):
        return arguments


def elide(text: str, *, replaced_by: int, key: str, safety: list[str] | None = None) -> Compacted:
    r"""A stale read as a one-line notice, with every safety line it carried.

    Example:
        >>> c = elide("row 1\nrow 2 WARNING: recall\n" + "x" * 300, replaced_by=9, key="call f {}")
        >>> print(c.text.replace("; ", ";\n"))
        [stale read: call f {} was read again at turn 9;
        this older output is omitted (3 lines, 328 chars, truncated=true);
        safety lines kept:]
        row 2 WARNING: recall
    """
    lines = text.split("\n")
    if safety is None:
        safety = safety_lines(text)
    what = f"{len(lines)} lines, {len(text)} chars, truncated=true"
    head = f"[stale read: {key[:160]} was read again at turn {replaced_by}; "
    head += f"this older output is omitted ({what})"
    notice = "\n".join([head + ("; safety lines kept:]" if safety else "]"), *safety])
    if len(notice) >= len(text):
        return Compacted(text, "none", len(text), len(text), 0, 0, 0, 0, False)
    return Compacted(
        text=notice,
        shape="stale_read",
        original_chars=len(text),
        compacted_chars=len(notice),
        rows_total=len(lines),
        rows_kept=len(safety),
        rows_dropped=len(lines) - len(safety),
        safety_rows_kept=len(safety),
        changed=True,
    )

"""The shapes every stage passes along: messages, tool calls, parse warnings."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from compiler.frozen import maker

ROLES = ("system", "user", "assistant", "tool")


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One call the assistant made: ``name`` and its raw JSON ``arguments``."""

    name: str
    arguments: str
    id: str | None = None


@dataclass(frozen=True, slots=True)
class Message:
    """One turn of a transcript.

    ``content`` is ``None`` only where the source said so (an OpenAI tool-call
    turn). ``source`` keeps the items of the dict it was read from, in order,
    so a dict comes back out with the same keys in the same order. ``line`` is
    the 1-based source line the turn began on.
    """

    role: str
    content: str | None
    name: str | None = None
    tool_call_id: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    source: tuple[tuple[str, Any], ...] = field(default=(), compare=False)
    line: int | None = None

    @property
    def text(self) -> str:
        return self.content or ""


# ``ToolCall(name, arguments, id)`` and ``Message(role, content, name, tool_call_id,
# tool_calls, source, line)``, every field given, built as ``frozen.maker`` builds: the
# reader builds one per item it reads
make_tool_call = maker(ToolCall)
make_message = maker(Message)


@dataclass(frozen=True)
class ParseWarning:
    """Something the reader ignored or guessed, with the line it was on."""

    line: int
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}"


def tool_calls_from(raw: Any) -> tuple[ToolCall, ...]:
    """The calls of a message dict's ``tool_calls`` (anything but a list: none).

    Example:
        >>> tool_calls_from([{"id": "c1", "function": {"name": "open", "arguments": {"p": 1}}}])
        (ToolCall(name='open', arguments='{"p": 1}', id='c1'),)
    """
    if not isinstance(raw, list):
        return ()
    calls = []
    for item in raw:
        if not isinstance(item, dict):
            continue
        fn = item.get("function")
        if not isinstance(fn, dict):
            fn = item
        name, args, call_id = fn.get("name"), fn.get("arguments", ""), item.get("id")
        if not isinstance(args, str):
            args = json.dumps(args, sort_keys=True)
        calls.append(
            make_tool_call(
                name if isinstance(name, str) else "",
                args,
                call_id if isinstance(call_id, str) else None,
            )
        )
    return tuple(calls)


def owned(value: Any) -> Any:
    """``value`` with every list and dict in it new, the rest (text, numbers) shared: a
    message read keeps its own copy of what the caller may change in place later, and
    a message written out hands the caller a copy it may change freely. Either way
    neither the caller's history nor the history cache sees the other's edits.

    Example:
        >>> parts = [{"type": "text", "text": "hi"}]
        >>> copy = owned(parts)
        >>> copy == parts, copy is parts, copy[0] is parts[0], copy[0]["text"] is parts[0]["text"]
        (True, False, False, True)
    """
    try:
        return _owned(value)
    except RecursionError:  # nested deeper than the stack allows: copied without recursion
        return _owned_deep(value)


def _owned(value: Any) -> Any:
    # a list or dict as JSON reads one is copied whole and only its containers replaced:
    # text, most of what a message holds, is shared without a step for each string
    if type(value) is dict:
        copy = value.copy()
        for key, item in value.items():
            if type(item) is not str and isinstance(item, _CONTAINERS):
                copy[key] = _owned(item)
        return copy
    if type(value) is list:
        copy = value.copy()
        for index, item in enumerate(value):
            if type(item) is not str and isinstance(item, _CONTAINERS):
                copy[index] = _owned(item)
        return copy
    if isinstance(value, list):  # a subclass: read through its own iteration, as a list
        return [_owned(item) for item in value]
    if isinstance(value, dict):
        return {key: _owned(item) for key, item in value.items()}
    return value


_CONTAINERS = (list, dict)


def _owned_deep(value: Any) -> Any:
    """``owned`` with a list of containers still to fill instead of the call stack, for a
    value as deep as ``json.loads`` reads (which two frames a level would overflow).

    Example:
        >>> deep = []
        >>> for _ in range(5000):
        ...     deep = [deep]
        >>> copy = _owned_deep(deep)
        >>> copy is not deep and copy[0] is not deep[0]
        True
    """
    if not isinstance(value, list | dict):
        return value
    top = [] if isinstance(value, list) else {}
    todo = [(value, top)]
    while todo:
        source, copy = todo.pop()
        pairs = enumerate(source) if isinstance(source, list) else source.items()
        for key, item in pairs:
            if isinstance(item, list | dict):
                item_copy = [] if isinstance(item, list) else {}
                todo.append((item, item_copy))
                item = item_copy
            if isinstance(copy, list):
                copy.append(item)
            else:
                copy[key] = item
    return top


# The keys of a message a chat-completions API takes: those OpenAI's request types name
# for some role. Any other key (SWE-agent's ``agent``, ``thought``, ``action``,
# ``message_type``, ``tool_call_ids``, ``is_demo``; a provider's ``reasoning_content``)
# is left out of compiled output: an API refuses a message that carries it.
CHAT_KEYS = frozenset(
    {"role", "content", "name", "tool_calls", "tool_call_id", "function_call", "refusal", "audio"}
)


def _owned_source(source: tuple, every_key: bool = False) -> dict:
    """``dict(source)`` less any key outside ``CHAT_KEYS`` (unless ``every_key``), each
    value ``owned``: text and nulls, most of a message's values, are kept without a call
    for each."""
    keep = None if every_key else CHAT_KEYS
    try:
        return {
            key: v if type(v) is str or v is None else _owned(v)
            for key, v in source
            if keep is None or key in keep
        }
    except RecursionError:  # nested deeper than the stack allows: copied without recursion
        return {key: owned(v) for key, v in source if keep is None or key in keep}


def chat_keys_only(message: dict) -> dict:
    """``message`` less any key outside ``CHAT_KEYS`` (itself when it has none).

    Example:
        >>> chat_keys_only({"role": "user", "content": "hi", "agent": "primary"})
        {'role': 'user', 'content': 'hi'}
    """
    if message.keys() <= CHAT_KEYS:
        return message
    return {key: value for key, value in message.items() if key in CHAT_KEYS}


def owned_items(item: dict) -> tuple:
    """A message dict's items, each value ``owned``: what a ``Message`` keeps as ``source``."""
    return tuple((key, v if type(v) is str else owned(v)) for key, v in item.items())


def message_from_dict(
    item: dict, *, role: str | None = None, line: int | None = None, own: bool = True
) -> Message:
    """Read one OpenAI-shaped message dict; ``role`` overrides an unknown one. ``own``: the
    message keeps its own copy of the dict's lists and dicts (see ``items.parsed_items``).

    Example:
        >>> m = message_from_dict({"role": "assistant", "content": None,
        ...     "tool_calls": [{"id": "c1", "type": "function",
        ...     "function": {"name": "open", "arguments": "{}"}}]})
        >>> m.tool_calls[0].name, m.content
        ('open', None)
    """
    content = item.get("content")
    if content is not None and not isinstance(content, str):
        content = _flatten_content(content)
    name = item.get("name")
    call_id = item.get("tool_call_id")
    return make_message(
        role or item.get("role"),
        content,
        name if isinstance(name, str) else None,
        call_id if isinstance(call_id, str) else None,
        tool_calls_from(item.get("tool_calls")),
        owned_items(item) if own else item.items(),  # (a view: see items._items)
        line,
    )


def content_text(content: Any) -> str:
    """A message dict's ``content`` as the text the compiler reads: a string as it is,
    ``None`` as empty, parts joined, anything else as canonical JSON.

    Example:
        >>> content_text([{"type": "text", "text": "a"}, "b"]), content_text(None)
        ('a\\nb', '')
    """
    if isinstance(content, str):
        return content
    return "" if content is None else _flatten_content(content)


def _flatten_content(content: Any) -> str:
    """Multi-part content (a list of ``{"type": "text", "text": …}``) as text."""
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                parts.append(part["text"])
            elif isinstance(part, str):
                parts.append(part)
        return "\n".join(parts)
    return json.dumps(content, sort_keys=True)


# Roles the chat-completions API itself accepts, and what each is read as: a
# dict that said "developer" or "function" goes back out saying so; any other
# spelling goes out as the role it was read as.
API_ROLES = {
    "system": "system",
    "developer": "system",
    "user": "user",
    "assistant": "assistant",
    "tool": "tool",
    "function": "tool",
}


def _same_content(original: Any, content: str | None) -> bool:
    """Whether ``content`` is what was read from ``original`` (multi-part kept as is)."""
    if isinstance(original, str) or original is None:
        return original == content
    try:
        return _flatten_content(original) == content
    except (TypeError, ValueError, RecursionError):  # unreadable: the reader kept none of it
        return False


def _with_other_parts(original: Any, text: str | None) -> Any:
    """New text for multi-part content: the parts that are not text (an image, a file)
    keep their places, the text parts become one part carrying ``text``.

    Example:
        >>> image = {"type": "image_url", "image_url": {"url": "u"}}
        >>> _with_other_parts([{"type": "text", "text": "long"}, image], "short")
        [{'type': 'text', 'text': 'short'}, {'type': 'image_url', 'image_url': {'url': 'u'}}]
        >>> _with_other_parts([{"type": "text", "text": "long"}], "short")
        'short'
        >>> _with_other_parts([{"type": "text", "text": "recalled"}, image], "")
        [{'type': 'image_url', 'image_url': {'url': 'u'}}]
    """
    if not isinstance(original, list) or text is None:
        return text
    if not text:  # no text left (a recall stripped from an image's turn): no text part
        others = [p for p in original if not (isinstance(p, str) or _is_text_part(p))]
        return others or text
    out, placed = [], False
    for part in original:
        if isinstance(part, str) or _is_text_part(part):
            if not placed:
                out.append({"type": "text", "text": text})
                placed = True
        else:
            out.append(part)
    if len(out) == 1 and placed:
        return text  # text only: a string says the same
    return out if placed else [{"type": "text", "text": text}, *out]


def _is_text_part(part: Any) -> bool:
    return isinstance(part, dict) and isinstance(part.get("text"), str)


def message_to_dict(message: Message, *, every_key: bool = False) -> dict:
    """The message as a dict, its lists and dicts new (``owned``); one read from a dict
    keeps the keys a chat API takes (``CHAT_KEYS``) in their order, drops any other (all
    are kept with ``every_key``, as a store of the transcript wants them), and gains
    ``tool_call_id`` where the reader linked the call it answers from another spelling
    (SWE-agent's ``tool_call_ids: [id]``), so the chat API can pair it with its call.

    Example:
        >>> message_to_dict(Message("user", "hi"))
        {'role': 'user', 'content': 'hi'}
        >>> source = (("role", "tool"), ("content", "ok"), ("agent", "primary"),
        ...           ("tool_call_ids", ["c1"]))
        >>> message_to_dict(Message("tool", "ok", tool_call_id="c1", source=source))
        {'role': 'tool', 'content': 'ok', 'tool_call_id': 'c1'}
        >>> message_to_dict(Message("tool", "ok", source=source), every_key=True)["agent"]
        'primary'
    """
    if message.source:
        # each list and dict copied as it is read: whatever is built from them below
        # (other content parts kept beside new text) is then new throughout
        out = _owned_source(message.source, every_key)
        role = out.get("role")
        if not isinstance(role, str) or API_ROLES.get(role) != message.role:
            out["role"] = message.role
        original, content = out.get("content"), message.content
        # text passed through unchanged is the very string read: nothing to compare
        touched = original is not content and ("content" in out or content is not None)
        if touched and not _same_content(original, content):
            out["content"] = _with_other_parts(original, content)
        if message.tool_call_id is not None and "tool_call_id" not in out:
            out["tool_call_id"] = message.tool_call_id  # linked from another spelling
        return out
    out: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.name is not None:
        out["name"] = message.name
    if message.tool_call_id is not None:
        out["tool_call_id"] = message.tool_call_id
    if message.tool_calls:
        out["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments},
            }
            for call in message.tool_calls
        ]
    return out


def with_content(message: Message, content: str | None) -> Message:
    """A copy of ``message`` carrying ``content`` instead (built as ``make_message``
    builds: ``replace`` also reads the fields' declarations on every call)."""
    m = message
    return make_message(m.role, content, m.name, m.tool_call_id, m.tool_calls, m.source, m.line)

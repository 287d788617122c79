"""Reading message dicts: already decoded OpenAI-shaped messages, whatever shape of
transcript they came in (``compiler.read.formats`` finds them), as ``Message`` objects.

A reader meets the same few spellings over and over (``{"role": "user", "content":
…}``), so the common item is read without building anything for the warnings an odd
one gets: where an item sits is named only when there is something to say about it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from operator import attrgetter
from typing import Any

from compiler.frozen import build
from compiler.read.messages import (
    API_ROLES,
    Message,
    ParseWarning,
    ToolCall,
    make_message,
    message_from_dict,
    owned_items,
    tool_calls_from,
)


class Format(StrEnum):
    """The shape a transcript was read from."""

    MESSAGES = "messages"
    JSONL = "jsonl"
    TAU_BENCH = "tau-bench"
    SWE_AGENT = "swe-agent"
    DISPLAY = "display"
    TEXT = "text"


@dataclass(frozen=True)
class Parsed:
    """One transcript as read: its messages, what was ignored, and from what.

    ``meta`` holds what the source said about the transcript (``id`` and
    ``model`` from a nebius header; ``task_id``, ``trial``, ``reward`` from a
    tau-bench record). ``record`` is the raw JSON record it came from, when
    there is one, so a benchmark can read e.g. ``record["info"]["task"]``.
    """

    messages: tuple[Message, ...]
    warnings: tuple[ParseWarning, ...] = ()
    format: str = Format.TEXT
    meta: tuple[tuple[str, str], ...] = ()
    record: Any = field(default=None, compare=False, repr=False)


# Every role spelling we accept, in JSON and in text, and the role it means.
ROLE_NAMES = {
    "user": "user",
    "human": "user",
    "you": "user",
    "customer": "user",
    "assistant": "assistant",
    "ai": "assistant",
    "bot": "assistant",
    "model": "assistant",
    "agent": "assistant",
    "system": "system",
    "developer": "system",
    "tool": "tool",
    "function": "tool",
    "tool_output": "tool",
    "observation": "tool",
}


def read_message_list(
    items: list, *, base_line: int = 1, start: int = 0, own: bool = True
) -> Parsed:
    """Read already decoded OpenAI-shaped message dicts; never raises.

    Non-dict items are skipped with a warning naming their index; unknown
    roles are read as ``user`` with a warning. With no source text, an
    item's ``line`` is ``base_line + start + index`` (its 1-based number by
    default); ``start`` is the index of ``items[0]`` in a longer history.
    ``own`` (the default) gives each message its own copy of an item's lists
    and dicts (``messages.owned``); a caller whose messages die before the
    items can next change may pass False (see ``parsed_items``).

    Example:
        >>> parsed = read_message_list([{"role": "human", "content": "hi"}, 7,
        ...     {"role": "function", "name": "f", "content": "42"}])
        >>> [(m.role, m.name, m.line) for m in parsed.messages]
        [('user', None, 1), ('tool', 'f', 3)]
        >>> [str(w) for w in parsed.warnings]  # doctest: +NORMALIZE_WHITESPACE
        ["line 1: messages[0]: role 'human' is written out as 'user'",
         'line 2: messages[1] is a number, not a message object; skipped']
    """
    if isinstance(items, dict):
        items = [items]
    if not isinstance(items, list | tuple):
        note = f"expected a list of messages, got {json_kind(items)}"
        return Parsed((), (ParseWarning(base_line, note),), Format.MESSAGES)
    first = base_line + start
    lines = range(first, first + len(items))
    return parsed_items(items, lines, indexed("messages", start), Format.MESSAGES, own=own)


def indexed(name: str, start: int = 0) -> Callable[[int], str]:
    """Where item ``index`` of a list sits, as ``name[start + index]``.

    Example:
        >>> indexed("traj", 3)(2)
        'traj[5]'
    """
    return lambda index: f"{name}[{start + index}]"


def parsed_items(items, lines, where: Callable[[int], str], fmt: Format, *, own=True) -> Parsed:
    """The items as messages. ``lines`` gives each item's line, ``where(index)`` the name a
    warning gives it, built only for a warning: most items need none.

    Without ``own``, each message keeps the item's own lists and dicts as its
    ``source`` rather than a copy: for a compile whose messages die with it (no history
    cache), as the caller cannot change the items while it runs, and every dict written
    out is a new copy anyway (``message_to_dict``)."""
    messages, warnings = [], []
    for index, (item, line) in enumerate(zip(items, lines, strict=True)):
        message = _plain_item(item, line, own)
        if message is not None:  # the common item: nothing to note but a nameless call
            messages.append(message)
            if message.tool_calls and not all(map(_call_name, message.tool_calls)):
                warnings.extend(_nameless_calls(message, line, where, index))
            continue
        message, notes = _read_item(item, line, index, where, own)
        if message is not None:
            messages.append(message)
        if notes:
            warnings.extend(ParseWarning(line, note) for note in notes)
    return build(
        Parsed, messages=tuple(messages), warnings=tuple(warnings), format=fmt, meta=(), record=None
    )


_call_name = attrgetter("name")  # (each call's name, asked of every call without a frame)


def _nameless_calls(message: Message, line: int, where, index: int) -> list[ParseWarning]:
    """``_call_notes`` for a plain item's message, read from its calls: every raw call of
    a plain item is a dict read as one call, in order, so a call without a name is one
    whose raw call named no function, and there is nothing else to note."""
    notes = []
    for number, call in enumerate(message.tool_calls):
        if not call.name:
            note = f"{where(index)}: tool_calls[{number}] names no function"
            notes.append(build(ParseWarning, line=line, message=note))
    return notes


def _plain_item(item: Any, line: int, own: bool = True) -> Message | None:
    """The message of an item with a role spelled as a key, text content and no key that
    links a call another way (SWE-agent's extra keys are kept as they came); None for any
    other item (``_read_item`` reads it, to the same message). ``own``: as
    ``parsed_items`` says."""
    if type(item) is not dict or "tool_call_ids" in item or "function_call" in item:
        return None  # a call linked another way: _read_item fills the link
    raw, content = item.get("role"), item.get("content")
    role = API_ROLES.get(raw) if type(raw) is str else None
    if role is None or not (content is None or type(content) is str):
        return None  # another spelling of a role is read, and noted, by _read_item
    calls = item.get("tool_calls")
    if calls is not None:
        if type(calls) is not list:
            return None  # not a list of calls: _read_item notes it
        try:
            calls = tool_calls_from(calls)
        except (TypeError, ValueError, RecursionError):
            return None  # arguments JSON cannot hold: _read_item notes it
        if len(calls) != len(item["tool_calls"]):
            return None  # an item that is no call: _read_item notes it
    if content is None and not calls:
        return None  # nothing said and nothing called: _read_item notes it
    # most items hold nothing but text: no list or dict of the caller's to copy
    needs_copy = own and not _TEXT.issuperset(map(type, item.values()))
    source = owned_items(item) if needs_copy else _items(item, own)
    name, call_id = item.get("name"), item.get("tool_call_id")
    return make_message(
        role,
        content,
        name if isinstance(name, str) else None,
        call_id if isinstance(call_id, str) else None,
        calls or (),
        source,
        line,
    )


def _items(item: dict, own: bool):
    """The item's keys and values in order, as a message's ``source``: a tuple of its own
    where the message outlives the call (``own``), else a view of the caller's dict, which
    lives as long and costs nothing per key (a tuple of pairs cost about half the size of
    the input's JSON on the few-shot dev corpora)."""
    return tuple(item.items()) if own else item.items()


# values ``owned_items`` would keep as they are, checked without a call for each
_TEXT = frozenset({str, type(None)})


def _read_item(
    item: Any, line: int, index: int, where, own: bool = True
) -> tuple[Message | None, list[str]]:
    """One message dict as a ``Message``, with notes on what was guessed. A mapping that
    is not a dict, or a model object with ``model_dump`` (the message the OpenAI SDK
    returns, appended to a history as its documentation shows), is read as its dict.
    ``own``: as ``parsed_items`` says."""
    if not isinstance(item, dict):
        read = as_message_dict(item)
        if read is None:
            return None, [f"{where(index)} is {json_kind(item)}, not a message object; skipped"]
        item = read
    if not _MESSAGE_KEYS.intersection(item):  # {} or {"metadata": …}: says and does nothing
        return None, [f"{where(index)} has no role, content or tool call; skipped"]
    raw = item.get("role")
    role = ROLE_NAMES.get(raw) if type(raw) is str else None  # spelled as a key: most are
    notes: list[str] = []
    if role is None:
        role, notes = _role_of(raw, where(index))
    elif API_ROLES.get(raw) != role:  # "human", "bot": written out as the API spells it
        notes = [f"{where(index)}: role {raw!r} is written out as {role!r}"]
    try:
        message = _linked(message_from_dict(item, role=role, line=line, own=own), item)
    except (TypeError, ValueError, RecursionError):
        # Only Python values that JSON cannot hold get here.
        note = f"{where(index)}: content or tool calls unreadable; kept without them"
        source = owned_items(item) if own else _items(item, own)
        return Message(role, None, source=source, line=line), [*notes, note]
    return message, [*notes, *_call_notes(item, message, where(index))]


def _call_notes(item: dict, message: Message, where: str) -> list[str]:
    """What the chat API would refuse in a message's calls, or in a message with neither
    content nor a call; the message is kept as it came.

    Example:
        >>> m = Message("assistant", None)
        >>> _call_notes({"tool_calls": "ls", "content": None}, m, "messages[2]")
        ['messages[2]: tool_calls is a string, not an array of calls; none read',
         'messages[2]: no content and no tool call']
    """
    notes = []
    raw = item.get("tool_calls")
    if raw is not None and not isinstance(raw, list):
        notes.append(f"{where}: tool_calls is {json_kind(raw)}, not an array of calls; none read")
    for number, call in enumerate(raw if isinstance(raw, list) else ()):
        if not isinstance(call, dict):
            notes.append(f"{where}: tool_calls[{number}] is {json_kind(call)}, not a call; skipped")
            continue
        function = call.get("function") if isinstance(call.get("function"), dict) else call
        if not isinstance(function.get("name"), str) or not function.get("name"):
            notes.append(f"{where}: tool_calls[{number}] names no function")
    if message.content is None and not message.tool_calls:
        notes.append(f"{where}: no content and no tool call")
    return notes


def as_message_dict(item: Any) -> dict | None:
    """``item`` as a message dict, when it is a mapping or a pydantic-style model.

    Example:
        >>> from types import MappingProxyType
        >>> as_message_dict(MappingProxyType({"role": "user", "content": "hi"}))
        {'role': 'user', 'content': 'hi'}
        >>> class Reply:
        ...     def model_dump(self, *, exclude_none):
        ...         return {"role": "assistant", "content": "ok"}
        >>> as_message_dict(Reply()), as_message_dict("text")
        ({'role': 'assistant', 'content': 'ok'}, None)
    """
    if isinstance(item, Mapping):
        return dict(item)
    dump = getattr(item, "model_dump", None)
    if callable(dump) and not isinstance(item, type):
        try:
            value = dump(exclude_none=True)  # unset fields would be sent as nulls
        except (TypeError, ValueError):  # a model_dump of another kind: not ours to read
            return None
        return value if isinstance(value, dict) else None
    return None


_MESSAGE_KEYS = frozenset({"role", "content", "tool_calls", "function_call"})


def _role_of(raw: Any, where: str) -> tuple[str, list[str]]:
    if not isinstance(raw, str):
        what = "no role" if raw is None else f"role is {json_kind(raw)}"
        return "user", [f"{where}: {what}; read as user"]
    role = ROLE_NAMES.get(raw.strip().lower())
    if role is None:
        return "user", [f"{where}: unknown role {raw[:40]!r} read as user"]
    return role, [f"{where}: role {raw[:40]!r} is written out as {role!r}"]


def _linked(message: Message, item: dict) -> Message:
    """Fill call links the shapes we read spell differently.

    SWE-agent answers a call with ``tool_call_ids: [id]``; old OpenAI
    assistants call with ``function_call: {name, arguments}``.
    """
    ids = item.get("tool_call_ids")
    one_id = isinstance(ids, list) and len(ids) == 1 and isinstance(ids[0], str)
    if message.tool_call_id is None and one_id:
        message = replace(message, tool_call_id=ids[0])
    call = item.get("function_call")
    if message.role == "assistant" and not message.tool_calls and isinstance(call, dict):
        name, args = call.get("name"), call.get("arguments", "")
        if isinstance(name, str):
            args = args if isinstance(args, str) else json.dumps(args, sort_keys=True)
            message = replace(message, tool_calls=(ToolCall(name, args),))
    return message


def json_kind(value: Any) -> str:
    """How a warning names the JSON type of ``value``.

    Example:
        >>> [json_kind(v) for v in (None, True, 2.5, "x", [], {})]
        ['null', 'a boolean', 'a number', 'a string', 'an array', 'an object']
    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    names = {str: "a string", list: "an array", tuple: "an array", dict: "an object"}
    return names.get(type(value), f"a {type(value).__name__}")

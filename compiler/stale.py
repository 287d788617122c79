"""Stale reads: tool output that a later payload of the same thing has replaced.

When an agent reads the same thing twice — the same tool called with the same
arguments, the same file shown again in its editor window, or the same record
(a JSON object naming the same id) shown again by any tool, say an order read
and then returned by the call that cancelled it — the earlier output describes
a state the later one supersedes. It is what the transcript used to say, not
what is true now, so the compact stage replaces it with a short notice (keeping
any safety row it carried).

A record counts as shown again only when the later object has every top-level
field the earlier one had: a narrower view of the same id replaces nothing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from compiler.classify import Kind
from compiler.compact import Compacted, unchanged
from compiler.compact_json import decode_json, json_encoder
from compiler.frozen import build
from compiler.messages import Message
from compiler.safety import has_safety_signal, safety_spans

_FILE_VIEW = re.compile(r"^\[File: (.+?) \(\d+ lines total\)\]", re.MULTILINE)
# A one-line command in the fence that ends an agent's turn (SWE-agent's protocol).
_COMMAND = re.compile(r"```[^\n]*\n([^\n`]+)\n```\Z")
# json.dumps with these options, its encoder built once rather than per call
_compact_json = json_encoder()
_canonical_json = json_encoder(ensure_ascii=True, sort_keys=True)


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
    view = _FILE_VIEW.search(message.text) if "[File: " in message.text else None
    if view:
        return f"file {view.group(1).strip()}"
    if previous is not None and previous.role == "assistant":
        command = _COMMAND.search(previous.text.rstrip())
        if command:
            return f"command {command.group(1).strip()}"
    return None


# One thing a payload is a read of: a key, and for a record its top-level fields.
ReadKey = tuple[str, frozenset[str] | None]


def record_key(text: str, memo: dict | None = None) -> ReadKey | None:
    """The record a JSON object shows: its first id field with the value, and its fields.
    ``memo`` holds the JSON texts decoded before (``compact_json.decode_json``).

    Example:
        >>> key, fields = record_key('{"name": "Lamp", "product_id": "17", "price": 3}')
        >>> key, sorted(fields)
        ('record product_id="17"', ['name', 'price', 'product_id'])
        >>> record_key('[{"order_id": "#W1"}]') is None
        True
    """
    stripped = text.strip()
    if not (stripped.startswith("{") and stripped.endswith("}")):
        return None
    try:
        value = decode_json(stripped, memo)
    except (ValueError, RecursionError):
        return None
    if not isinstance(value, dict):
        return None
    for name, field in value.items():
        if _names_id(name) and _identity(field):
            return f"record {name}={json.dumps(field)}", frozenset(value)
    return None


def _names_id(name: str) -> bool:
    return name == "id" or name.endswith(("_id", "Id"))


def _identity(value) -> bool:
    """A value that can identify a record: a non-empty string or a whole number."""
    if isinstance(value, str):
        return bool(value.strip())
    return isinstance(value, int) and not isinstance(value, bool)


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
    keys: list[tuple[ReadKey, ...]] = []
    previous = None
    for message, kind in zip(messages, kinds, strict=True):
        keys.append(next_read_key(message, kind, previous, calls))
        previous = message
    return replaced_reads(keys)


def next_read_key(
    message: Message, kind: Kind, previous: Message | None, calls: dict, memo: dict | None = None
) -> tuple[ReadKey, ...]:
    """What one message is a read of (none, or a read and a record); records its
    tool calls in ``calls`` first. ``memo``: as for ``record_key``."""
    for call in message.tool_calls:
        if call.id:
            calls[call.id] = (call.name, _canonical(call.arguments))
    if kind is not Kind.MACHINE:
        return ()
    read = read_key(message, calls, previous)
    record = record_key(message.text, memo)
    found = ((read, None),) if read else ()
    return (*found, record) if record else found


def replaced_reads(keys: list[tuple[ReadKey, ...]]) -> dict[int, tuple[str, int]]:
    """Index → (key, index of the first later read that replaces it).

    A read is replaced by the next read with the same key; a record by the next
    one with the same key whose fields include all of its own.

    Example:
        >>> wide, narrow = frozenset("abc"), frozenset("ab")
        >>> replaced_reads([(("r 1", narrow),), (("r 1", wide),), (("r 1", narrow),)])
        {0: ('r 1', 1)}
    """
    waiting: dict[str, list[tuple[int, frozenset[str] | None]]] = {}
    replaced: dict[int, tuple[str, int]] = {}
    for index, entries in enumerate(keys):
        for key, fields in entries:
            still = []
            for earlier, earlier_fields in waiting.get(key, ()):
                if earlier in replaced:
                    continue
                if earlier_fields is None or (fields is not None and earlier_fields <= fields):
                    replaced[earlier] = (key, index)
                else:
                    still.append((earlier, earlier_fields))
            still.append((index, fields))
            waiting[key] = still
    return replaced


def safety_lines(text: str) -> list[str]:
    """The lines a safety signal starts on, in order, from one scan of the text."""
    starts = sorted(start for start, _ in safety_spans(text))
    if not starts:
        return []
    lines = text.split("\n")
    found, line, at = [], 0, 0
    for start in starts:  # a start's line is the number of line breaks before it
        line += text.count("\n", at, start)
        at = start
        if not found or found[-1] != line:
            found.append(line)
    return [lines[i] for i in found]


def _canonical(arguments: str) -> str:
    try:
        return _canonical_json(json.loads(arguments))
    except (ValueError, RecursionError):
        return arguments


def record_rows(value: dict) -> list[str]:
    """A JSON object as rows: each element of a list field, each entry of a field
    that maps names to objects, and each other field whole, with the field name.

    Example:
        >>> record_rows({"id": "R1", "pax": [{"dob": "1990"}], "pay": {"c1": {"n": 4}}})
        ['id: "R1"', 'pax: {"dob":"1990"}', 'pay.c1: {"n":4}']
    """
    rows = []
    for name, field in value.items():
        if isinstance(field, list):
            rows.extend(f"{name}: {_compact_json(item)}" for item in field)
        elif isinstance(field, dict) and field and all(isinstance(v, dict) for v in field.values()):
            rows.extend(f"{name}.{entry}: {_compact_json(item)}" for entry, item in field.items())
        else:
            rows.append(f"{name}: {_compact_json(field)}")
    return rows


def elide_record(
    text: str, later_text: str, *, replaced_by: int, key: str, memo: dict | None = None
) -> Compacted:
    r"""A record shown again later: a notice, with the safety rows the later one lacks.

    A row that the later payload repeats exactly is still in front of the model, so
    only the safety rows it does not repeat need keeping here.

    Example:
        >>> pax = '"pax": [{"dob": "1990"}, {"dob": "1991"}]'
        >>> old = '{"id": "R1", ' + pax + ', "note": "' + "x" * 200 + '"}'
        >>> new = '{"id": "R1", "pax": [{"dob": "1990"}], "note": "cancelled"}'
        >>> c = elide_record(old, new, replaced_by=7, key='record id="R1"')
        >>> print(c.text.replace("; ", ";\n"))
        [stale read: record id="R1" was shown again at turn 7;
        this older output is omitted (4 rows, 267 chars, truncated=true);
        safety rows it does not repeat kept:]
        pax: {"dob":"1991"}
    """
    try:
        old, new = decode_json(text, memo), decode_json(later_text, memo)
    except (ValueError, RecursionError):
        return elide(text, replaced_by=replaced_by, key=key)
    if not isinstance(old, dict) or not isinstance(new, dict):
        return elide(text, replaced_by=replaced_by, key=key)
    rows, safety = record_rows(old), []
    # a row's signal is one of the rows joined (a line break ends every term, address and
    # card number as the end of the row does): most records have none, and then what the
    # later record repeats need not be asked
    if rows and has_safety_signal("\n".join(rows)):
        repeated = set(record_rows(new))
        safety = [row for row in rows if row not in repeated and has_safety_signal(row)]
    what = f"{len(rows)} rows, {len(text)} chars, truncated=true"
    head = f"[stale read: {key[:160]} was shown again at turn {replaced_by}; "
    head += f"this older output is omitted ({what})"
    head += "; safety rows it does not repeat kept:]" if safety else "]"
    return _notice(text, "\n".join([head, *safety]), len(rows), len(safety))


def elide(text: str, *, replaced_by: int, key: str, safety: list[str] | None = None) -> Compacted:
    r"""A stale read as a one-line notice, with every safety line it carried.

    Example:
        >>> c = elide("row 1\nrow 2 WARNING: recall\n" + "x" * 300, replaced_by=9, key="call f {}")
        >>> print(c.text.replace("; ", ";\n"))
        [stale read: call f {} was shown again at turn 9;
        this older output is omitted (3 lines, 328 chars, truncated=true);
        safety lines kept:]
        row 2 WARNING: recall
    """
    lines = text.split("\n")
    if safety is None:
        safety = safety_lines(text)
    what = f"{len(lines)} lines, {len(text)} chars, truncated=true"
    head = f"[stale read: {key[:160]} was shown again at turn {replaced_by}; "
    head += f"this older output is omitted ({what})"
    notice = "\n".join([head + ("; safety lines kept:]" if safety else "]"), *safety])
    return _notice(text, notice, len(lines), len(safety))


def _notice(text: str, notice: str, rows: int, safety: int) -> Compacted:
    """The notice as the compaction result, unless it is no shorter than the text."""
    if len(notice) >= len(text):
        return unchanged(text, "none")
    return build(
        Compacted,
        text=notice,
        shape="stale_read",
        original_chars=len(text),
        compacted_chars=len(notice),
        rows_total=rows,
        rows_kept=safety,
        rows_dropped=rows - safety,
        safety_rows_kept=safety,
        changed=True,
    )


FRESH_PAYLOADS = 4  # at most this many unanswered payloads are left whole


def fresh_payloads(messages: Sequence[Message], kinds: Sequence[Kind]) -> frozenset[int]:
    """The payloads the agent has not answered yet: machine output after its last
    spoken turn, the latest ``FRESH_PAYLOADS`` of them at most.

    They are what the agent is about to act on — the order it just read, the
    variants it must pick an item id from — so the compact stage leaves them whole
    (a stale read among them still becomes a notice). Once the agent has spoken
    after them they are history and are compacted like any other payload. In a
    finished transcript, which ends with the agent speaking, none is fresh.

    Example:
        >>> msgs = (Message("user", "Order #1?"), Message("tool", "{}"),
        ...         Message("assistant", "Here it is."), Message("tool", "{}"),
        ...         Message("assistant", None), Message("tool", "[]"))
        >>> kinds = (Kind.SPEECH, Kind.MACHINE, Kind.SPEECH, Kind.MACHINE,
        ...          Kind.SPEECH, Kind.MACHINE)
        >>> sorted(fresh_payloads(msgs, kinds))
        [3, 5]
    """
    fresh = []
    for index in range(len(kinds) - 1, -1, -1):
        message = messages[index]
        if kinds[index] is Kind.MACHINE:
            fresh.append(index)
            if len(fresh) == FRESH_PAYLOADS:
                break
        elif message.role == "assistant" and (message.content or "").strip():
            break
    return frozenset(fresh)

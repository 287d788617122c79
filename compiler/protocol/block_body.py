"""A ``<contextgc-state>`` block's JSON body, read into what it declares.

``compiler.protocol.protocol`` finds the blocks in a turn's text and strips them; this module
parses each body it found and merges them, in the order written, into one
``Declaration``. It is pure and never raises.

Decisions, each pinned by a test:

- A body is malformed (the whole block is dropped) for invalid JSON, a duplicate
  key anywhere, a non-object body, a body with no known op or with an unknown
  one, an op of the wrong type, or an object or list as a slot value.
- Entries rather than blocks are dropped for ``null`` values, empty values, values
  that hold a tag, and keys that normalise to nothing; each drop is reported in
  ``problems``.
- Raw control characters inside a JSON string (a value typed over two lines) are
  accepted, since whitespace in values is collapsed anyway.
- Numbers keep the spelling they were written with (``1.10`` stays ``1.10``, not
  ``1.1``); booleans become ``true``/``false``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

OPS = ("assert", "pin", "revoke", "unsure")
MARK = "contextgc-state"
MAX_VALUE_CHARS = 512
# A declared value is kept whole up to this bound and capped to MAX_VALUE_CHARS only where
# the model reads it (``Register.shown_value``, listed in ``state_values_truncated``): two
# values that differ after their first 512 characters are two values, not a reaffirmation.
MAX_DECLARED_CHARS = 16 * MAX_VALUE_CHARS
MAX_KEY_CHARS = 64
_VALUE_TAG = re.compile(r"<\s*/?\s*contextgc-state\s*/?\s*>", re.IGNORECASE | re.ASCII)
_BODY_FENCE = re.compile(r"\A\s*`{3,}[\w+.-]*|`{3,}\s*\Z")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_NON_ALNUM = re.compile(r"[^a-z0-9]+")
_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass(frozen=True)
class Declaration:
    """Everything the blocks of one turn declare, merged in order of appearance."""

    asserts: tuple[tuple[str, str], ...] = ()
    pins: tuple[tuple[str, str], ...] = ()
    revokes: tuple[str, ...] = ()
    unsure: tuple[tuple[str, str], ...] = ()
    blocks: int = 0
    malformed: int = 0
    problems: tuple[str, ...] = ()


EMPTY = Declaration()


@dataclass(frozen=True)
class Found:
    """One block as found in the text: its body, or why it cannot be applied."""

    start: int
    body: str | None
    problem: str = ""


def as_text(value) -> str:
    """``value`` as text: a string as it is, ``None`` as empty, anything else as ``str``."""
    if isinstance(value, str):
        return value
    return "" if value is None else str(value)


def normalise_key(key: str) -> str:
    """camelCase to snake_case, anything but ASCII letters and digits to ``_``, ≤64 chars.

    Example:
        >>> [normalise_key(k) for k in ("DestinationAddress", " destination-address ", "HTTPError")]
        ['destination_address', 'destination_address', 'http_error']
        >>> normalise_key("!!!")
        ''
    """
    key = _CAMEL.sub("_", as_text(key)).lower()
    key = _NON_ALNUM.sub("_", key).strip("_")
    return key[:MAX_KEY_CHARS].rstrip("_")


class _DuplicateKey(Exception):
    pass


class _Number(str):
    """A JSON number, kept as written; told apart from a JSON string where it matters."""


def _no_duplicates(pairs: list[tuple[str, object]]) -> dict:
    seen: dict = {}
    for key, value in pairs:
        if key in seen:
            raise _DuplicateKey(key)
        seen[key] = value
    return seen


def _no_constant(name: str):
    raise ValueError(f"{name} is not JSON")


def _load(body: str):
    return json.loads(
        body,
        object_pairs_hook=_no_duplicates,
        parse_float=_Number,
        parse_int=_Number,
        parse_constant=_no_constant,
        strict=False,  # a raw line break inside a value; whitespace is collapsed anyway
    )


def merge(found: list[Found]) -> Declaration:
    """Parse each block and merge them, in order, as if each were applied after the one
    before: a later value wins, revokes are a union, a block's revoke voids what an
    earlier block asserted or marked unsure for that slot, and its unsure voids what an
    earlier block asserted (the register applies a turn's revokes, then its unsures,
    before its asserts, which is right only within one block). A pin is left to stand,
    as it would against a revoke or a guess in a later turn.

    Example:
        >>> a = Found(0, '{"assert": {"city": "Oslo"}}')
        >>> b = Found(9, '{"revoke": ["city"]}')
        >>> d = merge([a, b])
        >>> d.asserts, d.revokes
        ((), ('city',))
        >>> d = merge([b, a])  # the other order: revoked, then said again
        >>> d.asserts, d.revokes
        ((('city', 'Oslo'),), ('city',))
    """
    tables: dict[str, dict[str, str]] = {"assert": {}, "pin": {}, "unsure": {}}
    revokes: dict[str, None] = {}
    problems: list[str] = []
    malformed = 0
    for number, block in enumerate(found, 1):
        reason, ops, notes = (block.problem, None, []) if block.body is None else _parse(block.body)
        problems += [f"block {number}: {note}" for note in notes]
        if ops is None:
            malformed += 1
            problems.append(f"block {number}: {reason}")
            continue
        for key in ops.get("revoke", ()):  # voids earlier blocks, then this block's own
            tables["assert"].pop(key, None)
            tables["unsure"].pop(key, None)
        for key in ops.get("unsure", ()):  # a later guess replaces an earlier assert
            tables["assert"].pop(key, None)
        for op, entries in ops.items():
            if op == "revoke":
                revokes.update(dict.fromkeys(entries))
            else:
                tables[op].update(entries)
    return Declaration(
        asserts=tuple(tables["assert"].items()),
        pins=tuple(tables["pin"].items()),
        revokes=tuple(revokes),
        unsure=tuple(tables["unsure"].items()),
        blocks=len(found),
        malformed=malformed,
        problems=tuple(problems),
    )


def _parse(body: str) -> tuple[str, dict | None, list[str]]:
    """(why it is malformed, the ops it declares, notes on dropped entries)."""
    body = _BODY_FENCE.sub("", body).strip()
    if not body:
        return "empty block", None, []
    try:
        data = _load(body)
    except _DuplicateKey as e:
        return f"duplicate key {shown(e.args[0])}", None, []
    except json.JSONDecodeError as e:
        return f"invalid JSON: {e.msg} (line {e.lineno}, column {e.colno})", None, []
    except (ValueError, RecursionError) as e:
        return f"invalid JSON: {shown(str(e), 60)}", None, []
    reason = _shape_problem(data)
    if reason:
        return reason, None, []
    notes: list[str] = []
    ops: dict = {}
    for op, value in data.items():
        ops[op] = _revokes(value, notes) if op == "revoke" else _entries(op, value, notes)
    return "", ops, notes


def _shape_problem(data) -> str:
    if not isinstance(data, dict):
        return f"body is {_kind(data)}, not an object"
    if not data:
        return "empty object declares nothing"
    unknown = [k for k in data if k not in OPS]
    if len(unknown) == len(data):
        keys = (
            "{"
            + ", ".join(shown(k) for k in unknown[:4])
            + (", ..." if len(unknown) > 4 else "")
            + "}"
        )
        return f"no known op in {keys}; put slots under assert, pin, unsure or revoke"
    if unknown:
        return f"unknown op {shown(unknown[0])}; the ops are {', '.join(OPS)}"
    for op, value in data.items():
        if op == "revoke":
            items = [value] if type(value) is str else value
            if not isinstance(items, list):
                return f"revoke must be a slot name or a list of them, not {_kind(value)}"
            wrong = next((k for k in items if type(k) is not str), "")
            if wrong != "":
                return f"revoke must list slot names as strings, not {_kind(wrong)}"
        elif not isinstance(value, dict):
            return f"{op} must be an object of slot: value, not {_kind(value)}"
        else:
            for key, item in value.items():
                if isinstance(item, dict | list):
                    return f"{op}.{shown(key)} is {_kind(item)}; values must be plain strings"
    return ""


def _entries(op: str, table: dict, notes: list[str]) -> dict[str, str]:
    kept: dict[str, str] = {}
    for raw, item in table.items():
        key = normalise_key(raw)
        where = f"{op}.{shown(raw)}"
        if not key:
            notes.append(f"{where}: key is empty once normalised; dropped")
        elif item is None:
            notes.append(f"{where} is null; dropped")
        else:
            value = _value(item, where, notes)
            if value:
                kept[key] = value
    return kept


def _value(item, where: str, notes: list[str]) -> str:
    if isinstance(item, bool):
        return json.dumps(item)
    value = " ".join(_SURROGATE.sub("\ufffd", str(item)).split())
    if not value:
        notes.append(f"{where} is empty; dropped")
    elif MARK in value.lower() and _VALUE_TAG.search(value):
        # shown in the header, the tag would be read back as markup, or copied
        notes.append(f"{where} holds a {MARK} tag; dropped")
        return ""
    elif len(value) > MAX_DECLARED_CHARS:
        notes.append(f"{where} cut from {len(value)} to {MAX_DECLARED_CHARS} characters")
        value = value[:MAX_DECLARED_CHARS].rstrip()
    return value


def _revokes(value, notes: list[str]) -> list[str]:
    keys = []
    for raw in [value] if type(value) is str else value:
        key = normalise_key(raw)
        if key:
            keys.append(key)
        else:
            notes.append(f"revoke {shown(raw)}: key is empty once normalised; dropped")
    return keys


def _kind(value) -> str:
    if isinstance(value, _Number):
        return "a number"
    return {
        dict: "an object",
        list: "a list",
        str: "a string",
        bool: "a boolean",
        type(None): "null",
    }.get(type(value), type(value).__name__)


def shown(text: str, limit: int = 40) -> str:
    """``text`` quoted for a problem message, cut at ``limit`` characters."""
    text = str(text)
    return repr(text if len(text) <= limit else text[:limit] + "...")

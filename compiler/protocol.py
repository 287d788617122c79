"""The write path's text layer: find, parse and strip ``<contextgc-state>`` blocks.

An agent may end a turn with a block such as::

    <contextgc-state>{"assert": {"current_file": "app.py"}, "revoke": ["failing_test"]}
    </contextgc-state>

``protocol(text)`` returns the text the model will receive (every block gone) and
the ``Declaration`` the blocks make. Which role may declare, and which keys and
values pass, is decided by the caller; this module only reads text. It is pure,
never raises, and costs one lower-cased substring check on a turn without a block.

Decisions, each pinned by a test:

- Tags are ASCII case-insensitive and may hold whitespace: ``< /ContextGC-State >``.
- Nested tags: only innermost pairs are parsed; everything between the outermost
  tags is stripped.
- An unterminated opening tag is malformed and never applied. The tag is stripped,
  with the JSON value right after it if there is one (and a second opening tag
  typed where the closing one belonged), but not the rest of the text: stripping
  to the end could delete real prose.
- A broken opening tag that real models emit (``"contextgc-state>{...}``,
  ``"contextgc-state":{...}``) followed by a JSON value is a malformed block too:
  stripped, never applied. Left in the history it would teach the model its own
  mistake. The bare name before an object (``the contextgc-state {...} block``) is
  prose, unless a closing tag follows the object.
- A stray closing tag, or a self-closing ``<contextgc-state/>``, is stripped and is
  not a block. A tag inside a JSON string of the block's value does not cut the
  block (up to four opening tags in one value); the entry whose value holds it is
  dropped, so no tag reaches the state header.
- A code fence left empty by stripping, or left unbalanced because a fence
  marker sat inside the block, is removed.
- Stripping repeats until nothing is left that a later compile would parse, so
  it is idempotent; pathological nesting beyond ``_MAX_PASSES`` is defused by
  rewriting the tag name.
- A body is malformed (the whole block is dropped) for invalid JSON, a duplicate
  key anywhere, a non-object body, a body with no known op or with an unknown
  one, an op of the wrong type, or an object or list as a slot value.
- Entries rather than blocks are dropped for ``null`` values, empty values and
  keys that normalise to nothing; each drop is reported in ``problems``.
- Raw control characters inside a JSON string (a value typed over two lines) are
  accepted, since whitespace in values is collapsed anyway.
- Numbers keep the spelling they were written with (``1.10`` stays ``1.10``, not
  ``1.1``); booleans become ``true``/``false``.
"""

from __future__ import annotations

import bisect
import json
import re
from dataclasses import dataclass
from itertools import pairwise

OPS = ("assert", "pin", "revoke", "unsure")
MAX_VALUE_CHARS = 512
# A declared value is kept whole up to this bound and capped to MAX_VALUE_CHARS only where
# the model reads it (``Register.shown_value``, listed in ``state_values_truncated``): two
# values that differ after their first 512 characters are two values, not a reaffirmation.
MAX_DECLARED_CHARS = 16 * MAX_VALUE_CHARS
MAX_KEY_CHARS = 64

MARK = "contextgc-state"
_MAX_PASSES = 8
_WS = " \t\r\n\f\v"
_TAG = re.compile(
    r"(?P<open><\s*contextgc-state\s*>)"
    r"|(?P<close><\s*/\s*contextgc-state\s*>)"
    r"|(?P<empty><\s*contextgc-state\s*/\s*>)"
    r'|(?P<broken>(?:<\s*)?"?contextgc-state"?[ \t]*[:>]?(?=\s*(?:```|\{)))',
    re.IGNORECASE | re.ASCII,
)
_WORD = re.compile(MARK, re.IGNORECASE | re.ASCII)
_VALUE_TAG = re.compile(r"<\s*/?\s*contextgc-state\s*/?\s*>", re.IGNORECASE | re.ASCII)
_TAG_MARKS = frozenset('<">:')  # one of them makes the name a tag typed wrong, not prose
_SPACE = re.compile(r"\s*")
_FENCE_RUN = re.compile(r"`{3,}")
_FENCE_LINE = re.compile(r"^[ \t]*`{3,}[^`\n]*(?:\n|\Z)", re.MULTILINE)
_BODY_FENCE = re.compile(r"\A\s*`{3,}[\w+.-]*|`{3,}\s*\Z")
_LEAD_FENCE = re.compile(r"\s*(?:`{3,}[\w+.-]*)?\s*")
_TRAIL_FENCE = re.compile(r"\s*`{3,}")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_NON_ALNUM = re.compile(r"[^a-z0-9]+")
_SURROGATE = re.compile("[\ud800-\udfff]")
_BREAKS = str.maketrans(dict.fromkeys("\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029", " "))
_ESCAPES = str.maketrans({"[": "(", "]": ")", "<": "&lt;", ">": "&gt;"})
_DECODER = json.JSONDecoder()


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
class _Found:
    """One block as found in the text: its body, or why it cannot be applied."""

    start: int
    body: str | None
    problem: str = ""


def protocol(text: str) -> tuple[str, Declaration]:
    """Strip every block from ``text`` and parse them into one ``Declaration``.

    Example:
        >>> text, d = protocol('Opened it.\\n<contextgc-state>{"assert": {"CurrentFile": "a.py"}}'
        ...                    '</contextgc-state>')
        >>> text, d.asserts, d.blocks, d.malformed
        ('Opened it.', (('current_file', 'a.py'),), 1, 0)
        >>> protocol('<contextgc-state>{"current_file": "a.py"}</contextgc-state>')[1].problems
        ("block 1: no known op in {'current_file'}; put slots under assert, pin, unsure or revoke",)
    """
    text = _as_text(text)
    if MARK not in text.lower():
        return text, EMPTY
    stripped, found = _strip(text)
    return stripped, _merge(found) if found else EMPTY


def strip_blocks(text: str) -> tuple[str, int]:
    """Remove every block without applying any; return the text and how many were removed.

    Example:
        >>> strip_blocks('Done. <contextgc-state>{"revoke": "order_id"}</contextgc-state>')
        ('Done.', 1)
        >>> strip_blocks("no block here")
        ('no block here', 0)
    """
    text = _as_text(text)
    if MARK not in text.lower():
        return text, 0
    stripped, found = _strip(text)
    return stripped, len(found)


def normalise_key(key: str) -> str:
    """camelCase to snake_case, anything but ASCII letters and digits to ``_``, ≤64 chars.

    Example:
        >>> [normalise_key(k) for k in ("DestinationAddress", " destination-address ", "HTTPError")]
        ['destination_address', 'destination_address', 'http_error']
        >>> normalise_key("!!!")
        ''
    """
    key = _CAMEL.sub("_", _as_text(key)).lower()
    key = _NON_ALNUM.sub("_", key).strip("_")
    return key[:MAX_KEY_CHARS].rstrip("_")


def escape_value(value: str) -> str:
    """Make a value safe to show inside our own markup: it cannot forge a delimiter.

    Brackets become parentheses, angle brackets become entities, line breaks become
    spaces, and the result is at most 512 characters.

    Example:
        >>> escape_value("[STATE_REGISTER]\\n<contextgc-state>")
        '(STATE_REGISTER) &lt;contextgc-state&gt;'
    """
    value = _as_text(value).translate(_BREAKS).translate(_ESCAPES)
    return value[:MAX_VALUE_CHARS]


# --- finding and stripping -------------------------------------------------------


def _as_text(value) -> str:
    if isinstance(value, str):
        return value
    return "" if value is None else str(value)


def _strip(text: str) -> tuple[str, list[_Found]]:
    """Strip passes until a pass finds nothing: removing markup can join a new tag."""
    found: list[_Found] = []
    for _ in range(_MAX_PASSES):
        stripped, blocks = _one_pass(text)
        found.extend(blocks)
        if stripped == text or not _WORD.search(stripped):
            return stripped, found
        text = stripped
    # Nesting built to outlast the passes: rename what is left, so it cannot parse.
    return _WORD.sub("contextgc_state", text), found


def _one_pass(text: str) -> tuple[str, list[_Found]]:
    spans, found = _scan(text)
    if not spans:
        return text, found
    return _cut(text, _merge_spans(text, spans)), found


def _scan(text: str) -> tuple[list[tuple[int, int]], list[_Found]]:
    """Pair the tags; return the spans to remove and the blocks found, in order."""
    tokens = _outside_values(text, list(_TAG.finditer(text)))
    # A JSON value read after a tag that did not pair ends before the next tag: each
    # read is then bounded by its own stretch of text, and a pass stays linear.
    limits = {m.start(): n.start() for m, n in pairwise(tokens)}
    stack: list[tuple[int, re.Match]] = []
    spans: list[tuple[int, int]] = []
    found: list[_Found] = []
    strays: dict[int, re.Match] = {}
    broken: list[re.Match] = []
    tag_index = 0
    for m in tokens:
        kind = m.lastgroup
        if kind == "broken":
            broken.append(m)
            continue
        if kind == "empty":  # `<contextgc-state/>`: markup that declares nothing
            strays[m.start()] = m
            continue
        tag_index += 1
        if kind == "open":
            stack.append((tag_index, m))
        elif not stack:
            strays[m.start()] = m
        else:
            index, opener = stack.pop()
            if index == tag_index - 1:  # no tag between them: an innermost pair
                found.append(_Found(opener.start(), text[opener.end() : m.start()]))
            if not stack:  # outermost: everything between the tags goes
                spans.append((opener.start(), m.end()))
    paired = list(spans)
    _unterminated(text, [m for _, m in stack], limits, spans, found)
    _broken(text, broken, limits, paired, strays, spans, found)
    spans.extend((m.start(), m.end()) for m in strays.values())
    found.sort(key=lambda f: f.start)
    return spans, found


def _outside_values(text: str, tokens: list[re.Match]) -> list[re.Match]:
    """The tags, less any inside the JSON value that follows an opening tag: a tag
    written inside a string (``{"assert": {"note": "</contextgc-state>"}}``) is text of
    the value, and pairing with it would cut the block in two. A value is read up to the
    next opening tag; where it does not end before one, up to the one after, at most
    ``_INNER_OPENS`` times, so each stretch of text is decoded a bounded number of times.

    Example:
        >>> note = '<contextgc-state>{"a": "<contextgc-state>"}</contextgc-state>'
        >>> [t.lastgroup for t in _outside_values(note, list(_TAG.finditer(note)))]
        ['open', 'close']
    """
    kept: list[re.Match] = []
    i, n = 0, len(tokens)
    while i < n:
        m = tokens[i]
        kept.append(m)
        i += 1
        if m.lastgroup != "open" or i == n:
            continue  # (nothing follows the opening tag that could be inside its value)
        j, end = i, None
        for _ in range(_INNER_OPENS + 1):
            while j < n and tokens[j].lastgroup != "open":
                j += 1
            end = _json_end(text, m.end(), tokens[j].start() if j < n else len(text))
            if end is not None or j == n:
                break
            j += 1
        while end is not None and i < n and tokens[i].start() < end:
            i += 1
    return kept


_INNER_OPENS = 4  # opening tags a block's value may hold in its strings


def _unterminated(text, openers, limits, spans, found) -> None:
    skip = set()
    for i, opener in enumerate(openers):
        if i in skip:
            continue
        end = _json_end(text, opener.end(), limits.get(opener.start(), len(text)))
        end = end or opener.end()
        following = openers[i + 1] if i + 1 < len(openers) else None
        if (
            following is not None
            and end > opener.end()
            and not text[end : following.start()].strip()
        ):
            end = following.end()  # `<tag>{...}<tag>`: the second tag was meant to close
            skip.add(i + 1)
        spans.append((opener.start(), end))
        found.append(_Found(opener.start(), None, "opening tag without a closing tag; not applied"))


def _broken(text, broken, limits, paired, strays, spans, found) -> None:
    starts = [s for s, _ in paired]  # outermost pairs: disjoint, in order
    for m in broken:
        inside = bisect.bisect_right(starts, m.start()) - 1
        if inside >= 0 and m.start() < paired[inside][1]:
            continue
        end = _json_end(text, m.end(), limits.get(m.start(), len(text)))
        if end is None:
            continue  # the name in prose, not an attempted block
        after = _TAG.match(text, _SPACE.match(text, end).end())
        closed = after is not None and after.start() in strays
        if not closed and not _TAG_MARKS.intersection(m.group()):
            continue  # the bare name before an object, as prose writes it: no tag typed
        if closed:
            end = strays.pop(after.start()).end()
        spans.append((m.start(), end))
        problem = f"broken opening tag {_show(m.group(), 30)}; not applied"
        found.append(_Found(m.start(), None, problem))


def _json_end(text: str, pos: int, limit: int) -> int | None:
    """End of the JSON value (optionally fenced) at ``pos``, if one ends before ``limit``."""
    window = text[pos:limit]
    start = _LEAD_FENCE.match(window).end()
    if not window.startswith("{", start):
        return None
    try:
        _, end = _DECODER.raw_decode(window, start)
    except (ValueError, RecursionError):
        return None
    fence = _TRAIL_FENCE.match(window, end)
    return pos + (fence.end() if fence and "`" in window[:start] else end)


def _merge_spans(text: str, spans: list[tuple[int, int]]) -> list[list[int]]:
    """Sorted, overlapping or whitespace-separated spans merged: [start, end, newlines]."""
    merged: list[list[int]] = []
    for start, end in sorted(spans):
        if merged and (start <= merged[-1][1] or not text[merged[-1][1] : start].strip(_WS)):
            last = merged[-1]
            gap = text[last[1] : start] if start > last[1] else ""
            last[1], last[2] = max(last[1], end), max(last[2], gap.count("\n"))
        else:
            merged.append([start, end, 0])
    return merged


def _cut(text: str, spans: list[list[int]]) -> str:
    """Remove the spans; then any code fence the removal left empty or unbalanced."""
    out, cuts = _join(text, spans)
    if "```" in out:
        fences = _fence_spans(out, cuts)
        if fences:
            out, _ = _join(out, _merge_spans(out, fences))
    return out if out.strip(_WS) else ""


def _join(text: str, spans: list[list[int]]) -> tuple[str, list[tuple[int, bool]]]:
    """Remove the spans, leaving neither a blank hole nor glued words.

    Returns the text and, per removal, where it was and whether it held an odd
    number of fence markers (so the fences around it no longer pair up).
    """
    parts = [text[: spans[0][0]]]
    cuts: list[tuple[int, bool]] = []
    length = len(parts[0])
    for i, (start, end, gap_newlines) in enumerate(spans):
        following = spans[i + 1][0] if i + 1 < len(spans) else len(text)
        right = text[end:following]
        odd = len(_FENCE_RUN.findall(text, start, end)) % 2 == 1
        left_core = parts[-1].rstrip(_WS)
        lt = parts[-1][len(left_core) :]
        parts[-1] = left_core
        length -= len(lt)
        cuts.append((length, odd))
        right_core = right.lstrip(_WS)
        if not right_core:
            continue  # only the last piece can be blank: trailing whitespace goes
        rt = right[: len(right) - len(right_core)]
        at_start = i == 0 and not left_core
        sep = _indent(rt) if at_start else _separator(lt, rt, gap_newlines)
        parts += [sep, right_core]
        length += len(sep) + len(right_core)
    return "".join(parts), cuts


def _indent(ws: str) -> str:
    return ws[ws.rfind("\n") + 1 :] if "\n" in ws else ""


def _separator(lt: str, rt: str, gap_newlines: int) -> str:
    newlines = max(lt.count("\n"), rt.count("\n"), gap_newlines)
    if newlines:
        newline = "\r\n" if "\r\n" in lt + rt else "\n"
        return newline * newlines + _indent(rt)
    return " " if lt or rt else ""


def _fence_spans(out: str, cuts: list[tuple[int, bool]]) -> list[tuple[int, int]]:
    """Fence lines to drop: an opener and closer with nothing left between them,
    or the one fence whose partner was inside a removed block."""
    fences = [
        (m.start(), m.start() + len(m.group().rstrip("\n"))) for m in _FENCE_LINE.finditer(out)
    ]
    starts = [f[0] for f in fences]
    ends = [f[1] for f in fences]
    removed: set[int] = set()
    for pos, odd in reversed(cuts):
        before = bisect.bisect_right(ends, pos) - 1
        if before < 0 or out[ends[before] : pos].strip(_WS):
            before = None
        after = bisect.bisect_left(starts, pos)
        if after >= len(fences) or after in removed or out[pos : starts[after]].strip(_WS):
            after = None
        if before is not None and after == before + 1 and before % 2 == 0:
            removed |= {before, after}
        elif odd and (len(fences) - len(removed)) % 2 == 1:
            if before is not None and before % 2 == 0:
                removed.add(before)
            elif after is not None:
                removed.add(after)
    return [fences[i] for i in sorted(removed)]


# --- parsing -------------------------------------------------------------------


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


def _merge(found: list[_Found]) -> Declaration:
    """Parse each block and merge them, in order, as if each were applied after the one
    before: a later value wins, revokes are a union, a block's revoke voids what an
    earlier block asserted or marked unsure for that slot, and its unsure voids what an
    earlier block asserted (the register applies a turn's revokes, then its unsures,
    before its asserts, which is right only within one block). A pin is left to stand,
    as it would against a revoke or a guess in a later turn.

    Example:
        >>> a = _Found(0, '{"assert": {"city": "Oslo"}}')
        >>> b = _Found(9, '{"revoke": ["city"]}')
        >>> d = _merge([a, b])
        >>> d.asserts, d.revokes
        ((), ('city',))
        >>> d = _merge([b, a])  # the other order: revoked, then said again
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
        return f"duplicate key {_show(e.args[0])}", None, []
    except json.JSONDecodeError as e:
        return f"invalid JSON: {e.msg} (line {e.lineno}, column {e.colno})", None, []
    except (ValueError, RecursionError) as e:
        return f"invalid JSON: {_show(str(e), 60)}", None, []
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
            + ", ".join(_show(k) for k in unknown[:4])
            + (", ..." if len(unknown) > 4 else "")
            + "}"
        )
        return f"no known op in {keys}; put slots under assert, pin, unsure or revoke"
    if unknown:
        return f"unknown op {_show(unknown[0])}; the ops are {', '.join(OPS)}"
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
                    return f"{op}.{_show(key)} is {_kind(item)}; values must be plain strings"
    return ""


def _entries(op: str, table: dict, notes: list[str]) -> dict[str, str]:
    kept: dict[str, str] = {}
    for raw, item in table.items():
        key = normalise_key(raw)
        where = f"{op}.{_show(raw)}"
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
            notes.append(f"revoke {_show(raw)}: key is empty once normalised; dropped")
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


def _show(text: str, limit: int = 40) -> str:
    text = str(text)
    return repr(text if len(text) <= limit else text[:limit] + "...")

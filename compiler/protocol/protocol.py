"""The write path's text layer: find and strip ``<contextgc-state>`` blocks.

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
- Each body found is read by ``compiler.protocol.block_body``, which says how.
"""

from __future__ import annotations

import bisect
import json
import re
from itertools import pairwise

from compiler.protocol.block_body import (
    EMPTY,
    MARK,
    MAX_VALUE_CHARS,
    Declaration,
    Found,
    as_text,
    merge,
    shown,
)

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
_TAG_MARKS = frozenset('<">:')  # one of them makes the name a tag typed wrong, not prose
_SPACE = re.compile(r"\s*")
_FENCE_RUN = re.compile(r"`{3,}")
_FENCE_LINE = re.compile(r"^[ \t]*`{3,}[^`\n]*(?:\n|\Z)", re.MULTILINE)
_LEAD_FENCE = re.compile(r"\s*(?:`{3,}[\w+.-]*)?\s*")
_TRAIL_FENCE = re.compile(r"\s*`{3,}")
_BREAKS = str.maketrans(dict.fromkeys("\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029", " "))
_ESCAPES = str.maketrans({"[": "(", "]": ")", "<": "&lt;", ">": "&gt;"})
_DECODER = json.JSONDecoder()


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
    text = as_text(text)
    if MARK not in text.lower():
        return text, EMPTY
    stripped, found = _strip(text)
    return stripped, merge(found) if found else EMPTY


def strip_blocks(text: str) -> tuple[str, int]:
    """Remove every block without applying any; return the text and how many were removed.

    Example:
        >>> strip_blocks('Done. <contextgc-state>{"revoke": "order_id"}</contextgc-state>')
        ('Done.', 1)
        >>> strip_blocks("no block here")
        ('no block here', 0)
    """
    text = as_text(text)
    if MARK not in text.lower():
        return text, 0
    stripped, found = _strip(text)
    return stripped, len(found)


def escape_value(value: str) -> str:
    """Make a value safe to show inside our own markup: it cannot forge a delimiter.

    Brackets become parentheses, angle brackets become entities, line breaks become
    spaces, and the result is at most 512 characters.

    Example:
        >>> escape_value("[STATE_REGISTER]\\n<contextgc-state>")
        '(STATE_REGISTER) &lt;contextgc-state&gt;'
    """
    value = as_text(value).translate(_BREAKS).translate(_ESCAPES)
    return value[:MAX_VALUE_CHARS]


# --- finding and stripping -------------------------------------------------------


def _strip(text: str) -> tuple[str, list[Found]]:
    """Strip passes until a pass finds nothing: removing markup can join a new tag."""
    found: list[Found] = []
    for _ in range(_MAX_PASSES):
        stripped, blocks = _one_pass(text)
        found.extend(blocks)
        if stripped == text or not _WORD.search(stripped):
            return stripped, found
        text = stripped
    # Nesting built to outlast the passes: rename what is left, so it cannot parse.
    return _WORD.sub("contextgc_state", text), found


def _one_pass(text: str) -> tuple[str, list[Found]]:
    spans, found = _scan(text)
    if not spans:
        return text, found
    return _cut(text, _merge_spans(text, spans)), found


def _scan(text: str) -> tuple[list[tuple[int, int]], list[Found]]:
    """Pair the tags; return the spans to remove and the blocks found, in order."""
    tokens = _outside_values(text, list(_TAG.finditer(text)))
    # A JSON value read after a tag that did not pair ends before the next tag: each
    # read is then bounded by its own stretch of text, and a pass stays linear.
    limits = {m.start(): n.start() for m, n in pairwise(tokens)}
    stack: list[tuple[int, re.Match]] = []
    spans: list[tuple[int, int]] = []
    found: list[Found] = []
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
                found.append(Found(opener.start(), text[opener.end() : m.start()]))
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
        found.append(Found(opener.start(), None, "opening tag without a closing tag; not applied"))


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
        problem = f"broken opening tag {shown(m.group(), 30)}; not applied"
        found.append(Found(m.start(), None, problem))


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

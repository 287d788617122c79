"""Protocol blocks in a tool call's arguments: cut out so that the arguments stay the JSON
the agent wrote.

A block may stand inside one of the arguments' strings (``{"note": "<contextgc-state>…"}``)
or as a member of their object (``{"contextgc-state": {...}, "cmd": "ls"}``), as models
write it. Cut as plain text, either breaks the JSON; read and written again, the JSON would
lose what a float cannot hold and the first of a repeated key. So members are cut out of
the text with the comma beside them, and strings are stripped one by one.
"""

from __future__ import annotations

import json
import re

from compiler.protocol.block_body import MARK, normalise_key
from compiler.protocol.protocol import strip_blocks

_JSON_SPACE = re.compile(r"[ \t\n\r]*")
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)  # in valid JSON, quotes open strings
_DECODER = json.JSONDecoder()


def strip_blocks_in_arguments(arguments: str) -> tuple[str, int]:
    """``strip_blocks`` for a tool call's arguments, which stay valid JSON when they were:
    where cutting the text would break it (a block written as a member,
    ``{"contextgc-state": {...}, "cmd": "ls"}``), each member named for a block is cut
    out of the text with the comma beside it. Nothing else is touched: every other member
    keeps its spelling, numbers and repeated keys included, since the call is the agent's
    action.

    Example:
        >>> strip_blocks_in_arguments('{"contextgc-state": {"assert": {"x": "1"}}, "cmd": "ls"}')
        ('{"cmd": "ls"}', 1)
        >>> strip_blocks_in_arguments('{"note": "hi <contextgc-state>{}</contextgc-state>"}')
        ('{"note": "hi"}', 1)
        >>> strip_blocks_in_arguments('{"n": 1.10, "contextgc-state": {}, "n": 1e400}')
        ('{"n": 1.10, "n": 1e400}', 1)
        >>> strip_blocks_in_arguments('{"pattern": "<contextgc-state {}", "b": 1}')
        ('{"pattern": "", "b": 1}', 1)
    """
    if MARK not in arguments.lower():
        return arguments, 0
    if not _is_json(arguments):
        return strip_blocks(arguments)
    try:
        cuts, members = _member_cuts(arguments)
        kept = "".join(arguments[a:b] for a, b in _between(cuts, len(arguments)))
        kept, inside = _strip_strings(kept)
    except (ValueError, RecursionError, IndexError):
        return strip_blocks(arguments)  # not walked: the markup goes, as in any other text
    return kept, members + inside


def _strip_strings(text: str) -> tuple[str, int]:
    """A JSON text with ``strip_blocks`` applied inside each string that holds the mark,
    the string written again as JSON; nothing outside strings is touched. (Cut as plain
    text, ``{"pattern": "contextgc-state {}"}`` lost its closing quote.)"""
    removed = 0

    def strip(token: re.Match) -> str:
        nonlocal removed
        if MARK not in token.group().lower():
            return token.group()
        value, count = strip_blocks(json.loads(token.group()))
        removed += count
        return json.dumps(value, ensure_ascii=False) if count else token.group()

    return _STRING.sub(strip, text), removed


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except (ValueError, RecursionError):
        return False
    return True


def _member_cuts(text: str) -> tuple[list[tuple[int, int]], int]:
    """Where the members named for a block stand in a JSON text, each span with the comma
    that joins it to a kept neighbour (all of them, if no member is kept), in text order;
    and how many members they hold. Containers are walked from a list of their positions,
    not by recursion, and a value is skipped by decoding it, so any nesting the decoder
    reads is walked."""
    cuts: list[tuple[int, int]] = []
    count = 0
    todo = [_JSON_SPACE.match(text).end()]
    while todo:
        pos = todo.pop()
        opener = text[pos]
        if opener not in "{[":
            continue
        members: list[tuple[int, int, bool]] = []
        i = _JSON_SPACE.match(text, pos + 1).end()
        while text[i] not in "}]":
            named, value = False, i
            if opener == "{":
                key, after = json.decoder.scanstring(text, i + 1)
                named = MARK in key.lower() or normalise_key(key) == "contextgc_state"
                colon = _JSON_SPACE.match(text, after).end()
                value = _JSON_SPACE.match(text, colon + 1).end()
            end = _DECODER.raw_decode(text, value)[1]
            if not named:
                todo.append(value)
            members.append((i, end, named))
            i = _JSON_SPACE.match(text, end).end()
            if text[i] == ",":
                i = _JSON_SPACE.match(text, i + 1).end()
        cuts += _named_runs(members)
        count += sum(1 for *_, is_named in members if is_named)
    return sorted(cuts), count


def _named_runs(members: list[tuple[int, int, bool]]) -> list[tuple[int, int]]:
    """The spans to cut for one object's members (start, end, named): a run of named
    members up to the next kept one, or from the kept one before it, or all of them."""
    spans = []
    index = 0
    while index < len(members):
        if not members[index][2]:
            index += 1
            continue
        last = index
        while last + 1 < len(members) and members[last + 1][2]:
            last += 1
        if last + 1 < len(members):
            spans.append((members[index][0], members[last + 1][0]))
        elif index:
            spans.append((members[index - 1][1], members[last][1]))
        else:
            spans.append((members[index][0], members[last][1]))
        index = last + 1
    return spans


def _between(cuts: list[tuple[int, int]], size: int) -> list[tuple[int, int]]:
    """The spans of a text of ``size`` characters that ``cuts`` (sorted, disjoint) leave."""
    kept, at = [], 0
    for start, end in cuts:
        kept.append((at, start))
        at = end
    kept.append((at, size))
    return kept

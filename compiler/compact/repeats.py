"""What a payload repeats that another one, still in front of the model, shows already.

The payload plan decides which payloads are visible and which one is shown again
(``plan_repeats.RepeatCut``); these helpers only rewrite one text, and each returns None
when it changes nothing. A JSON value shown verbatim earlier becomes a pointer to that turn
(``write_pointers``), and SWE-agent status lines that repeat what was stated above are left
out (``drop_repeated_status``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from enum import StrEnum

from compiler.compact.read_keys import FILE_VIEW
from compiler.compact.safety import has_safety_signal
from compiler.read import canonical_dumps, decode_json, dumps, exact_numbers, json_text, may_be_json

_DECODER = json.JSONDecoder()


class Repeat(StrEnum):
    """Why a payload that no shape compacted was shortened (its telemetry ``shape``)."""

    CHECKLIST = "review_checklist"  # SWE-agent's advice after an edit, shown later
    VALUE = "repeated_value"  # a JSON value an earlier payload shows verbatim
    STATUS = "status_lines"  # SWE-agent's status lines, repeating what was stated
    LINES = "repeated_lines"  # a file view's lines an earlier view shows verbatim
    FORM = "shared_form"  # runs of log lines in one form, as the form and a row each


_STATUS_LINE = re.compile(r"\((Open file|Current directory): (.*)\)\r?|bash-\$\s*|\s*")
_BLANK = re.compile(r"\s*")


def status_values(text: str) -> tuple[str | None, str | None]:
    r"""The open file and current directory stated by the status lines (SWE-agent's) that
    end a text, each None where none is.

    Example:
        >>> status_values("ok\n(Open file: /r/a.py)\n(Current directory: /r)\nbash-$")
        ('/r/a.py', '/r')
        >>> status_values("(Open file: /r/a.py) is not at the end")
        (None, None)
    """
    last = text[-1:]
    if last not in _STATUS_ENDS and not last.isspace():
        return _NO_STATUS  # (at once for most texts: no status line ends them)
    found: dict[str, str] = {}
    _status_start(text, found)
    return found.get("Open file"), found.get("Current directory")


# What a text may end with, blank space aside, for a status block to end it: a status line
# ends with ")" or "$" (``_status_start``); an empty text is left to it too.
_STATUS_ENDS = ("", ")", "$")
_NO_STATUS = (None, None)


def drop_repeated_status(
    text: str, open_file: str | None, directory: str | None
) -> tuple[str, int] | None:
    r"""``text`` without the status lines at its end that repeat what is stated above it:
    ``(Open file: P)`` when ``P`` is ``open_file`` or the file this view shows,
    ``(Current directory: D)`` when ``D`` is ``directory``, and the bare ``bash-$``
    prompt. A line carrying a safety signal stays. Returns the text and how many lines
    went, or None when none did.

    Example:
        >>> tail = "\n\n(Open file: /r/a.py)\n(Current directory: /r)\nbash-$"
        >>> drop_repeated_status("344" + tail, "/r/a.py", "/r")
        ('344', 3)
        >>> drop_repeated_status("344" + tail, "/r/b.py", "/r")
        ('344\n\n(Open file: /r/a.py)', 2)
        >>> drop_repeated_status("[File: /r/a.py (9 lines total)]\n1:x" + tail, None, None)
        ('[File: /r/a.py (9 lines total)]\n1:x\n\n(Current directory: /r)', 2)
    """
    start = _status_start(text)
    if _BLANK.match(text, 0, start).end() == start:  # (``text[:start]`` would copy a view)
        return None  # nothing but status lines (or none): the payload is left as it is
    view = None  # the file the last view above the status lines shows
    at = text.rfind("[File: ", 0, start)  # (from the end: a view may be long)
    while at >= 0:
        match = FILE_VIEW.match(text, at, start)  # (one line, that begins at a line)
        if match is not None:
            view = match.group(1).strip()
            break
        at = text.rfind("[File: ", 0, at)
    kept, dropped, stated = [], 0, False
    flagged = has_safety_signal(text[start:])  # (most blocks name no such path)
    for line in text[start:].split("\n"):
        match = _STATUS_LINE.fullmatch(line)
        name, value = match.group(1), (match.group(2) or "").strip()
        if name == "Open file":
            repeats = value in (open_file, view)
        elif name == "Current directory":
            repeats = value == directory
        else:
            repeats = line.strip() == "bash-$"
        if repeats and not (flagged and has_safety_signal(line)):
            dropped += 1
            continue
        kept.append(line)
        stated = stated or bool(line.strip())
    if not dropped:
        return None
    if not stated:
        return text[:start].rstrip("\r\n"), dropped
    while not kept[-1].strip():
        kept.pop()
    return text[:start] + "\n".join(kept), dropped


def _status_start(text: str, found: dict | None = None) -> int:
    """Where the block of status and blank lines that ends ``text`` begins (its length
    when the last line is no status line). ``found``, when given, gets what the block
    states: each kind of status line's value, as its last such line gives it."""
    start = end = len(text)
    last = end - 1
    while last >= 0 and text[last].isspace():
        last -= 1
    if last < 0 or text[last] not in ")$":
        return start  # a status line ends with ")" or "$"
    while end >= 0:
        begins = text.rfind("\n", 0, end) + 1
        match = _STATUS_LINE.fullmatch(text, begins, end)
        if not match:
            break
        if text[begins:end].strip():
            start = begins  # (blank lines alone do not make a block)
            if found is not None and match.group(1):  # (read from the end: the last wins)
                found.setdefault(match.group(1), match.group(2).strip())
        if begins == 0:
            break
        end = begins - 1
    return start


REPEAT_CHARS = 60  # a JSON value shorter than this is left where it is, even if repeated
REPEAT_DEPTH = 2  # how deep in a payload a value is looked for: an order's address, a card
_NESTED = (dict, list)  # (a tuple: ``dict | list`` is built anew at each isinstance)


def canonical_value(node: object) -> str:
    """A JSON value written one way whatever its key order (sorted keys, ASCII)."""
    return canonical_dumps(node)


def json_values(text: str, memo: dict | None = None) -> tuple[object, str, str] | None:
    r"""The JSON a payload shows, as the value, its text and the text after it: the whole
    payload when it is JSON, else its first line when that is a JSON object (the fields
    around a compacted collection); None for anything else.

    Example:
        >>> json_values('{"a": 1}\n[rows: 3 rows]')
        ({'a': 1}, '{"a": 1}', '\n[rows: 3 rows]')
    """
    if not may_be_json(text):  # (``[File: a.py …]``: no copy of it, no decoder error)
        return None
    stripped = text.strip()
    if stripped[:1] not in ("{", "["):
        return None
    if memo is not None:
        known = _decoded_values(stripped, memo)
        if known is not None:
            return known
    # One read finds both: the value the text opens with, and where it ends. (Decoding
    # the whole text and then its first line reads that line twice and raises on every
    # compacted payload, which costs ten times the read.) A first line that is a JSON
    # object ends where the value read from the whole text does, since reading a value
    # never looks past its closing bracket.
    try:
        value, end = _DECODER.raw_decode(stripped)
    except (ValueError, RecursionError):
        return None
    if end == len(stripped):
        return value, stripped, ""
    if isinstance(value, dict) and stripped.find("\n") == end:
        return value, stripped[:end], stripped[end:]
    return None


def _decoded_values(stripped: str, memo: dict) -> tuple[object, str, str] | None:
    """What ``json_values`` reads of a text, where ``memo`` holds it decoded already: a
    payload as it was read, or the JSON a compacted payload opens with (``compact_json``
    writes that there). None when it does not."""
    newline = stripped.find("\n")
    if newline > 0:  # (the first line first: a compacted payload's is short)
        head = stripped[:newline]
        value = memo.get(head)
        # a JSON object read as the whole first line, which ends where the object does
        if isinstance(value, dict) and head[-1] == "}":
            return value, head, stripped[newline:]
    if stripped in memo:
        try:
            return decode_json(stripped, memo), stripped, ""
        except ValueError:
            pass
    return None


def value_size(node: dict | list) -> tuple[bool, int]:
    """What two equal objects or arrays share, found without reading them: whether each is
    an object, and its length.

    Example:
        >>> value_size({"b": 1, "a": 2}) == value_size({"a": 0, "c": 0}), value_size([1, 2])
        (True, (False, 2))
    """
    return isinstance(node, dict), len(node)


def inner_values(value: object, without: frozenset = frozenset()) -> list:
    """The objects and arrays ``value`` shows, down to the values of its top-level values
    (``REPEAT_DEPTH``): those a later payload's top-level value may repeat. ``without``
    names top-level keys whose values are not shown (nor the whole value, then).

    Example:
        >>> inner_values({"a": {"b": [1]}, "c": [2]}, without=frozenset({"c"}))
        [{'b': [1]}, [1]]
    """
    level = [f for key, f in value.items() if key not in without] if without else [value]
    found: list = []
    for depth in range(REPEAT_DEPTH + (not without), 0, -1):
        level = [node for node in level if isinstance(node, _NESTED) and node]
        found.extend(level)
        if depth > 1:  # (the children of the deepest level are not looked at)
            level = [
                child
                for node in level
                for child in (node.values() if isinstance(node, dict) else node)
            ]
    return found


def nested_fields(value: dict) -> list[tuple[str, dict | list]]:
    """The top-level objects and arrays of a JSON object that hold anything, with their
    keys: those that may be written as a pointer (``first_shown``).

    Example:
        >>> nested_fields({"id": 1, "tags": [], "note": {"text": "x"}})
        [('note', {'text': 'x'})]
    """
    return [(key, f) for key, f in value.items() if isinstance(f, _NESTED) and f]


def first_shown(field: dict | list, earlier: Sequence[tuple], nan: bool = False) -> int | None:
    """The turn of the first earlier payload that shows ``field`` written out canonically
    (``canonical_value``), when ``field``'s compact JSON is at least ``REPEAT_CHARS`` long;
    else None. ``earlier``: what each earlier payload shows (``inner_values``), with its
    turn, in order.

    Two values canonical JSON writes the same are equal as Python values, so only those
    ``==`` finds equal are written out: ``in`` and ``==`` stop at the first difference,
    with no text built. ``nan``: a NaN may be in either, which equals nothing, not even
    itself; then every value of the same size (``value_size``) is written out. Two values
    whose compact JSON is the same (their keys in one order, as one source writes them)
    need no canonical JSON.

    Example:
        >>> note = {"text": "x" * 60, "n": 1}
        >>> shows = [({"text": "y" * 60, "n": 1}, 2), ({"n": 1, "text": "x" * 60}, 5)]
        >>> first_shown(note, [(inner_values(value), turn) for value, turn in shows])
        5
        >>> first_shown({"text": "x" * 60, "n": 1.0}, [(inner_values(note), 5)]) is None
        True
        >>> first_shown({"text": "x"}, [(inner_values({"text": "x"}), 5)]) is None  # short
        True
    """
    size = value_size(field) if nan else None
    written = canonical = None
    for nodes, turn in earlier:
        if not nan and field not in nodes:
            continue
        for node in nodes:
            if node != field and (not nan or value_size(node) != size):
                continue
            if written is None:
                written = dumps(field)
                if len(written) < REPEAT_CHARS:
                    return None
            if dumps(node) == written:
                return turn
            canonical = canonical or canonical_value(field)
            if canonical_value(node) == canonical:
                return turn
    return None


def write_pointers(value: dict, written: str, rest: str, turns: tuple) -> str | None:
    r"""A payload's JSON object ``value`` (``written`` as its text, ``rest`` the text after
    it) written back with each key of ``turns`` (key, turn pairs) holding ``"[same as turn
    N]"``: the turn of an earlier payload that shows the same value. None when it cannot be
    written back as it was read (a number a float would change, a key given twice, an
    escape), or when what it writes is no shorter.

    Example:
        >>> address = {"street": "1 Elm Street", "city": "Austin", "zip": "73301-0001"}
        >>> user = {"id": "U1", "address": address}
        >>> write_pointers(user, json.dumps(user), "", (("address", 4),))
        '{"id":"U1","address":"[same as turn 4]"}'
        >>> twice = '{"id": "U0", ' + json.dumps(user)[1:]  # a key given twice
        >>> write_pointers(json.loads(twice), twice, "", (("address", 4),)) is None
        True
        >>> big = '{"id": "U1", "n": [1E15, 2E15, 3E15], "address": {"zip": "7"}}'
        >>> write_pointers(json.loads(big), big, "", (("address", 4),)) is None
        True
    """
    if "\\u" in written or not exact_numbers(written):
        return None
    pointers = {key: f"[same as turn {turn}]" for key, turn in turns}
    text = json_text({**value, **pointers})
    # A key given twice is read once: writing the value back would lose one. Every key is
    # written with a ":", so the value written back whole would hold as many as
    # ``written`` does; those are the ones ``text`` holds and the ones of the values it
    # points away from (a pointer holds none), found without writing the whole again.
    colons = text.count(":") + sum(dumps(value[key]).count(":") for key, _ in turns)
    if colons != written.count(":") or len(text) >= len(written):
        return None  # (written back, numbers can grow: 1E15 as 1000000000000000.0)
    return text + rest

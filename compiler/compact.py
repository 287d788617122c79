"""Compact one tool payload: fewer characters, every safety signal kept, omissions disclosed.

``compact`` reads a payload by its content, never by the role it was filed under: JSON
records, a directory or search listing, test-runner output, a Python stack trace, a unified
diff, or long text. It keeps what a model needs (the head rows, the failures, the frames
around the error, the changed lines), counts what it dropped in the text itself with
``truncated=true``, and never drops a row that carries a safety signal (``compiler.safety``).

Three guarantees hold for every input: the result is never longer than the input (when
nothing is gained the original comes back with ``changed=False``), the same input gives the
same bytes, and nothing raises.

Decisions worth knowing:

- A SWE-agent file view (``[File: path (N lines total)]`` and numbered lines) is passed
  through whole. It is the window the agent scrolled to on purpose and edits by line
  number; cutting its middle removes the very lines it asked for. A view that has gone
  stale is a question about later turns, which one payload cannot answer.
- Safety terms match on letter boundaries, so ``PEANUT_ALLERGEN`` and ``date_of_birth``
  match (``_`` is not a letter) while ``DeprecationWarning`` or ``adobe`` do not. A path
  such as ``warnings.py`` does match: keeping one extra row is cheap, dropping a real
  warning is not. A body is scanned whole, not line by line, so a phrase wrapped across a
  line break ("Do" / "not exceed") keeps every line it touches.
- JSON is re-serialised compactly (``compiler.compact_json``); numbers go through
  ``float`` like any JSON reader, and a document with a duplicate key is treated as text,
  since re-serialising it would lose one.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from itertools import accumulate
from typing import Any, NamedTuple

from compiler.compact_json import (
    compact_json,
    decode_json,
    exact_numbers,
    json_text,
    summary_floor,
)
from compiler.frozen import build
from compiler.prefilter import admits, checking_order, fold, required_literals

# the safety scan lives in compiler.safety; these names are read from here too (tests do)
from compiler.safety import (  # noqa: F401
    _CARD,
    _EMAIL,
    _SAFETY,
    _WORDS,
    _luhn_valid,
    has_safety_signal,
    safety_spans,
    segments_touched,
)

HEAD_ROWS = 3  # JSON records kept from the top of a collection
SHORT_CHARS = 400  # a payload shorter than this is returned as it is
LONG_CHARS = 1500  # plain text longer than this is cut to head and tail
HEAD_CHARS = 500
TAIL_CHARS = 500
PIECE_CHARS = 400  # long lines are handled in pieces of this size
LISTING_HEAD_ROWS = 10
LISTING_MIN_ROWS = 12
HEAD_FRAMES = 1
TAIL_FRAMES = 2
PROJECT_FRAMES = 20  # frames of the project's own code kept, nearest the error first
DIFF_CHANGED_LINES = 200


class Shape(StrEnum):
    """What a payload was read as."""

    JSON_RECORDS = "json_records"
    JSON_OBJECT = "json_object"
    LISTING = "listing"
    TEST_OUTPUT = "test_output"
    STACK_TRACE = "stack_trace"
    DIFF = "diff"
    LONG_TEXT = "long_text"
    NONE = "none"


@dataclass(frozen=True)
class Compacted:
    """One compacted payload and what it cost.

    ``text`` is what the model receives; it is the original whenever ``changed`` is False.
    A row is a record (JSON), a line (listing, test output, diff), a frame (stack trace) or
    a line piece (long text). ``safety_rows_kept`` counts every kept row that carries a
    safety signal, including those among the head rows. The counts are 0 when nothing
    changed.
    """

    text: str
    shape: str
    original_chars: int
    compacted_chars: int
    rows_total: int
    rows_kept: int
    rows_dropped: int
    safety_rows_kept: int
    changed: bool


class _Draft(NamedTuple):  # named tuples, not dataclasses: a _Unit is built for every line
    text: str
    rows_total: int = 0
    rows_kept: int = 0
    safety_rows_kept: int = 0


class _Unit(NamedTuple):
    """A run of output that is kept or dropped as one; ``rows`` is how many it counts."""

    text: str
    keep: bool
    rows: int = 1
    safety: bool = False


def compact(
    text: str, *, tool_name: str | None = None, head_rows: int = HEAD_ROWS, memo=None
) -> Compacted:
    """Compact one tool payload, keeping safety rows and disclosing every omission.

    ``tool_name`` labels a top-level list of records; ``head_rows`` is how many records
    of a JSON collection are kept besides the safety-flagged ones; ``memo`` holds the
    JSON texts the caller decoded before (``compact_json.decode_json``).

    Example:
        >>> import json
        >>> rows = [{"id": i, "note": "in stock"} for i in range(25)]
        >>> rows[14]["note"] = "PEANUT_ALLERGEN warning"
        >>> c = compact(json.dumps({"store": "north", "items": rows}))
        >>> print(c.text)
        {"store":"north"}
        [items: 25 rows, showing 4 (first 3 + 1 safety-flagged); 21 omitted (truncated=true)]
        columns=["id","note"]
        [0,"in stock"]
        [1,"in stock"]
        [2,"in stock"]
        [14,"PEANUT_ALLERGEN warning"]
        >>> print(c.shape, c.rows_dropped, c.safety_rows_kept, c.changed)
        json_records 21 1 True
        >>> compact("short payloads come back as they are").changed
        False
    """
    shape, draft = Shape.NONE, None
    if len(text) >= SHORT_CHARS:
        shape, draft = _compact_by_shape(text, tool_name, max(0, head_rows), memo)
    if draft is None or len(draft.text) >= len(text):
        return unchanged(text, shape)
    return build(
        Compacted,
        text=draft.text,
        shape=shape,
        original_chars=len(text),
        compacted_chars=len(draft.text),
        rows_total=draft.rows_total,
        rows_kept=draft.rows_kept,
        rows_dropped=draft.rows_total - draft.rows_kept,
        safety_rows_kept=draft.safety_rows_kept,
        changed=True,
    )


def compacts_longer_than(text: str, chars: int, *, memo=None) -> bool:
    """Whether ``compact(text)`` is certainly longer than ``chars`` characters, found
    without compacting: a stale read's notice of ``chars`` wins over it (``progress``).

    False says only that it was not shown cheaply. It is shown for a text too short to be
    compacted, and for a JSON object whose fields around its largest collection
    (``compact_json.summary_floor``) are longer, once it is known to be read as JSON: no
    ``\\u`` escape (which is decoded another way), no duplicate key (which makes it text,
    see ``compact_json``), and few enough brackets that walking it cannot recurse too deep.
    The floor holds for the original too, which comes back when nothing is gained.

    Example:
        >>> rows = ",".join(f'{{"n": {i}}}' for i in range(60))
        >>> text = '{"id": "R1", "note": "' + "x" * 40 + '", "rows": [' + rows + "]}"
        >>> compacts_longer_than(text, 50), len(compact(text).text) > 50
        (True, True)
        >>> compacts_longer_than(text, 80)
        False
    """
    if len(text) < SHORT_CHARS:
        return len(text) > chars  # returned as it is
    if "\\u" in text or text[-1:] != "}" or not _JSON_START.match(text):
        return False
    if text.count("{") + text.count("[") > _SHALLOW:
        return False
    try:
        value = decode_json(text, memo)
    except (ValueError, RecursionError):
        return False
    if not exact_numbers(text):
        return False  # compacted as text (compact_json): no floor to read
    if summary_floor(value, LONG_CHARS) <= chars:
        return False
    return json_text(value).count(":") == text.count(":")  # else a key was lost: read as text


_SHALLOW = 100  # brackets: a value nested no deeper is walked far below the recursion limit


def unchanged(text: str, shape: str) -> Compacted:
    """The result for a payload left as it is."""
    size = len(text)
    return build(
        Compacted,
        text=text,
        shape=shape,
        original_chars=size,
        compacted_chars=size,
        rows_total=0,
        rows_kept=0,
        rows_dropped=0,
        safety_rows_kept=0,
        changed=False,
    )


# ---------------------------------------------------------------------------------------
# Dispatch: the order in which shapes are tried is data.

_JSON_START = re.compile(r"\s*[\[{]")
_FILE_VIEW = re.compile(r"^\[File: .+\(\d+ lines total\)\]\r?$", re.MULTILINE)
_FILE_VIEW_NEEDS = checking_order(required_literals(_FILE_VIEW))
_TRAILER_LINE = re.compile(r"\((?:Open file|Current directory): .*\)|bash-\$|\s*")


def _compact_by_shape(
    text: str, tool_name: str | None, head_rows: int, memo
) -> tuple[Shape, _Draft | None]:
    body, trailer = _split_trailer(text)
    if _JSON_START.match(body):
        found = compact_json(
            body, tool_name=tool_name, head_rows=head_rows, signal=has_safety_signal, memo=memo
        )
        if found is not None:  # else not JSON, or nested too deep to walk: read it as text
            shape = Shape.JSON_RECORDS if found.records else Shape.JSON_OBJECT
            counts = found.rows_total, found.rows_kept, found.safety_rows_kept
            if not found.records and len(found.text) > LONG_CHARS:
                cut = _with_long_strings_cut(decode_json(body, memo))
                if cut is not None and len(cut.text) < len(found.text):
                    return Shape.JSON_OBJECT, _Draft(cut.text + trailer, *_counts(cut))
            return shape, _Draft(found.text + trailer, *counts)
    folded = fold(body)
    if admits(_FILE_VIEW_NEEDS, folded) and _FILE_VIEW.search(body):
        return Shape.NONE, None
    detected = Shape.NONE
    for shape, needs, detect, compactor in _TEXT_SHAPES:
        if not admits(needs, folded) or not detect(body):
            continue
        draft = compactor(body)
        if len(draft.text) < len(body):
            return shape, _Draft(draft.text + trailer, *_counts(draft))
        # nothing gained (a traceback without frames, say): the next shape may still fit
        detected = shape if detected is Shape.NONE else detected
    return detected, None


def _counts(draft: _Draft) -> tuple[int, int, int]:
    return draft.rows_total, draft.rows_kept, draft.safety_rows_kept


def _with_long_strings_cut(value: Any) -> _Draft | None:
    r"""A JSON value with no collection to summarise whose bulk is text (a file's content
    in a ``read_file`` result): each string over ``LONG_CHARS`` cut as long text is cut,
    head and tail and every safety line kept, the omission marked inside the string.
    None when no string is that long.

    Example:
        >>> lines = [f"line {i} of the file" for i in range(200)]
        >>> lines[120] = "WARNING: do not run as root"
        >>> cut = _with_long_strings_cut({"path": "a.txt", "content": "\n".join(lines)})
        >>> import json; content = json.loads(cut.text)["content"]
        >>> "WARNING: do not run as root" in content, "truncated=true" in content
        (True, True)
        >>> cut.safety_rows_kept, _with_long_strings_cut({"a": "short"})
        (1, None)
    """
    drafts: list[_Draft] = []

    def cut(node: Any) -> Any:
        if isinstance(node, str):
            if len(node) <= LONG_CHARS:
                return node
            draft = _compact_long_text(node)
            if len(draft.text) >= len(node):
                return node
            drafts.append(draft)
            return draft.text
        if isinstance(node, dict):
            return {key: cut(child) for key, child in node.items()}
        if isinstance(node, list):
            return [cut(child) for child in node]
        return node

    try:
        shortened = cut(value)
    except RecursionError:  # nested deeper than the stack allows: left as plain JSON
        return None
    if not drafts:
        return None
    return _Draft(
        json_text(shortened),
        sum(d.rows_total for d in drafts),
        sum(d.rows_kept for d in drafts),
        sum(d.safety_rows_kept for d in drafts),
    )


def _split_trailer(text: str) -> tuple[str, str]:
    """Split off the shell footer SWE-agent appends, kept verbatim by every shape."""
    last = text[-1:]
    if last and last not in ")$" and not last.isspace():
        return text, ""  # a footer line ends with ")" or "$", or is blank: a JSON payload
    cut = len(text)
    while cut > 0:
        start = text.rfind("\n", 0, cut) + 1
        line = text[start:cut].rstrip("\r")
        if not _TRAILER_LINE.fullmatch(line) or start == 0:
            break
        cut = start - 1
    return text[:cut], text[cut:]


# ---------------------------------------------------------------------------------------
# Text shapes


def _emit_gaps(units: list[_Unit], marker: Callable[[list[_Unit]], str]) -> str:
    """Join kept units; each run of dropped ones becomes one marker where it was."""
    parts: list[tuple[str, bool]] = []
    gap: list[_Unit] = []
    for unit in [*units, None]:
        if unit is not None and not unit.keep:
            gap.append(unit)
            continue
        if gap:
            parts.append((marker(gap), True))
            gap = []
        if unit is not None:
            parts.append((unit.text, False))
    return _join(parts)


def _emit_merged(units: list[_Unit], marker: Callable[[list[_Unit]], str]) -> str:
    """Join kept units with one marker for everything dropped, at the first gap after
    something kept (a gap before the first kept unit would read as a preamble)."""
    dropped = [unit for unit in units if not unit.keep]
    parts: list[tuple[str, bool]] = []
    placed = not dropped
    for unit in units:
        if unit.keep:
            parts.append((unit.text, False))
        elif parts and not placed:
            parts.append((marker(dropped), True))
            placed = True
    if not placed:
        parts.insert(0, (marker(dropped), True))
    return _join(parts)


def _join(parts: list[tuple[str, bool]]) -> str:
    """Concatenate, putting each marker on a line of its own."""
    out: list[str] = []
    for index, (text, is_marker) in enumerate(parts):
        if is_marker and text:
            if out and not out[-1].endswith("\n"):
                out.append("\n")
            out.append(text + ("\n" if index + 1 < len(parts) else ""))
        elif not is_marker:
            out.append(text)
    return "".join(out)


def _lines(text: str) -> list[str]:
    """Lines split on ``\\n`` only, each with its newline, so joining gives the text back."""
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def _draft(units: list[_Unit], text: str) -> _Draft:
    total = sum(u.rows for u in units)
    kept = sum(u.rows for u in units if u.keep)
    safety = sum(u.rows for u in units if u.keep and u.safety)
    return _Draft(text, total, kept, safety)


def _marker_line(body: str) -> str:
    return f"[… {body} (truncated=true) …]"


# Listings ------------------------------------------------------------------------------

_LISTING_FRAME = re.compile(
    r"(?:Found \d+ match|End of matches for|No matches found for"
    r"|More than \d+ files matched|total \d+$).*"
)
_LISTING_ROW = re.compile(
    r"""\S+/?
      |\S+\ \(\d+\ matches?\)
      |[^\s:]+:\d+[:-].*
      |[^\s:]+\.\w+:.*
      |Line\ \d+:.*
      |[-dlcbps][-rwxsStT]{9}[.@+]?\s.*
      |\S+(?:[ \t]{2,}\S+)+
    """,
    re.VERBOSE,
)


def _is_listing(body: str) -> bool:
    lines = [line.rstrip("\r") for line in body.split("\n") if line.strip()]
    if len(lines) < LISTING_MIN_ROWS:
        return False
    need, misses = 0.9 * len(lines), 0
    for line in lines:
        if not (_LISTING_ROW.fullmatch(line) or _LISTING_FRAME.match(line)):
            misses += 1
            if len(lines) - misses < need:
                return False  # too many lines are no row already
    return True


def _flagged(body: str, parts: list[str]) -> list[bool]:
    """Whether a safety match in ``body`` overlaps each of ``parts`` (which, joined, are
    ``body``). The body is scanned whole, so a phrase wrapped across a line break ("Do" /
    "not exceed") flags every line it touches.

    Example:
        >>> _flagged("Do\\nnot exceed\\nok\\n", ["Do\\n", "not exceed\\n", "ok\\n"])
        [True, True, False]
    """
    if not parts:
        return []
    return segments_touched(body, list(accumulate(map(len, parts[:-1]), initial=0)))


def _compact_listing(body: str) -> _Draft:
    units, seen, lines = [], 0, _lines(body)
    for line, flag in zip(lines, _flagged(body, lines), strict=True):
        bare = line.strip()
        if _LISTING_FRAME.match(bare) or (not bare and (seen <= LISTING_HEAD_ROWS or flag)):
            units.append(_Unit(line, keep=True, rows=0))
            continue
        if not bare:
            units.append(_Unit(line, keep=False, rows=0))
            continue
        seen += 1
        units.append(_Unit(line, keep=seen <= LISTING_HEAD_ROWS or flag, safety=flag))
    return _draft(units, _emit_gaps(units, _rows_marker))


def _rows_marker(gap: list[_Unit]) -> str:
    rows = sum(u.rows for u in gap)
    return _marker_line(f"{rows} rows omitted") if rows else ""


# Test-runner output --------------------------------------------------------------------

_TEST_RUN = re.compile(
    r"^=+ test session starts =+\r?$"
    # bounded gaps: a crafted line of repeated "1 passed" must not backtrack for ever
    r"|^=+ [^\n]{0,160}\b\d+ (?:passed|failed|errors?)\b[^\n]{0,160} in [\d.]+s"
    r"|^Ran \d+ tests? in [\d.]+s\r?$"
    r"|^collected \d+ items?",
    re.MULTILINE,
)
_TEST_SECTION = re.compile(r"[=_-]{3,}")
_TEST_KEEP = re.compile(
    r"^E\s|^>\s|^\S+:\d+: \S"
    r"|\b(?:FAILED|ERROR|FAIL|XPASS|XPASSED)\b"
    r"|^Ran \d+ tests?|^OK\b"
    r"|^Traceback \(most recent call last\)"
    r"|^[\w.]*(?:Error|Exception|Exit|Interrupt)\b"
    r"|\b\d+ (?:failed|passed|errors?|skipped|xfailed|xpassed|deselected)\b"
)


def _compact_test_output(body: str) -> _Draft:
    units, summary, frame_source, lines = [], False, False, _lines(body)
    for line, flag in zip(lines, _flagged(body, lines), strict=True):
        if _TEST_SECTION.match(line):
            summary = "short test summary info" in line
            units.append(_Unit(line, keep=True))
            continue
        # a unittest frame: its ``File`` line and the source line under it say where
        keep = summary or flag or frame_source or _TEST_KEEP.search(line) is not None
        frame_source = _FRAME.match(line) is not None
        units.append(_Unit(line, keep=keep or frame_source, safety=flag))
    total = len(units)

    def marker(dropped: list[_Unit]) -> str:
        what = "passing tests, progress and source context"
        return _marker_line(f"{len(dropped)} of {total} lines omitted: {what}")

    return _draft(units, _emit_merged(units, marker))


# Stack traces --------------------------------------------------------------------------

_TRACEBACK = re.compile(r"^\s*Traceback \(most recent call last\):", re.MULTILINE)
_FRAME = re.compile(r"\s+File \"")


def _compact_stack_trace(body: str) -> _Draft:
    lines, units, i = _lines(body), [], 0
    flags = _flagged(body, lines)
    while i < len(lines):
        units.append(_Unit(lines[i], keep=True, rows=0))
        if _TRACEBACK.match(lines[i]):
            frames, i = _frames(lines, flags, i + 1)
            units.extend(_frame_units(frames))
        else:
            i += 1
    return _draft(units, _emit_gaps(units, _frames_marker))


def _frames(lines: list[str], flags: list[bool], i: int) -> tuple[list[tuple[str, bool]], int]:
    """The frames after a ``Traceback`` line, each with its source lines and whether a
    safety match touches one of them; and where they end."""
    frames: list[tuple[str, bool]] = []
    while i < len(lines) and lines[i][:1] in (" ", "\t"):
        if _FRAME.match(lines[i]) or not frames:
            frames.append((lines[i], flags[i]))
        else:
            frames[-1] = (frames[-1][0] + lines[i], frames[-1][1] or flags[i])
        i += 1
    return frames, i


def _frame_units(frames: list[tuple[str, bool]]) -> list[_Unit]:
    """The frames as units: the outermost and the innermost kept, those a safety match
    touches, and up to ``PROJECT_FRAMES`` of the project's own code, nearest the error
    first. Those are where the fix goes (``providers/memset.py, line 26``); the frames
    of installed packages and of Python itself are the ones left out."""
    own = PROJECT_FRAMES
    units = []
    for index in range(len(frames) - 1, -1, -1):
        frame, flag = frames[index]
        keep = flag or index < HEAD_FRAMES or index >= len(frames) - TAIL_FRAMES
        if not keep and own and _project_frame(frame):
            keep, own = True, own - 1
        units.append(_Unit(frame, keep=keep, safety=flag))
    return units[::-1]


_FRAME_PATH = re.compile(r'\s+File "([^"]*)"')
# where installed packages and Python's own modules live: a Windows install keeps the
# standard library in <prefix>\Lib\
_LIBRARY = re.compile(
    r"(?i:site-packages|dist-packages|[/\\]lib[/\\]python|<frozen |node_modules|^/usr/lib/)"
    r"|\\Lib\\"
)


def _project_frame(frame: str) -> bool:
    """Whether a Python frame runs a file of the project rather than a library's.

    Example:
        >>> _project_frame('  File "/lexicon/lexicon/providers/memset.py", line 26, in auth')
        True
        >>> _project_frame('  File "/opt/env/lib/python3.9/site-packages/requests/models.py"')
        False
        >>> _project_frame('  File "C:\\Python311\\Lib\\json\\decoder.py", line 337, in decode')
        False
    """
    match = _FRAME_PATH.match(frame)
    return match is not None and _LIBRARY.search(match[1]) is None


def _frames_marker(gap: list[_Unit]) -> str:
    return "  " + _marker_line(f"{len(gap)} frames omitted")


# Diffs ---------------------------------------------------------------------------------

_DIFF = re.compile(r"^diff --git |^--- \S.*\r?\n\+\+\+ \S.*\r?\n@@ ", re.MULTILINE)
_DIFF_HEADER = re.compile(
    r"diff --git |index |--- |\+\+\+ |@@ "
    r"|new file mode|deleted file mode|similarity |rename |Binary "
)


def _compact_diff(body: str) -> _Draft:
    units, changed, lines = [], 0, _lines(body)
    for line, flag in zip(lines, _flagged(body, lines), strict=True):
        if _DIFF_HEADER.match(line):
            keep = True
        elif line[:1] in ("+", "-"):
            changed += 1
            keep = changed <= DIFF_CHANGED_LINES
        else:
            keep = False
        units.append(_Unit(line, keep=keep or flag, safety=flag))
    total = len(units)

    def marker(dropped: list[_Unit]) -> str:
        what = "context lines and changes past the budget"
        return _marker_line(f"{len(dropped)} of {total} diff lines omitted: {what}")

    return _draft(units, _emit_merged(units, marker))


# Long text -----------------------------------------------------------------------------


def _is_long_text(body: str) -> bool:
    return len(body) > LONG_CHARS


# A line that reports a failure in the output of a test runner or a crash, which long
# text keeps wherever it stands: go test (--- FAIL, FAIL, x_test.go:17:), jest (FAIL, ●,
# Expected:, Received:), cargo (... FAILED, panicked at), Java (Caused by:, Exception in
# thread, an exception's own line), Python (an ExceptionGroup's line), and an error line
# as compilers and tools write it.
_FAILURE_AT_START = (
    r"[ \t]*(?:--- FAIL\b|FAIL\b|FAILED\b|ERROR\b|Caused by:|Exception in thread\b|● "
    r"|Expected:|Received:|[\w./-]+_test\.go:\d+:"
    r"|[\w.$]*(?:Error|Exception|ExceptionGroup)(?::|\s*$)|error(?:\[\w+\])?:)"
)
_FAILURE_INSIDE = r".*(?:\.\.\. FAILED\b|\bpanicked at\b)"
_FAILURE_LINE = re.compile(_FAILURE_AT_START + "|" + _FAILURE_INSIDE)
_FAILURE_START = re.compile(_FAILURE_AT_START)
_FAILURE_WORDS = ("... FAILED", "panicked at")  # what _FAILURE_INSIDE looks for
FAILURE_LINES = 20  # at most this many failure lines are kept beyond the head and tail


def _is_failure_line(piece: str) -> bool:
    """Whether ``_FAILURE_LINE`` matches ``piece``. Its last branch (``.*``, then the words)
    is tried at every place in the piece, so it is only tried where those words are.

    Example:
        >>> _is_failure_line("test tests::parse ... FAILED"), _is_failure_line("ok ... ok")
        (True, False)
    """
    if _FAILURE_START.match(piece) is not None:
        return True
    return any(word in piece for word in _FAILURE_WORDS) and _FAILURE_LINE.match(piece) is not None


def _compact_long_text(body: str) -> _Draft:
    pieces = [piece for line in _lines(body) for piece in _pieces(line)]
    head = _fit(pieces, HEAD_CHARS)
    tail = len(pieces) - _fit(pieces[::-1], TAIL_CHARS)
    units, failures = [], 0
    for index, (piece, flag) in enumerate(zip(pieces, _flagged(body, pieces), strict=True)):
        keep = index < head or index >= max(head, tail) or flag
        if not keep and failures < FAILURE_LINES and _is_failure_line(piece):
            keep, failures = True, failures + 1  # a failure mid-run: why the run failed
        units.append(_Unit(piece, keep=keep, safety=flag))
    return _draft(units, _emit_gaps(units, _chars_marker))


def _pieces(line: str) -> list[str]:
    """A line cut to PIECE_CHARS pieces."""
    return [line[at : at + PIECE_CHARS] for at in range(0, len(line), PIECE_CHARS)]


def _fit(pieces: list[str], budget: int) -> int:
    """How many pieces from the start fit in ``budget`` characters (at least one)."""
    used, count = 0, 0
    for piece in pieces:
        used += len(piece)
        if used > budget and count:
            break
        count += 1
    return count


def _chars_marker(gap: list[_Unit]) -> str:
    return _marker_line(f"{sum(len(u.text) for u in gap)} chars omitted")


# Each shape: what a body must contain for it to be detected at all (so that the regex
# scan is spared on most bodies, compiler.prefilter), how it is detected, and compacted.
_TEXT_SHAPES: tuple[tuple[Shape, tuple, Callable[[str], bool], Callable[[str], _Draft]], ...] = (
    (
        Shape.DIFF,
        checking_order(required_literals(_DIFF)),
        lambda body: _DIFF.search(body) is not None,
        _compact_diff,
    ),
    (
        Shape.TEST_OUTPUT,
        checking_order(required_literals(_TEST_RUN)),
        lambda body: _TEST_RUN.search(body) is not None,
        _compact_test_output,
    ),
    (
        Shape.STACK_TRACE,
        checking_order(required_literals(_TRACEBACK)),
        lambda body: _TRACEBACK.search(body) is not None,
        _compact_stack_trace,
    ),
    (Shape.LISTING, (), _is_listing, _compact_listing),
    (Shape.LONG_TEXT, (), _is_long_text, _compact_long_text),
)

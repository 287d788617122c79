"""The text shapes of a tool payload: listings, test-runner output, stack traces, diffs and
long text (``compiler.compact.compact`` tries them in order, after JSON).

Each ``compact_*`` function cuts a body it was given into units (a line, a frame, a piece
of a long line), keeps what a model needs and every unit a safety match touches
(``compiler.compact.safety``), and puts one marker with ``truncated=true`` where the rest was. It
returns a ``Draft``: the text and its row counts. Whether the draft is shorter than the
body, and so used at all, is for the caller to decide.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from itertools import accumulate
from typing import NamedTuple

from compiler.compact.safety import segments_touched

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


class Draft(NamedTuple):  # named tuples, not dataclasses: a _Unit is built for every line
    """A compacted body and its row counts (see ``compact.Compacted``)."""

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


def _draft(units: list[_Unit], text: str) -> Draft:
    total = sum(u.rows for u in units)
    kept = sum(u.rows for u in units if u.keep)
    safety = sum(u.rows for u in units if u.keep and u.safety)
    return Draft(text, total, kept, safety)


def _merged(units: list[_Unit], lines: str, what: str) -> Draft:
    """The kept units with one marker saying how many of all the ``lines`` were dropped,
    and what they were."""
    total = len(units)

    def marker(dropped: list[_Unit]) -> str:
        return _marker_line(f"{len(dropped)} of {total} {lines} omitted: {what}")

    return _draft(units, _emit_merged(units, marker))


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


def is_listing(body: str) -> bool:
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


def compact_listing(body: str) -> Draft:
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

TEST_RUN = re.compile(
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


def compact_test_output(body: str) -> Draft:
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
    return _merged(units, "lines", "passing tests, progress and source context")


# Stack traces --------------------------------------------------------------------------

TRACEBACK = re.compile(r"^\s*Traceback \(most recent call last\):", re.MULTILINE)
_FRAME = re.compile(r"\s+File \"")


def compact_stack_trace(body: str) -> Draft:
    lines, units, i = _lines(body), [], 0
    flags = _flagged(body, lines)
    while i < len(lines):
        units.append(_Unit(lines[i], keep=True, rows=0))
        if TRACEBACK.match(lines[i]):
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
    r"""Whether a Python frame runs a file of the project rather than a library's.

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

DIFF = re.compile(r"^diff --git |^--- \S.*\r?\n\+\+\+ \S.*\r?\n@@ ", re.MULTILINE)
_DIFF_HEADER = re.compile(
    r"diff --git |index |--- |\+\+\+ |@@ "
    r"|new file mode|deleted file mode|similarity |rename |Binary "
)


def compact_diff(body: str) -> Draft:
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
    return _merged(units, "diff lines", "context lines and changes past the budget")


# Long text -----------------------------------------------------------------------------


def is_long_text(body: str) -> bool:
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


def compact_long_text(body: str) -> Draft:
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

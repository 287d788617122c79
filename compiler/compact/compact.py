"""Compact one tool payload: fewer characters, every safety signal kept, omissions disclosed.

``compact`` reads a payload by its content, never by the role it was filed under: JSON
records, a directory or search listing, test-runner output, a Python stack trace, a unified
diff, or long text. It keeps what a model needs (the head rows, the failures, the frames
around the error, the changed lines), counts what it dropped in the text itself with
``truncated=true``, and never drops a row that carries a safety signal
(``compiler.compact.safety``). JSON is cut by ``compiler.compact.compact_json``, the text
shapes by ``compiler.compact.compact_text``; this module tells them apart and keeps the
promises below.

Three guarantees hold for every input: the result is never longer than the input (when
nothing is gained the original comes back with ``changed=False``), the same input gives the
same bytes, and nothing raises.

Decisions worth knowing:

- A SWE-agent file view (``[File: path (N lines total)]`` and numbered lines) is passed
  through whole. It is the window the agent scrolled to on purpose and edits by line
  number; cutting its middle removes the very lines it asked for. A view that has gone
  stale is a question about later turns, which one payload cannot answer. So is the
  advice SWE-agent appends to every edit result (``omit_review_checklist``): ``compiler.fold``
  writes it as a marker in all but the latest edit result that shows it.
- Safety terms match on letter boundaries, so ``PEANUT_ALLERGEN`` and ``date_of_birth``
  match (``_`` is not a letter) while ``DeprecationWarning`` or ``adobe`` do not. A path
  such as ``warnings.py`` does match: keeping one extra row is cheap, dropping a real
  warning is not. A body is scanned whole, not line by line, so a phrase wrapped across a
  line break ("Do" / "not exceed") keeps every line it touches.
- JSON is re-serialised compactly (``compiler.compact.compact_json``); numbers go through
  ``float`` like any JSON reader, and a document with a duplicate key is treated as text,
  since re-serialising it would lose one.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from compiler.compact.compact_json import compact_json, summary_floor
from compiler.compact.compact_text import (
    DIFF,
    LONG_CHARS,
    TEST_RUN,
    TRACEBACK,
    Draft,
    compact_diff,
    compact_listing,
    compact_long_text,
    compact_stack_trace,
    compact_test_output,
    is_listing,
    is_long_text,
)

# the safety scan lives in compiler.compact.safety; these names are read from here too (tests do)
from compiler.compact.safety import (  # noqa: F401
    has_safety_signal,
    safety_spans,
)
from compiler.frozen import build
from compiler.read import decode_json, exact_numbers, json_text
from compiler.state import admits, checking_order, fold, required_literals

HEAD_ROWS = 3  # JSON records kept from the top of a collection
SHORT_CHARS = 400  # a payload shorter than this is returned as it is


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
    changed. ``status_lines_dropped`` counts SWE-agent status lines left out because
    they repeat what the model sees above them (``repeats.drop_repeated_status``).
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
    status_lines_dropped: int = 0


def compact(
    text: str, *, tool_name: str | None = None, head_rows: int = HEAD_ROWS, memo=None
) -> Compacted:
    """Compact one tool payload, keeping safety rows and disclosing every omission.

    ``tool_name`` labels a top-level list of records; ``head_rows`` is how many records
    of a JSON collection are kept besides the safety-flagged ones; ``memo`` holds the
    JSON texts the caller decoded before (``jsonio.decode_json``).

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
    without compacting: a stale read's notice of ``chars`` wins over it (``compiler.fold``).

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
) -> tuple[Shape, Draft | None]:
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
                    return Shape.JSON_OBJECT, Draft(cut.text + trailer, *_counts(cut))
            return shape, Draft(found.text + trailer, *counts)
    folded = fold(body)
    if admits(_FILE_VIEW_NEEDS, folded) and _FILE_VIEW.search(body):
        return Shape.NONE, None
    detected = Shape.NONE
    for shape, needs, detect, compactor in _TEXT_SHAPES:
        if not admits(needs, folded) or not detect(body):
            continue
        draft = compactor(body)
        if len(draft.text) < len(body):
            return shape, Draft(draft.text + trailer, *_counts(draft))
        # nothing gained (a traceback without frames, say): the next shape may still fit
        detected = shape if detected is Shape.NONE else detected
    return detected, None


def _counts(draft: Draft) -> tuple[int, int, int]:
    return draft.rows_total, draft.rows_kept, draft.safety_rows_kept


def _with_long_strings_cut(value: Any) -> Draft | None:
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
    drafts: list[Draft] = []

    def cut(node: Any) -> Any:
        if isinstance(node, str):
            if len(node) <= LONG_CHARS:
                return node
            draft = compact_long_text(node)
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
    return Draft(
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


# SWE-agent's advice after an edit, in its two wordings
_REVIEW_CHECKLIST = re.compile(
    r"Please review the changes and make sure they are correct"
    r"(?: \(correct indentation, no duplicate lines, etc\)\.|:\s*"
    r"1\. The edited file is correctly indented\s*"
    r"2\. The edited file does not contain duplicate lines\s*"
    r"3\. The edit does not break existing functionality)\s*"
    r"Edit the file again if necessary\."
)
REVIEW_CHECKLIST_OMITTED = "(review checklist omitted)"


def has_review_checklist(text: str) -> bool:
    """Whether a payload carries SWE-agent's advice to review an edit."""
    return "Please review the changes" in text and _REVIEW_CHECKLIST.search(text) is not None


def omit_review_checklist(text: str) -> str | None:
    r"""``text`` with SWE-agent's advice to review an edit written as a short marker, or
    None when it has none. The advice is the same after every edit; ``compiler.fold`` keeps it
    in the latest edit result that shows it.

    Example:
        >>> omit_review_checklist("File updated. Please review the changes and make sure "
        ...     "they are correct (correct indentation, no duplicate lines, etc). Edit the "
        ...     "file again if necessary.\n(Open file: /a.py)")
        'File updated. (review checklist omitted)\n(Open file: /a.py)'
        >>> omit_review_checklist("File updated.") is None
        True
    """
    if "Please review the changes" not in text:
        return None
    cut = _REVIEW_CHECKLIST.sub(REVIEW_CHECKLIST_OMITTED, text)
    return cut if len(cut) < len(text) else None


# Each shape: what a body must contain for it to be detected at all (so that the regex
# scan is spared on most bodies, compiler.state.prefilter), how it is detected, and compacted.
_TEXT_SHAPES: tuple[tuple[Shape, tuple, Callable[[str], bool], Callable[[str], Draft]], ...] = (
    (
        Shape.DIFF,
        checking_order(required_literals(DIFF)),
        lambda body: DIFF.search(body) is not None,
        compact_diff,
    ),
    (
        Shape.TEST_OUTPUT,
        checking_order(required_literals(TEST_RUN)),
        lambda body: TEST_RUN.search(body) is not None,
        compact_test_output,
    ),
    (
        Shape.STACK_TRACE,
        checking_order(required_literals(TRACEBACK)),
        lambda body: TRACEBACK.search(body) is not None,
        compact_stack_trace,
    ),
    (Shape.LISTING, (), is_listing, compact_listing),
    (Shape.LONG_TEXT, (), is_long_text, compact_long_text),
)

"""Lines of a SWE-agent file view that an earlier view shows verbatim, as a pointer.

An editor window (``[File: path (N lines total)]`` and numbered lines) often shows again
lines an earlier window of the same file showed: the agent scrolls back, an edit shows
the window around it, or a failed edit shows how the window would have looked and how
it looks. A run of lines whose numbers and text an earlier view shows verbatim is
written as one pointer to that turn, as ``compact`` mode points at a JSON value shown
before (``repeats.write_pointers``); changed and new lines stay, the cursor marks some
windows carry stay where they are, and so does every line that carries a safety signal.

A view pointed at must still be in front of the model: with no checkpoint (no
``cached_rate``) nothing is ever cut, so any earlier view may be; with checkpoints only
a view none can have cut (``pointable_views``).
"""

from __future__ import annotations

import posixpath
import re
from bisect import bisect_left
from typing import NamedTuple

from compiler.compact.checkpoints import RECENT_CALLS
from compiler.compact.read_keys import FILE_VIEW, NOT_APPLIED
from compiler.compact.safety import has_safety_signal

# the fewest lines a pointer stands for: a shorter run is cheaper to show again
VIEW_RUN = 3
# the fewest characters (spaces aside) of a line that may begin a run shown under shifted
# numbers: a shorter one (a blank line, a closing bracket) is found at too many places
SHIFT_START = 8
_MORE_ABOVE = re.compile(r"\(\d+ more lines? above\)")
# lines a window's body may hold besides numbered ones: the cursor marks of SWE-agent's
# cursor editor, and a pointer written here at first sight
_IN_WINDOW = re.compile(
    r"<<<<< (?:START|END) CURSOR >>>>>|\[lines \d+-\d+ same as (?:lines \d+-\d+ of )?turn \d+\]"
)
# a window's body, read at once rather than a line at a time: lines that are numbered, or
# are one of those (``_IN_WINDOW``) with spaces either side, each up to a line break or
# the text's end (``\s`` is what ``str.strip`` strips)
_BODY = re.compile(
    r"(?:(?:\d{1,9}:[^\n]*|[^\S\n]*(?:" + _IN_WINDOW.pattern + r")[^\S\n]*)(?:\n|\Z))*"
)
_NUMBERED_LINE = re.compile(r"^\d{1,9}:", re.MULTILINE)
FILE_VIEW_HEADER = "[File: "  # how a window header (``FILE_VIEW``) begins

_UNREAD = object()


class Earlier(NamedTuple):
    """One earlier view a payload may point at."""

    index: int  # its payload index
    turn: int  # its turn as the caller counts it
    path: str  # its file
    texts: dict[int, str]  # each numbered line's text after its number, by number
    numbers: dict[str, list[int]]  # the numbers each text is shown under
    # the number as written where it is not the plain decimal (``007:``, other digits);
    # with ``texts``, each line as shown, so the lines are not kept a second time
    spelled: dict[int, str]


# one editor window of a text: its file, and where its body starts and ends among the lines
Window = tuple[str, int, int]


def view_parts(text: str) -> tuple[list[str], list[Window], int]:
    """The text's lines, each editor window they show (its file and the span of its body:
    numbered lines, with any cursor marks and pointers among them), and how many lines are
    a window's header (``FILE_VIEW``), with a body or not: what ``read_view`` and the
    payload plan read of a view, so a caller that has them reads a text once.

    Example:
        >>> text = "[File: /a.py (9 lines total)]\\n(2 more lines above)\\n3:x\\n4:y\\nok"
        >>> lines, windows, headers = view_parts(text)
        >>> windows, lines[2:4], headers
        ([('/a.py', 2, 4)], ['3:x', '4:y'], 1)
        >>> view_parts("[File: /a (9 lines total)]\\n[File: /b (2 lines total)]\\n1:x")[1:]
        ([('/b', 2, 3)], 2)
    """
    lines = text.split("\n")
    windows, headers = [], 0
    line, offset = 0, 0  # the line at offset
    for header in file_headers(text):
        at = header.start()
        line, offset = line + text.count("\n", offset, at), at
        headers += 1
        window = _window(text, lines, line, at)
        if window is not None:
            windows.append((header.group(1), *window))
    return lines, windows, headers


def file_headers(text: str):
    """Each window header of ``text`` (``FILE_VIEW``, a match at the start of a line), in
    order, found by its first words: a scan with ``^`` would try every offset.

    Example:
        >>> [h.group(1) for h in file_headers("[File: /a (2 lines total)]\\nx [File: /b")]
        ['/a']
    """
    at = text.find(FILE_VIEW_HEADER)
    while at >= 0:
        if at == 0 or text[at - 1] == "\n":
            header = FILE_VIEW.match(text, at)
            if header is not None:
                yield header
        at = text.find(FILE_VIEW_HEADER, at + 1)


def _window(text: str, lines: list[str], line: int, at: int) -> tuple[int, int] | None:
    """The span of the body below the header at ``lines[line]`` (at offset ``at``), or
    None where it holds no numbered line."""
    start, begin = line + 1, text.find("\n", at) + 1  # (begin: the offset of lines[start])
    if begin and _MORE_ABOVE.fullmatch(lines[start].strip()):
        start, begin = start + 1, text.find("\n", begin) + 1
    if not begin:
        return None  # the text ends first
    end = _BODY.match(text, begin).end()
    if not _NUMBERED_LINE.search(text, begin, end):
        return None
    ended = end == len(text) and end > begin and text[-1] != "\n"  # (the last line, unended)
    return start, start + text.count("\n", begin, end) + ended


def resolved(path: str, directory: str | None) -> str:
    """A window's file as an absolute path where the directory it was shown in is known:
    one view names a file from the directory the shell is in, another by its full path.

    Example:
        >>> resolved("src/a.py", "/repo"), resolved("/repo/src/a.py", "/x"), resolved("a.py", None)
        ('/repo/src/a.py', '/repo/src/a.py', 'a.py')
    """
    if path.startswith("/") or not directory:
        return path
    return posixpath.normpath(posixpath.join(directory, path))


def view_path(text: str, directory: str | None = None, parts: tuple | None = None) -> str | None:
    """The file ``read_view`` reads of a view, without reading its lines (None where it
    reads none): a view is read whole only when a later one shows the same file.

    Example:
        >>> view_path("[File: a.py (9 lines total)]\\n3:x", "/r"), view_path("3:x")
        ('/r/a.py', None)
    """
    if NOT_APPLIED in text:
        return None
    _, windows, headers = view_parts(text) if parts is None else parts
    return resolved(windows[0][0], directory) if len(windows) == 1 and headers == 1 else None


def read_view(text: str, directory: str | None = None) -> tuple | None:
    """The file a view shows (``resolved`` from ``directory``), its numbered lines' texts
    after their numbers, by number, the numbers each text is shown under (in the order
    the lines are), and the numbers not written plainly: what a later view is matched
    against, read once per view. None for no view, several, or the preview of an edit
    that was not applied (its windows show a file that was never so, and the file as it
    is, under the same numbers).

    Example:
        >>> read_view("[File: /a.py (9 lines total)]\\n3:x\\n<<<<< START CURSOR >>>>>\\n4:y\\n5:x")
        ('/a.py', {3: 'x', 4: 'y', 5: 'x'}, {'x': [3, 5], 'y': [4]}, {})
        >>> read_view("[File: /a.py (9 lines total)]\\n[lines 1-3 same as turn 2]\\n04:y")
        ('/a.py', {4: 'y'}, {'y': [4]}, {4: '04'})
    """
    if NOT_APPLIED in text:
        return None
    lines, windows, headers = view_parts(text)
    if len(windows) != 1 or headers != 1:
        return None
    path, start, end = windows[0]
    texts: dict[int, str] = {}
    spelled: dict[int, str] = {}
    for number, text, head in zip(*_numbered(lines[start:end]), strict=True):
        if number is None:
            continue
        texts[number] = text
        if head != str(number):
            spelled[number] = head
        elif spelled:
            spelled.pop(number, None)
    numbers: dict[str, list[int]] = {}
    for number, line in texts.items():
        numbers.setdefault(line, []).append(number)
    return resolved(path, directory), texts, numbers, spelled


def pointable_views(
    views: list[int],
    calls: list[int],
    shown,
    number=None,
    cuts: bool = True,
    where=None,
    read: dict | None = None,
    paths: frozenset[str] | None = None,
) -> list[Earlier]:
    """The file views (``views``, payload indices in order) a payload may point at: every
    one where no checkpoint ever cuts (``cuts`` false), else those no checkpoint can have
    cut before it, so none ever does (``checkpoints``: a checkpoint's candidates precede
    the ``RECENT_CALLS``-th call point before it, the history's end being one).
    ``calls``: the call points so far; ``shown``: a payload's text as first shown, by
    index; ``number``: the turn as the caller counts it; ``where``: the directory a
    payload was shown in, by index, where one is known; ``read``: each view's
    ``read_view`` by index, kept for the next payload (a view's text as first shown
    never changes), or only the file it shows (``view_path``) until a view is read
    whole; ``paths``: where given, only the views of these files (the payload's own),
    so a view of a file not shown again is never read whole.

    Example:
        >>> text = {2: "[File: /a.py (9 lines total)]\\n1:x"}
        >>> text[8] = "[File: /b.py (2 lines total)]\\n1:y"
        >>> found = pointable_views([2, 8], [1, 3, 5, 7], text.get)  # a call point at 3 can cut 2
        >>> [(view.index, view.turn, view.path, view.texts) for view in found]
        [(8, 8, '/b.py', {1: 'y'})]
        >>> [view.index for view in pointable_views([2, 8], [1, 3, 5, 7], text.get, cuts=False)]
        [2, 8]
    """
    bound = calls[-RECENT_CALLS] if cuts and len(calls) >= RECENT_CALLS else 0
    found = []
    read = {} if read is None else read
    for index in views[bisect_left(views, bound) :]:
        lines = read.get(index, _UNREAD)
        if isinstance(lines, str):  # (only its file known so far)
            if paths is not None and lines not in paths:
                continue
            lines = _UNREAD
        if lines is _UNREAD:
            lines = read_view(shown(index), where(index) if where is not None else None)
            read[index] = lines
        if lines is not None and (paths is None or lines[0] in paths):
            found.append(Earlier(index, index if number is None else number(index), *lines))
    return found


def point_to_views(
    text: str, earlier: list[Earlier], directory: str | None = None, parts: tuple | None = None
) -> tuple[str, frozenset[int]] | None:
    """``text`` with each run of ``VIEW_RUN`` or more numbered lines of a window that a
    view of ``earlier`` shows verbatim, same file (``resolved`` from ``directory``, the
    one the text was shown in) and numbers, written as
    ``[lines A-B same as turn N]``; and the indices of the views pointed at. None when
    nothing is written so. A run keeps to one view while it shows the next line too,
    else takes the latest that does. ``parts``: the text's ``view_parts``, where the
    caller has them.

    Example:
        >>> old = "[File: /a.py (9 lines total)]\\n1:a\\n2:b\\n3:c\\n4:d"
        >>> new = "[File: /a.py (9 lines total)]\\n1:a\\n2:b\\n3:c\\n4:D\\nok"
        >>> point_to_views(new, [Earlier(5, 6, *read_view(old))])
        ('[File: /a.py (9 lines total)]\\n[lines 1-3 same as turn 6]\\n4:D\\nok', frozenset({5}))
    """
    lines, windows, _ = view_parts(text) if parts is None else parts
    written, used, done = [], set(), 0
    for path, start, end in windows:
        path = resolved(path, directory)
        views = [view for view in reversed(earlier) if view[2] == path]
        if not views:
            continue
        written.extend(lines[done:start])
        written.extend(_pointed(lines[start:end], views, used))
        done = end
    if not used:
        return None
    return "\n".join(written + lines[done:]), frozenset(used)


def _pointed(body: list[str], views: list[Earlier], used: set) -> list[str]:
    """A window's body with its runs that ``views`` (latest first) show verbatim as
    pointers: from each line, the longest run one view shows, under the same numbers
    or, where an edit moved them, under numbers shifted alike (ties to the same numbers,
    then the latest view)."""
    numbers, texts, written_as = _numbered(body)
    clean = _clean_lines(body)
    count = len(body)

    def run(at: int, view: Earlier, first: int) -> tuple[int, bool]:
        """The run from ``at`` that ``view`` shows from its line ``first``, and whether it
        reaches the end of the lines numbered one after another from ``at`` (no view can
        show a longer one)."""
        shown, end, number = view.texts, at, numbers[at]
        while end < count and numbers[end] == number and shown.get(first) == texts[end]:
            end, number, first = end + 1, number + 1, first + 1
        whole = end == count or numbers[end] != number
        if end > at:
            stop = clean(at, end)
            whole = whole and stop == end
            end = stop
        return end - at, whole

    written, at = [], 0
    while at < count:
        best = (0, None, 0)  # the run's length, the view, its first number there
        number, text = numbers[at], texts[at]
        shifts = number is not None and len(text.strip()) >= SHIFT_START
        for view in views if number is not None else ():
            starts = []
            if view.texts.get(number) == text:  # the same line there: written alike too
                spelled = None if written_as[at] == str(number) else written_as[at]
                if view.spelled.get(number) == spelled:
                    starts.append(number)
            if shifts:
                starts += [n for n in view.numbers.get(text, ()) if n != number]
            whole = False
            for first in starts:
                length, whole = run(at, view, first)
                if length > best[0]:
                    best = (length, view, first)
                if whole:
                    break  # (a later start can only tie, and a tie keeps the first)
            if whole:
                break  # (so can a later view)
        length, view, first = best
        if length < VIEW_RUN:
            written.append(body[at])
            at += 1
            continue
        last = numbers[at + length - 1]
        if first == number:
            written.append(f"[lines {first}-{last} same as turn {view.turn}]")
        else:
            shown = f"lines {first}-{first + length - 1} of turn {view.turn}"
            written.append(f"[lines {number}-{last} same as {shown}]")
        used.add(view.index)
        at += length
    return written


def _numbered(lines: list[str]) -> tuple[list, list, list]:
    """Each line's number (None for a line not numbered), its text after the number, and
    the number as written: a line that opens with one to nine digits and a colon, read
    without a pattern match per line (``str.isdecimal`` is ``\\d``'s class, Unicode's
    Nd)."""
    numbers, texts, written = [], [], []
    for line in lines:
        head, colon, text = line.partition(":")
        if colon and len(head) <= 9 and head.isdecimal():
            numbers.append(int(head))
            texts.append(text)
            written.append(head)
        else:
            numbers.append(None)
            texts.append(None)
            written.append(None)
    return numbers, texts, written


def _clean_lines(body: list[str]):
    """Where the first line of ``body[start:stop]`` that carries a safety signal is
    (``stop`` where none does). The body is read whole first: a line's signal is a
    signal of the lines joined too (a line break is no letter, digit or part of an
    address), so where the whole has none no line does, and no line is read on its own
    (most views carry none). Where it has one, each line asked of is read on its own:
    the whole's may stand across a line break."""
    joined = None  # whether the whole has a signal, once asked
    safe: dict[int, bool] = {}

    def clean(start: int, stop: int) -> int:
        nonlocal joined
        if joined is None:
            joined = has_safety_signal("\n".join(body))
        if not joined:
            return stop
        for at in range(start, stop):
            if at not in safe:
                safe[at] = not has_safety_signal(body[at])
            if not safe[at]:
                return at
        return stop

    return clean

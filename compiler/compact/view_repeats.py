"""Lines of a SWE-agent file view that an earlier view shows verbatim, as a pointer.

An editor window (``[File: path (N lines total)]`` and numbered lines) often shows again
lines an earlier window of the same file showed: the agent scrolls back, or an edit
shows the window around it. A run of lines whose numbers and text an earlier view shows
verbatim is written as one pointer to that turn, as ``compact`` mode points at a JSON
value shown before (``repeats.write_pointers``); changed and new lines stay, and so does
every line that carries a safety signal.
"""

from __future__ import annotations

import re
from bisect import bisect_left

from compiler.compact.checkpoints import RECENT_CALLS
from compiler.compact.read_keys import FILE_VIEW, NOT_APPLIED
from compiler.compact.safety import has_safety_signal

# the fewest lines a pointer stands for: a shorter run is cheaper to show again
VIEW_RUN = 3
_NUMBERED = re.compile(r"(\d{1,9}):")
_MORE_ABOVE = re.compile(r"\(\d+ more lines? above\)")

# one earlier view: its index, its turn as the caller counts it, its file, its lines by number
Earlier = tuple[int, int, str, dict[int, str]]


def view_block(text: str) -> tuple[str, list[str], int, int] | None:
    """The file one editor window shows, the text's lines, and where its numbered lines
    start and end among them; None for no view, several, or the preview of an edit that
    was not applied (it shows no file).

    Example:
        >>> text = "[File: /a.py (9 lines total)]\\n(2 more lines above)\\n3:x\\n4:y\\nok"
        >>> path, lines, start, end = view_block(text)
        >>> path, lines[start:end]
        ('/a.py', ['3:x', '4:y'])
    """
    headers = FILE_VIEW.findall(text)
    if len(headers) != 1 or NOT_APPLIED in text:
        return None
    lines = text.split("\n")
    at = next(i for i, line in enumerate(lines) if FILE_VIEW.match(line)) + 1
    if at < len(lines) and _MORE_ABOVE.fullmatch(lines[at].strip()):
        at += 1
    end = at
    while end < len(lines) and _NUMBERED.match(lines[end]):
        end += 1
    return (headers[0], lines, at, end) if end > at else None


def view_lines(text: str) -> tuple[str, dict[int, str]] | None:
    """The file a view shows and its numbered lines by number, as written.

    Example:
        >>> view_lines("[File: /a.py (9 lines total)]\\n3:x\\n4:y")
        ('/a.py', {3: '3:x', 4: '4:y'})
    """
    block = view_block(text)
    if block is None:
        return None
    path, lines, start, end = block
    return path, {int(_NUMBERED.match(line).group(1)): line for line in lines[start:end]}


def recent_views(views: list[int], calls: list[int], shown, number=None) -> list[Earlier]:
    """The file views (``views``, payload indices in order) a payload may point at: those
    no checkpoint can have cut before it, so none ever does (``checkpoints``: a
    checkpoint's candidates precede the ``RECENT_CALLS``-th call point before it, the
    history's end being one). ``calls``: the call points so far; ``shown``: a payload's
    text as first shown, by index; ``number``: the turn as the caller counts it.

    Example:
        >>> text = {2: "[File: /a.py (9 lines total)]\\n1:x"}
        >>> text[8] = "[File: /b.py (2 lines total)]\\n1:y"
        >>> recent_views([2, 8], [1, 3, 5, 7], text.get)  # a call point at 3 can cut 2
        [(8, 8, '/b.py', {1: '1:y'})]
    """
    bound = calls[-RECENT_CALLS] if len(calls) >= RECENT_CALLS else 0
    recent = []
    for index in views[bisect_left(views, bound) :]:
        lines = view_lines(shown(index))
        if lines is not None:
            recent.append((index, index if number is None else number(index), *lines))
    return recent


def point_to_views(text: str, earlier: list[Earlier]) -> tuple[str, frozenset[int]] | None:
    """``text`` with each run of ``VIEW_RUN`` or more numbered lines that a view of
    ``earlier`` (latest first wins) shows verbatim, same file and numbers, written as
    ``[lines A-B same as turn N]``; and the indices of the views pointed at. None when
    nothing is written so.

    Example:
        >>> old = "[File: /a.py (9 lines total)]\\n1:a\\n2:b\\n3:c\\n4:d"
        >>> new = "[File: /a.py (9 lines total)]\\n1:a\\n2:b\\n3:c\\n4:D\\nok"
        >>> point_to_views(new, [(5, 6, *view_lines(old))])
        ('[File: /a.py (9 lines total)]\\n[lines 1-3 same as turn 6]\\n4:D\\nok', frozenset({5}))
    """
    block = view_block(text)
    if block is None:
        return None
    path, lines, start, end = block
    views = [view for view in reversed(earlier) if view[2] == path]
    if not views:
        return None
    sources = []  # per numbered line: the earlier view showing it verbatim, else None
    for line in lines[start:end]:
        number = int(_NUMBERED.match(line).group(1))
        found = None
        if not has_safety_signal(line):
            found = next((view for view in views if view[3].get(number) == line), None)
        sources.append(found)
    written, used, at = lines[:start], set(), start
    while at < end:
        view = sources[at - start]
        run = at + 1
        while run < end and view is not None and sources[run - start] is view:
            run += 1
        if view is not None and run - at >= VIEW_RUN:
            first = int(_NUMBERED.match(lines[at]).group(1))
            last = int(_NUMBERED.match(lines[run - 1]).group(1))
            written.append(f"[lines {first}-{last} same as turn {view[1]}]")
            used.add(view[0])
        else:
            written.extend(lines[at:run])
        at = run
    if not used:
        return None
    return "\n".join(written + lines[end:]), frozenset(used)

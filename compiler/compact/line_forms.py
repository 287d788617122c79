"""Runs of output lines that share every word but two gaps, as their form once and a row each.

A tool's log often writes one line per item in the same words: pip's ``Requirement
already satisfied: NAME in SITE-PACKAGES (from PARENT) (VERSION)`` for every package
of an install, a build's ``Compiling NAME in DIR``. Such a run is written as one line
naming the form and, below it, what fills its two gaps in each line::

    [the 3 lines below each read "Requirement already satisfied: {1} in /e {2}", shown as {1} {2}]
    pytest (8.1.1)
    pytz (2024.1)
    mccabe<0.7.0,>=0.6.0 (from flake8==4.0.1) (0.6.1)

Words are what ``str.split(" ")`` gives, so spacing is kept exactly (a carriage return
ending a line stays at the end of its row): ``{1}`` is the one
word after the shared opening words, ``{2}`` everything after the shared words that
follow it (absent where the line ends with them), and a row is the line without its
shared words. Nothing is lost (``expand`` gives back every line) and every identifier
stays in the text. ``cache_friendly`` applies it the first time a payload is seen, so
it never rewrites a cached prompt. A line that carries a safety signal, and every line
of a file view's window, stays as it is.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from compiler.compact.safety import has_safety_signal

# the fewest lines a form is written for, and the fewest characters it must save
FORM_RUN = 4
FORM_SAVES = 120
# the fewest characters of shared words besides spaces (shorter: rows read no better)
FORM_WORDS = 12
_HEADER = '[the {n} lines below each read "{form}", shown as {{1}} {{2}}]'
_FORM_LINE = re.compile(r'\[the (\d+) lines below each read "(.*)", shown as \{1\} \{2\}\]\Z')

# a form: the shared opening words, and the shared words after the first gap
Form = tuple[tuple[str, ...], tuple[str, ...]]


def shared_forms(text: str, keep: Sequence[tuple[int, int]] = ()) -> str | None:
    """``text`` with each run of ``FORM_RUN`` or more lines of one form written as the
    form and its rows, where that saves ``FORM_SAVES`` characters or more; ``keep``: the
    spans of lines left as they are (start and end indices, in order, none overlapping).
    None when no run is.

    Example:
        >>> site = "/opt/conda/envs/build/lib/python3.9/site-packages"
        >>> log = "\\n".join(f"Installed pkg{n} into {site} ({n}.0)" for n in range(4))
        >>> print(shared_forms(log))  # doctest: +NORMALIZE_WHITESPACE
        [the 4 lines below each read
         "Installed {1} into /opt/conda/envs/build/lib/python3.9/site-packages {2}",
         shown as {1} {2}]
        pkg0 (0.0)
        pkg1 (1.0)
        pkg2 (2.0)
        pkg3 (3.0)
    """
    lines = text.split("\n")
    if len(lines) < FORM_RUN:
        return None
    # a form never takes in a kept line, so each stretch between kept spans is read
    # alone, and one shorter than a run is not read at all
    written, done, free = [], 0, 0
    for start, end in (*keep, (len(lines), len(lines))):
        if start - free >= FORM_RUN:
            for at, stop, form, words in _runs(lines[free:start]):
                opening, shared = form
                shown = " ".join((*opening, "{1}", *shared, "{2}"))
                written.extend(lines[done : free + at])
                written.append(_HEADER.format(n=stop - at, form=shown))
                written.extend(_row(words[i], form) for i in range(at, stop))
                done = free + stop
        free = max(free, end)
    if not written:
        return None
    written.extend(lines[done:])
    return "\n".join(written)


def _runs(lines: list[str]) -> list[tuple[int, int, Form, list]]:
    """Where in ``lines`` each run ``shared_forms`` writes as a form starts and ends, its
    form, and the lines' words. Runs are taken from the first line on: a run too short
    or saving too little gives way to one from its next line."""
    words = [_words(line) for line in lines]
    found, at = [], 0
    while at < len(lines):
        form = _form(words[at], words[at + 1]) if at + 1 < len(lines) else None
        end = at
        while form is not None and end < len(lines) and _fits(words[end], form):
            # (a line is looked at for a safety signal only once it fits a form)
            if has_safety_signal(lines[end]):
                words[end] = None
                break
            end += 1
        if form is not None and end - at >= FORM_RUN and _saves(form, end - at) >= FORM_SAVES:
            found.append((at, end, form, words))
            at = end
        else:
            at += 1
    return found


def expand(text: str) -> str:
    """``text`` with each form and its rows written back as the lines they stand for.

    Example:
        >>> site = "/opt/conda/envs/build/lib/python3.9/site-packages"
        >>> log = "\\n".join(f"Installed pkg{n} into {site} ({n}.0)" for n in range(4))
        >>> expand(shared_forms(log)) == log
        True
    """
    lines, written, at = text.split("\n"), [], 0
    while at < len(lines):
        match = _FORM_LINE.match(lines[at])
        if match is None:
            written.append(lines[at])
            at += 1
            continue
        count, form = int(match.group(1)), match.group(2)
        if form.startswith("{1} "):
            opening, after = [], form[len("{1} ") :]
        else:
            before, after = form.split(" {1} ", 1)
            opening = before.split(" ")
        shared = after[: -len(" {2}")].split(" ")
        for row in lines[at + 1 : at + 1 + count]:
            end = "\r" if row.endswith("\r") else ""
            gap, *rest = row.removesuffix(end).split(" ", 1)
            written.append(" ".join((*opening, gap, *shared, *rest)) + end)
        at += 1 + count
    return "\n".join(written)


def _form(first: list[str] | None, second: list[str] | None) -> Form | None:
    """The form two lines share: their shared opening words, one that differs, then the
    shared words up to the next that differs; None unless those hold ``FORM_WORDS``."""
    if first is None or second is None:
        return None
    words, opening = min(len(first), len(second)), 0
    while opening < words and first[opening] == second[opening]:
        opening += 1
    after = opening + 1
    shared = after
    while (
        shared < words
        and first[shared] == second[shared]
        and first[shared] != "\r"  # (a line's ending is no word of its form)
    ):
        shared += 1
    if shared == after:
        return None
    form = (tuple(first[:opening]), tuple(first[after:shared]))
    return form if sum(map(len, (*form[0], *form[1]))) >= FORM_WORDS else None


def _fits(words: list[str] | None, form: Form) -> bool:
    opening, shared = form
    gap = len(opening)
    return (
        words is not None
        and len(words) >= gap + 1 + len(shared)
        and tuple(words[:gap]) == opening
        and tuple(words[gap + 1 : gap + 1 + len(shared)]) == shared
    )


def _row(words: list[str], form: Form) -> str:
    opening, shared = form
    gap = len(opening)
    end = words[-1] if words[-1] == "\r" else ""
    kept = words[gap + 1 + len(shared) : len(words) - 1 if end else None]
    return " ".join((words[gap], *kept)) + end


def _words(line: str) -> list[str]:
    """A line's words; a carriage return at its end is a word of its own, so lines that
    end one way or the other share a form (a row keeps it at its end)."""
    if line.endswith("\r"):
        return [*line[:-1].split(" "), "\r"]
    return line.split(" ")


def _saves(form: Form, lines: int) -> int:
    """Characters saved by writing ``lines`` lines of ``form`` as its header and rows."""
    shared = sum(map(len, (*form[0], *form[1]))) + len(form[0]) + len(form[1])
    header = len(_HEADER) + shared + 8
    return shared * lines - header

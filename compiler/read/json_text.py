"""JSON text as the transcript reader meets it: decoded with its numbers checked, and
walked to say on which line and column each value starts.

Decisions worth knowing:

- ``NaN``, ``Infinity`` and a literal too large for a double (``1e999``) are refused
  (``NotFinite``), at the number's line and column: they are not JSON, and would come
  back out of the compiler as ``null``.
- ``Doc`` answers positions from the text the decoder accepted, so the line a warning
  names is the line the element starts on, even in one-line JSON.
"""

from __future__ import annotations

import bisect
import json
import math
import re
from typing import Any, NamedTuple

JSON_SPACE = re.compile(r"[ \t\n\r]*")


class NotFinite(ValueError):
    """A number JSON cannot hold: NaN, Infinity, or a literal too large for a float."""

    def __init__(self, literal: str, why: str):
        super().__init__(why)
        self.literal = literal


def _constant(literal: str):
    raise NotFinite(literal, f"{literal} is not a JSON number")


def _finite(literal: str) -> float:
    value = float(literal)
    if value in (math.inf, -math.inf):
        sign = "-" if value < 0 else ""
        raise NotFinite(literal, f"{literal} is too large to read: it would be {sign}Infinity")
    return value


# NaN and Infinity (written, or reached by a literal like 1e999) are refused rather than
# read: they are not JSON, and would come back out as null.
DECODER = json.JSONDecoder(strict=False, parse_constant=_constant, parse_float=_finite)


class JsonError(NamedTuple):
    line: int
    column: int
    message: str


def decode(text: str, start: int) -> tuple[Any, JsonError | None]:
    """The JSON value filling ``text`` from ``start``, or where it broke."""
    try:
        value, end = DECODER.raw_decode(text, start)
        end = JSON_SPACE.match(text, end).end()
        if end != len(text):
            raise json.JSONDecodeError("Extra data", text, end)
    except json.JSONDecodeError as error:
        return None, JsonError(error.lineno, error.colno, error.msg)
    except NotFinite as error:
        found = re.compile(rf"(?<![\w\".]){re.escape(error.literal)}(?![\w.])").search(text, start)
        at = found.start() if found else start
        line = text.count("\n", 0, at) + 1
        return None, JsonError(line, at - text.rfind("\n", 0, at), str(error))
    except (ValueError, RecursionError) as error:
        # Nested too deeply, or an integer longer than Python will convert.
        line = text.count("\n", 0, start) + 1
        column = start - text.rfind("\n", 0, start)
        why = "nested too deeply" if isinstance(error, RecursionError) else str(error)[:80]
        return None, JsonError(line, column, why)
    return value, None


class Doc:
    """A valid JSON text, answering where values start and on which line."""

    def __init__(self, text: str, base_line: int = 1):
        self.text = text
        self.base_line = base_line
        self._breaks = [m.start() for m in re.finditer("\n", text)]
        self._cache: dict[int, Any] = {}
        self._repeated: dict[tuple[int, str], int] = {}

    def line(self, pos: int) -> int:
        return self.base_line + bisect.bisect_left(self._breaks, pos)

    def column(self, pos: int) -> int:
        index = bisect.bisect_left(self._breaks, pos)
        return pos - (self._breaks[index - 1] + 1 if index else 0) + 1

    def elements(self, pos: int) -> list[int]:
        """Where each element of the array starting at ``pos`` starts."""
        if pos not in self._cache:
            self._cache[pos] = [start for _, start in self._walk(pos, keyed=False)]
        return self._cache[pos]

    def members(self, pos: int) -> dict[str, int]:
        """Where each member value of the object starting at ``pos`` starts (the last
        one's, for a key the object repeats: the value ``json`` reads)."""
        if pos not in self._cache:
            members: dict[str, int] = {}
            for key, start in self._walk(pos, keyed=True):
                if key in members:
                    self._repeated[pos, key] = self._repeated.get((pos, key), 1) + 1
                members[key] = start
            self._cache[pos] = members
        return self._cache[pos]

    def repeats(self, pos: int, key: str) -> int:
        """How many times the object starting at ``pos`` holds ``key``."""
        self.members(pos)
        return self._repeated.get((pos, key), 1 if key in self._cache[pos] else 0)

    def _walk(self, pos: int, *, keyed: bool):
        text, skip = self.text, JSON_SPACE
        pos = skip.match(text, pos + 1).end()
        while text[pos] not in "]}":
            key = None
            if keyed:
                key, pos = DECODER.raw_decode(text, pos)
                pos = skip.match(text, skip.match(text, pos).end() + 1).end()
            yield key, pos
            pos = skip.match(text, value_end(text, pos)).end()
            if text[pos] == ",":
                pos = skip.match(text, pos + 1).end()


_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BRACKET = re.compile(r'["\[\]{}]')


def value_end(text: str, pos: int) -> int:
    """Where the JSON value starting at ``pos`` of a text that decoded ends. The decoder
    says, unless the value is nested deeper than the stack left here allows (the text was
    read higher up it): then its brackets are counted, strings stepped over.

    Example:
        >>> text = '[' * 3000 + '"]"' + ']' * 3000 + ', 1'
        >>> value_end(text, 0) == len(text) - 3
        True
    """
    try:
        return DECODER.raw_decode(text, pos)[1]
    except RecursionError:
        depth, at = 0, pos
        while True:
            found = _BRACKET.search(text, at)
            if found.group() == '"':
                at = _STRING.match(text, found.start()).end()
                continue
            depth += 1 if found.group() in "[{" else -1
            at = found.end()
            if depth == 0:
                return at

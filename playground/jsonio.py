"""JSON in and out of the API: orjson for speed, the standard library where orjson refuses.

A transcript may carry a lone surrogate escape (``"\\ud800"``), which orjson will
neither read nor write; the standard library will, so every request that parsed
before still parses, and every answer still renders. Same data either way.
"""

from __future__ import annotations

import json
import math
import sys
import threading
from typing import Any

import orjson
from ninja.parser import Parser
from ninja.renderers import BaseRenderer


def loads(data: bytes | str) -> Any:
    """Parse JSON; a ValueError says what is wrong, in the standard library's words.

    Example:
        >>> loads(b'{"a": [1, "\\\\ud800"]}')
        {'a': [1, '\\ud800']}
        >>> loads(b'{"a": NaN}')
        Traceback (most recent call last):
        ...
        ValueError: NaN is not a JSON value
        >>> loads(b'{"a": 1e999}')
        Traceback (most recent call last):
        ...
        ValueError: the number 1e999 is too large to read: it would be Infinity, which ...
    """
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return json.loads(data, parse_constant=_not_json, parse_float=_finite)


def _not_json(name: str):
    """NaN and Infinity, which the standard library reads and JSON does not have: read,
    they would be answered as null, a value the caller never sent."""
    raise ValueError(f"{name} is not a JSON value")


def _finite(text: str) -> float:
    """A JSON number that overflows a float: read, it would be infinity and answered as
    null, as NaN would. orjson refuses it; the standard library must too."""
    number = float(text)
    if math.isinf(number):
        shown = text if len(text) <= 24 else text[:24] + "…"
        raise ValueError(
            f"the number {shown} is too large to read: it would be Infinity, "
            "which JSON does not have"
        )
    return number


def dumps(value: Any) -> bytes:
    """Compact UTF-8 JSON.

    Example:
        >>> dumps({"a": "\\ud800", "b": 1})
        b'{"a": "\\\\ud800", "b": 1}'
    """
    try:
        return orjson.dumps(value)
    except TypeError:  # a lone surrogate, or nesting past orjson's limit of 255 levels
        pass
    try:
        return json.dumps(value).encode()
    except RecursionError:
        return _dumps_deeper(value)


_DEEPER = threading.Lock()
# A request body holds at most 1,024 levels (orjson reads no deeper); the answer repeats
# them, and writing them from a view's stack can pass the interpreter's limit.
EXTRA_FRAMES = 2_000


def _dumps_deeper(value: Any) -> bytes:
    """``json.dumps`` with the recursion limit raised for the call, one call at a time
    (the limit is the interpreter's, not the thread's)."""
    with _DEEPER:
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(limit + EXTRA_FRAMES)
        try:
            return json.dumps(value).encode()
        finally:
            sys.setrecursionlimit(limit)


class OrjsonParser(Parser):
    def parse_body(self, request):
        return loads(request.body)


class OrjsonRenderer(BaseRenderer):
    media_type = "application/json"

    def render(self, request, data, *, response_status):
        return dumps(data)

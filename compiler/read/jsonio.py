"""JSON read and written exactly: each text decoded once per compile (``decode_json``),
a duplicate key or a number a float would change found before a rewrite loses it
(``CHECKING_DECODER``, ``exact_numbers``), and compact and canonical writers built once
(``dumps``, ``canonical_dumps``, ``json_text``). ``compact_json`` and the stale-read and
repeats passes share them.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from decimal import Decimal
from typing import Any

# A float literal that may not survive float() has 16+ digits or an exponent. The text
# is searched for those with digits and points mapped to NUL (bytes.translate and ``in``
# run in C; a regular expression trying a class at every position costs several times
# more), and only the literals of the runs of number characters that hold one are read
# (ids such as "9J3E5I" put a digit before an "E" in many payloads, whose other numbers
# need no reading). Each other character is mapped to one byte, so offsets stay true,
# and "E" to "e", so one search finds an exponent.
_NUMERAL = bytes.maketrans(b"0123456789.E", b"\0" * 11 + b"e")
_LONG_RUN, _EXPONENT = b"\0" * 17, b"\0e"
_SUSPECT = re.compile(b"\0(?:e|\0{16})")
_FLOAT = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
# the characters a _FLOAT match is made of: a match never spans any other
_NUMBER_CHARS = frozenset("+-.0123456789eE")
_NUMBER_RUN = re.compile(r"[-+.0-9eE]+")


def exact_numbers(text: str) -> bool:
    """Whether every number in a JSON text comes back as written, in value, once read and
    written again: a float with more digits than a double holds, or out of its range,
    does not (``12345678901234567.89``, ``1e400`` read as infinity). A number inside a
    string may be taken for one, which only costs its payload the JSON rewrite.

    Example:
        >>> exact_numbers('{"price": 10.50, "n": 12345678901234567}')
        True
        >>> exact_numbers('{"balance": 12345678901234567.89}'), exact_numbers('[1e400]')
        (False, False)
        >>> exact_numbers('{"ids": ["9J3E5I", "1e400"], "pi": 3.14159265358979323}')
        False
    """
    mapped = text.encode("ascii", "replace").translate(_NUMERAL)
    if _EXPONENT not in mapped and _LONG_RUN not in mapped:
        return True
    # A literal that may be inexact holds a suspect (a digit or point before an exponent,
    # or 17 in a row), so only the runs of number characters around one are read; a run
    # ends at a character no literal holds, so its literals are those a scan of the whole
    # text finds there.
    end = 0
    for suspect in _SUSPECT.finditer(mapped):
        start = suspect.start()
        if start < end:
            continue  # in the run read already
        while start > end and text[start - 1] in _NUMBER_CHARS:
            start -= 1
        end = _NUMBER_RUN.match(text, suspect.start()).end()
        if not _exact_literals(text, start, end):
            return False
    return True


def _exact_literals(text: str, start: int, end: int) -> bool:
    """Whether every float literal between ``start`` and ``end`` is read exactly."""
    for match in _FLOAT.finditer(text, start, end):
        literal = match.group()
        if literal.lstrip("-").isdigit() or (len(literal) <= 16 and "e" not in literal.lower()):
            continue  # an integer, or at most 15 digits: read exactly
        number = float(literal)
        try:
            if not math.isfinite(number) or Decimal(repr(number)) != Decimal(literal):
                return False
        except ArithmeticError:  # an exponent past Decimal's range (0e99999999999999999999)
            return False
    return True


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict:
    result = dict(pairs)
    if len(result) != len(pairs):
        raise ValueError("duplicate key: re-serialising would lose a value")
    return result


# json.loads builds a decoder per call. Without a hook the decoder builds dicts in C, and
# a duplicate key costs a colon: outside strings a colon follows a key and nothing else,
# and inside them it is written back as it was read, so the plain serialisation of the
# value holds as many colons as the text unless a key was lost.
_DECODER = json.JSONDecoder()
CHECKING_DECODER = json.JSONDecoder(object_pairs_hook=_unique_keys)
_UNREAD, _NOT_JSON = object(), object()
# how a JSON value may open: an object with a key or nothing, an array with a value or
# nothing, or anything else (not judged here); ``[`` and ``{`` begin most texts read
_OPENING = re.compile(r'[ \t\n\r]*(?:\{[ \t\n\r]*["}]|\[[ \t\n\r]*[]"{[\-0-9tfnNI]|[^[{ \t\n\r])')


def may_be_json(text: str) -> bool:
    """False for a text that is no JSON by its first characters (``[File: a.py …]``), which
    the decoder would reject only after building an error.

    Example:
        >>> may_be_json("[File: a.py (9 lines total)]"), may_be_json('{"a": 1}')
        (False, True)
    """
    return _OPENING.match(text) is not None


def _decode(text: str) -> Any:
    if not may_be_json(text):
        raise ValueError("not JSON")
    return _DECODER.decode(text)


def decode_json(text: str, memo: dict | None = None) -> Any:
    """``json.loads(text)``; with ``memo``, each text is decoded once. A payload is read
    as a record, compacted, and compared with a later read of it: one decode serves all
    three, since none of them changes the value. Raises ValueError (or RecursionError)
    for a text that is not JSON, every time it is asked for.

    Example:
        >>> memo = {}
        >>> decode_json('{"a": 1}', memo) is decode_json('{"a": 1}', memo)
        True
    """
    if memo is None:
        return _decode(text)
    value = memo.get(text, _UNREAD)
    if value is _UNREAD:
        try:
            value = _decode(text)
        except (ValueError, RecursionError):
            value = _NOT_JSON
        memo[text] = value
    if value is _NOT_JSON:
        raise ValueError("not JSON")
    return value


# -- writing ----------------------------------------------------------------------------


def json_encoder(*, ensure_ascii: bool = False, sort_keys: bool = False) -> Callable[[Any], str]:
    """``json.dumps(value, ensure_ascii=…, sort_keys=…, separators=(",", ":"))`` with the
    encoder built once: ``json.dumps`` builds one per call, which costs more than writing a
    row.

    Example:
        >>> json_encoder(sort_keys=True)({"b": "é", "a": [1.5, None]})
        '{"a":[1.5,null],"b":"é"}'
    """
    options = json.JSONEncoder(
        ensure_ascii=ensure_ascii, sort_keys=sort_keys, separators=(",", ":")
    )
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:  # pragma: no cover - a Python without the C accelerator
        return options.encode
    encode = make(
        None,  # no cycle check: a value json.loads returned has no cycles
        options.default,
        json.encoder.encode_basestring_ascii if ensure_ascii else json.encoder.encode_basestring,
        None,
        options.key_separator,
        options.item_separator,
        options.sort_keys,
        options.skipkeys,
        options.allow_nan,
    )
    return lambda value: "".join(encode(value, 0))


dumps = json_encoder()  # compact JSON; ``json_text`` also escapes lone surrogates
# a string as ``dumps`` writes one, without the encoder's list of pieces
encode_basestring = json.encoder.encode_basestring
canonical_dumps = json_encoder(ensure_ascii=True, sort_keys=True)  # one text, any key order
_SURROGATE = re.compile(r"[\ud800-\udfff]")


def json_text(value: Any) -> str:
    r"""``value`` as compact JSON, a lone surrogate written as its escape.

    Example:
        >>> json_text({"a": ["é", "\ud800"]})
        '{"a":["é","\\ud800"]}'
    """
    return escape_surrogates(dumps(value))


def escape_surrogates(text: str) -> str:
    """A lone surrogate (only ever inside a JSON string) as the escape JSON allows."""
    if text.isascii() or not _SURROGATE.search(text):
        return text
    return _SURROGATE.sub(lambda match: f"\\u{ord(match.group()):04x}", text)

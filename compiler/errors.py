"""Typed errors. The web layer maps these once to one error shape."""

from __future__ import annotations


class CompilerError(Exception):
    """Base class for every error the compiler raises on purpose."""


class TranscriptError(CompilerError):
    """Input that holds no recognisable turn.

    Carries the 1-based ``line`` and ``column`` where reading gave up and the
    parse warnings gathered on the way, so a caller can show all of them. The
    message names the first warning, which is usually why no turn was found;
    ``reason`` is the message without place or warning, for a caller that shows
    the warnings beside it.

    Example:
        >>> str(TranscriptError("no recognisable turn", line=2, warnings=["line 1: junk"]))
        'no recognisable turn (line 2, column 1); first warning: line 1: junk'
    """

    def __init__(self, message: str, *, line: int = 1, column: int = 1, warnings=()):
        warnings = tuple(warnings)
        first = f"; first warning: {warnings[0]}" if warnings else ""
        super().__init__(f"{message} (line {line}, column {column}){first}")
        self.reason = message
        self.line = line
        self.column = column
        self.warnings = warnings


class SchemaError(CompilerError):
    """A schema that is unknown, unreadable or malformed."""


class OptionError(CompilerError, ValueError):
    """An option outside its allowed values (mode, policy)."""

"""The shipped schemas, each compiled once for as long as its files stay as they are.

A loop that names its schema (``schema="travel"``) on every call would otherwise compile
every pattern again on each call, tens of milliseconds for ``travel``, and the history
cache, which knows a schema by identity, would never resume an earlier compile. A
schema is frozen, so every caller may share one. A file written since (a measurement
refitted in the same process) is read again: the cache holds each file's modification
time and size.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

# per shipped schema file: the stamps of it and of its measurement, and the schema
_HELD: dict[Path, tuple[tuple, Any]] = {}


def shipped(path: Path, beside: Path, load: Callable[[Path], Any]) -> Any:
    """``load(path)``, or what it gave before if ``path`` and ``beside`` (its
    measurement) are unchanged since.

    Example:
        >>> import tempfile, os
        >>> folder = Path(tempfile.mkdtemp())
        >>> schema, measured = folder / "s.json", folder / "s.measurement.json"
        >>> _ = schema.write_text("{}")
        >>> loads = []
        >>> def load(path):
        ...     loads.append(path.read_text())
        ...     return object()
        >>> shipped(schema, measured, load) is shipped(schema, measured, load), len(loads)
        (True, 1)
        >>> _ = measured.write_text("{}")  # a measurement written beside it: read again
        >>> _ = shipped(schema, measured, load); len(loads)
        2
    """
    stamp = (_stamp(path), _stamp(beside))
    held = _HELD.get(path)
    if held is not None and held[0] == stamp:
        return held[1]
    found = load(path)
    _HELD[path] = (stamp, found)
    return found


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        found = path.stat()
    except OSError:
        return None
    return found.st_mtime_ns, found.st_size

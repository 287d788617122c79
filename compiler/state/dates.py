"""Calendar dates as people and tools write them, read into one form.

``iso_date`` reads ``2024-05-20``, ``May 20, 2024``, ``20th of May 2024``, ``Sept. 3rd`` and
``5/20/2025`` as ISO dates. A date written without a year has one only if the caller
supplies it (``year``): the register compares values and must not guess, while a scorer
that knows its corpus's calendar may.
"""

from __future__ import annotations

import datetime
import re

_MONTH_NAMES = (
    "january", "february", "march", "april", "may", "june",
    "july", "august", "september", "october", "november", "december",
)  # fmt: skip
_MONTHS = {
    name: number
    for number, full in enumerate(_MONTH_NAMES, start=1)
    for name in (full, full[:3], "sept" if full == "september" else full)
}
_ORDINAL = r"(\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"(?:,?\s+(\d{4}))?"
_DATES = (
    (re.compile(r"(\d{4})-(\d{1,2})-(\d{1,2})"), ("y", "m", "d")),
    (re.compile(rf"([a-z]+)\.?\s+{_ORDINAL}{_YEAR}"), ("mon", "d", "y")),
    (re.compile(rf"{_ORDINAL}\s+(?:of\s+)?([a-z]+)\.?{_YEAR}"), ("d", "mon", "y")),
    (re.compile(r"(\d{1,2})/(\d{1,2})(?:/(\d{4}))?"), ("m", "d", "y")),
)


def iso_date(text: str, year: int | None = None) -> str | None:
    """``text`` as an ISO date if the whole of it is one, else None. ``year`` is the year
    of a date written without one; without it, such a date is None.

    Example:
        >>> [iso_date(t) for t in ("May 20, 2024", "2024-05-20", "20th of May 2024")]
        ['2024-05-20', '2024-05-20', '2024-05-20']
        >>> iso_date("May 20"), iso_date("May 20", year=2024), iso_date("Sept. 3rd", 2024)
        (None, '2024-05-20', '2024-09-03')
        >>> iso_date("5/20/2025"), iso_date("May 32, 2024"), iso_date("economy")
        ('2025-05-20', None, None)
    """
    text = " ".join(text.casefold().split())
    if not text[:1].isalnum():
        return None
    for pattern, fields in _DATES:
        found = pattern.fullmatch(text)
        if found:
            return _date(dict(zip(fields, found.groups(), strict=True)), year)
    return None


def _date(parts: dict[str, str | None], year: int | None) -> str | None:
    month = _MONTHS.get(parts["mon"]) if "mon" in parts else int(parts["m"])
    given = int(parts["y"]) if parts["y"] else year
    if month is None or given is None:
        return None
    try:
        return datetime.date(given, month, int(parts["d"])).isoformat()
    except ValueError:
        return None

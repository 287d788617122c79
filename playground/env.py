"""Typed settings from the environment that fail loudly on a bad value.

Each helper reads one variable, returns its default when the variable is unset
or empty, and raises ``ImproperlyConfigured`` naming the variable when the value
cannot be read as the type asked for — a typo in production stops the start,
it does not quietly become the default.

Example:
    >>> env = {"DJANGO_DEBUG": "yes", "CONTEXTGC_RATE_LIMIT": "120"}
    >>> env_bool("DJANGO_DEBUG", False, environ=env)
    True
    >>> env_int("CONTEXTGC_RATE_LIMIT", 60, environ=env)
    120
    >>> env_list("CONTEXTGC_ALLOWED_ORIGINS", environ=env)
    []
    >>> env_url("CONTEXTGC_UPSTREAM_BASE", "https://api.openai.com/v1", environ=env)
    'https://api.openai.com/v1'
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from urllib.parse import urlsplit

from django.core.exceptions import ImproperlyConfigured

_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})


def _raw(name: str, environ: Mapping[str, str] | None) -> str | None:
    value = (os.environ if environ is None else environ).get(name, "").strip()
    return value or None


PRODUCTION_SIGNS = ("DJANGO_DEBUG", "DJANGO_SECRET_KEY", "DATABASE_URL")


def development_default(environ: Mapping[str, str] | None = None) -> bool:
    """Whether ``manage.py`` should run in development mode, as ``scripts/serve`` does.

    True only when none of ``PRODUCTION_SIGNS`` is set: a fresh clone then runs
    ``python3 manage.py <command>`` on the embedded SQLite file without exporting
    anything. Any of them set means the operator chose: their settings are used as
    given, and a production start without a key is refused. gunicorn (``wsgi.py``)
    never gets this default.

    Example:
        >>> development_default({}), development_default({"DATABASE_URL": "postgres://db/x"})
        (True, False)
        >>> development_default({"DJANGO_DEBUG": "0"})
        False
    """
    return all(_raw(name, environ) is None for name in PRODUCTION_SIGNS)


def env_str(name: str, default: str | None = None, *, environ=None) -> str | None:
    """The variable as text, or ``default``."""
    value = _raw(name, environ)
    return default if value is None else value


def env_bool(name: str, default: bool, *, environ=None) -> bool:
    """``1/true/yes/on`` or ``0/false/no/off`` (any case)."""
    value = _raw(name, environ)
    if value is None:
        return default
    if value.lower() in _TRUE:
        return True
    if value.lower() in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name}={value!r} is not a boolean (use 1/0, true/false, yes/no)")


def env_int(name: str, default: int, *, minimum: int = 0, environ=None) -> int:
    """A whole number no smaller than ``minimum``."""
    value = _raw(name, environ)
    if value is None:
        return default
    try:
        number = int(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={value!r} is not a whole number") from None
    if number < minimum:
        raise ImproperlyConfigured(f"{name}={number} is below its minimum of {minimum}")
    return number


def env_float(name: str, default: float, *, minimum: float = 0.0, environ=None) -> float:
    """A finite number no smaller than ``minimum`` (``nan`` and ``inf`` are refused).

    Example:
        >>> env_float("TIMEOUT", 60.0, environ={"TIMEOUT": "inf"})
        Traceback (most recent call last):
        ...
        django.core.exceptions.ImproperlyConfigured: TIMEOUT='inf' is not a finite number
    """
    value = _raw(name, environ)
    if value is None:
        return default
    try:
        number = float(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={value!r} is not a number") from None
    if not math.isfinite(number):
        raise ImproperlyConfigured(f"{name}={value!r} is not a finite number")
    if number < minimum:
        raise ImproperlyConfigured(f"{name}={number} is below its minimum of {minimum}")
    return number


def env_list(name: str, default: tuple[str, ...] = (), *, environ=None) -> list[str]:
    """Comma-separated values, blanks dropped."""
    value = _raw(name, environ)
    if value is None:
        return list(default)
    return [item.strip() for item in value.split(",") if item.strip()]


def env_url(name: str, default: str, *, environ=None) -> str:
    """An ``http://`` or ``https://`` URL with a host.

    Example:
        >>> env_url("BASE", "https://api.openai.com/v1", environ={"BASE": "notaurl"})
        Traceback (most recent call last):
        ...
        django.core.exceptions.ImproperlyConfigured: BASE='notaurl' is not an http(s) URL ...
    """
    value = _raw(name, environ)
    if value is None:
        return default
    try:
        parts = urlsplit(value)
        usable = parts.scheme in ("http", "https") and bool(parts.hostname) and parts.port != 0
    except ValueError:  # a port that is not a number, a malformed IPv6 host
        usable = False
    if not usable:
        raise ImproperlyConfigured(
            f"{name}={value!r} is not an http(s) URL with a host (e.g. https://api.openai.com/v1)"
        )
    return value

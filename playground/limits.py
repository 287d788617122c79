"""The per-client rate limit: django-ratelimit's fixed windows over a shared cache.

One budget per client, ``CONTEXTGC_RATE_LIMIT`` compiles a minute, spent by the
API, the console and the proxy alike. django-ratelimit counts in the cache named
``ratelimit``, which every gunicorn worker shares: memcached when
``CONTEXTGC_MEMCACHED`` names one, else counters in the site's database
(``playground.ratecache``). Either store, unreachable, is a 503 that says so: with the
database counter a database outage stops compiles, with memcached it does not.
"""

from __future__ import annotations

import functools
import ipaddress
import logging
from functools import lru_cache

from django.conf import settings
from django.db import InterfaceError, OperationalError
from django.shortcuts import render
from django_ratelimit.core import get_usage
from pymemcache.exceptions import MemcacheError

from playground.service import RequestError

GROUP = "contextgc.compile"
UNKNOWN = "unknown"  # the budget shared by clients without a usable address

log = logging.getLogger(__name__)


class RateLimited(Exception):
    """The client spent its budget; ``retry_after`` is whole seconds until it refills."""

    def __init__(self, limit: int, retry_after: int):
        super().__init__(f"rate limited: {limit}/minute, retry after {retry_after} s")
        self.limit, self.retry_after = limit, retry_after


def client_ip(request) -> str:
    """The client's address: REMOTE_ADDR, or X-Forwarded-For behind trusted proxies.

    With ``CONTEXTGC_PROXY_HOPS = n``, each of the n proxies appended the address
    it saw, so the client is the n-th entry from the right; entries further left
    are whatever the client sent and are not trusted. An entry that is no address
    (``unknown``, a host name) falls back to REMOTE_ADDR; a port or brackets
    around an address are dropped.
    """
    hops = settings.CONTEXTGC_PROXY_HOPS
    if hops:
        forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
        chain = [part.strip() for part in forwarded.split(",") if part.strip()]
        if len(chain) >= hops and (address := bare_address(chain[-hops])):
            return address
    return request.META.get("REMOTE_ADDR") or ""


def bare_address(text: str) -> str | None:
    """The IP address in ``text`` without a port or brackets; None when there is none.

    Example:
        >>> bare_address("203.0.113.9:4711"), bare_address("[2001:db8::1]:443")
        ('203.0.113.9', '2001:db8::1')
        >>> bare_address("2001:db8::1"), bare_address("unknown"), bare_address("")
        ('2001:db8::1', None, None)
    """
    text = text.strip()
    if text.startswith("["):  # [v6] or [v6]:port
        text, closed, rest = text[1:].partition("]")
        if not closed or (rest and not (rest.startswith(":") and _is_port(rest[1:]))):
            return None
    elif text.count(":") == 1:  # v4:port; a v6 address has two colons or more
        text, _, port = text.partition(":")
        if not _is_port(port):
            return None
    try:
        return str(ipaddress.ip_address(text))
    except ValueError:
        return None


def _is_port(text: str) -> bool:
    return text.isascii() and text.isdigit() and int(text) <= 65535


@lru_cache(maxsize=4096)  # clients come back: parse each address once, not on every request
def budget_owner(address: str) -> str:
    """Whom a budget belongs to: an IPv4 address, or an IPv6 address's /64 network.

    One IPv6 host usually holds a whole /64, so counting single IPv6 addresses would
    give it billions of budgets. An IPv4 client seen through a dual-stack socket
    (``::ffff:a.b.c.d``) is counted as its IPv4 address, not as the network ``::``.

    A client without a usable address (gunicorn on a unix socket leaves REMOTE_ADDR
    empty) spends the one shared budget ``UNKNOWN``: it is limited, never refused.

    Example:
        >>> budget_owner("203.0.113.7"), budget_owner("2001:db8:1:2:aa::5")
        ('203.0.113.7', '2001:db8:1:2::')
        >>> budget_owner("::ffff:203.0.113.7")
        '203.0.113.7'
        >>> budget_owner(""), budget_owner("garbage")
        ('unknown', 'unknown')
    """
    found = bare_address(address)
    if found is None:
        return UNKNOWN
    ip = ipaddress.ip_address(found)
    if ip.version == 4:
        return str(ip)
    if ip.ipv4_mapped:
        return str(ip.ipv4_mapped)
    return str(ipaddress.ip_network(f"{ip}/64", strict=False).network_address)


def spend(request) -> None:
    """Count one compile for this client; raise ``RateLimited`` past the budget.

    django-ratelimit's window named ``w`` holds every request made in a second up to
    and including second ``w``, so the wait until a new window is its ``time_left``
    plus one: a client that waits ``retry_after`` is in a new window. A cache that
    cannot be reached, or that loses the count, is a 503 with the reason: neither a
    compile that goes uncounted nor a 429 for a client that was not over its budget.
    The database's own error names its host, so only the server log gets it.
    """
    limit = settings.CONTEXTGC_RATE_LIMIT
    try:
        usage = get_usage(request, group=GROUP, key=_owner, rate=f"{limit}/m", increment=True)
    except (OSError, MemcacheError) as exc:
        raise RequestError(
            503, "rate_limit_unavailable", f"the rate-limit cache cannot be reached ({exc})"
        ) from None
    except (OperationalError, InterfaceError) as exc:
        log.warning("rate-limit counters unavailable: %s", exc)
        raise RequestError(
            503,
            "rate_limit_unavailable",
            "the rate-limit cache cannot be reached (it counts in the site's database, "
            "which is down); try again in a moment",
        ) from None
    if usage is None:  # RATELIMIT_ENABLE is off: the operator switched counting off
        return
    if usage["limit"] == 0:  # django-ratelimit's answer when it got no count back
        raise RequestError(
            503,
            "rate_limit_unavailable",
            "the rate-limit cache lost this client's count (the entry was evicted or "
            "expired while it was being counted); try again",
        )
    if usage["should_limit"]:
        raise RateLimited(limit=limit, retry_after=usage["time_left"] + 1)


def _owner(group: str, request) -> str:
    return budget_owner(client_ip(request))


# --- sign-in attempts -------------------------------------------------------------------

LOGIN_GROUP = "contextgc.login"


def throttled_login(view):
    """``view`` (a login page) with its POSTs limited per account and per client.

    Every attempt counts, in the rate limit's shared cache: ``CONTEXTGC_LOGIN_RATE_ACCOUNT``
    for one user name from anywhere, ``CONTEXTGC_LOGIN_RATE_CLIENT`` for one client on any
    user names. Past either, the page answers 429 with ``Retry-After`` and does not check
    the password, so guessing stops being worth it; the right password is refused too
    until the window ends. A cache that cannot be reached is a 503, never a free attempt.
    """

    @functools.wraps(view)
    def wrapped(request, *args, **kwargs):
        if request.method != "POST":
            return view(request, *args, **kwargs)
        wait = 0
        for key, rate in (
            (_account, settings.CONTEXTGC_LOGIN_RATE_ACCOUNT),
            (_owner, settings.CONTEXTGC_LOGIN_RATE_CLIENT),
        ):
            try:
                usage = get_usage(request, group=LOGIN_GROUP, key=key, rate=rate, increment=True)
            except (OSError, MemcacheError):
                return _login_refused(request, 503, "the sign-in counter cannot be reached", 0)
            if usage is not None and usage["should_limit"]:
                wait = max(wait, usage["time_left"] + 1)
        if wait:
            return _login_refused(request, 429, "too many sign-in attempts", wait)
        return view(request, *args, **kwargs)

    return wrapped


def _account(group: str, request) -> str:
    """The user name tried, as Django's default backend matches it (case kept)."""
    return "account:" + request.POST.get("username", "")[:150]


def _login_refused(request, status: int, reason: str, retry_after: int):
    context = {"reason": reason, "retry_after": retry_after, "minutes": -(-retry_after // 60)}
    response = render(request, "login_refused.html", context, status=status)
    if retry_after:
        response["Retry-After"] = str(retry_after)
    return response

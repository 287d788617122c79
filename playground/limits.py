"""The per-client rate limit: a fixed one-minute window per client, counted in the database.

One budget per client, ``CONTEXTGC_RATE_LIMIT`` compiles a minute, spent by the
API, the console and the proxy alike. Counters live in the database
(``playground.ratecache``), so every gunicorn worker sees the same count, and
counting a request is one SQL statement.
"""

from __future__ import annotations

import ipaddress
import math
import time
import zlib
from functools import lru_cache

from django.conf import settings

from playground import ratecache

GROUP = "contextgc.compile"
PERIOD = 60  # seconds: the budget is per minute


class RateLimited(Exception):
    """The client spent its budget; ``retry_after`` is whole seconds until it refills."""

    def __init__(self, limit: int, retry_after: int):
        super().__init__(f"rate limited: {limit}/minute, retry after {retry_after} s")
        self.limit, self.retry_after = limit, retry_after


def client_ip(request) -> str:
    """The client's address: REMOTE_ADDR, or X-Forwarded-For behind trusted proxies.

    With ``CONTEXTGC_PROXY_HOPS = n``, each of the n proxies appended the address
    it saw, so the client is the n-th entry from the right; entries further left
    are whatever the client sent and are not trusted.
    """
    hops = settings.CONTEXTGC_PROXY_HOPS
    if hops:
        forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
        chain = [part.strip() for part in forwarded.split(",") if part.strip()]
        if len(chain) >= hops:
            return chain[-hops]
    return request.META["REMOTE_ADDR"]


@lru_cache(maxsize=4096)  # clients come back: parse each address once, not on every request
def budget_owner(address: str) -> str:
    """Whom a budget belongs to: an IPv4 address, or an IPv6 address's /64 network.

    One IPv6 host usually holds a whole /64, so counting single IPv6 addresses would
    give it billions of budgets. An IPv4 client seen through a dual-stack socket
    (``::ffff:a.b.c.d``) is counted as its IPv4 address, not as the network ``::``.

    Example:
        >>> budget_owner("203.0.113.7"), budget_owner("2001:db8:1:2:aa::5")
        ('203.0.113.7', '2001:db8:1:2::')
        >>> budget_owner("::ffff:203.0.113.7")
        '203.0.113.7'
    """
    ip = ipaddress.ip_address(address)
    if ip.version == 4:
        return str(ip)
    if ip.ipv4_mapped:
        return str(ip.ipv4_mapped)
    return str(ipaddress.ip_network(f"{ip}/64", strict=False).network_address)


def window_end(owner: str, now: float) -> int:
    """When the owner's current one-minute window ends, in whole seconds since the epoch.

    Windows are fixed, each owner's shifted by a hash of the owner so that budgets do
    not all refill in the same second; these are the windows django-ratelimit kept
    here before. A window ends at a whole second and holds every request before it.

    Example:
        >>> window_end("203.0.113.7", 1_000_000.5), window_end("203.0.113.7", 1_000_034.9)
        (1000035, 1000035)
        >>> window_end("203.0.113.7", 1_000_035.0)
        1000095
    """
    second = int(now)
    return second + 1 + (zlib.crc32(owner.encode()) - second) % PERIOD


def spend(request) -> None:
    """Count one compile for this client; raise ``RateLimited`` past the budget.

    ``retry_after`` rounds up, so a client that waits that long is in a new window.
    """
    owner, now = budget_owner(client_ip(request)), time.time()
    counted = ratecache.hit(f"{GROUP}:{owner}", window_end(owner, now))
    limit = settings.CONTEXTGC_RATE_LIMIT
    if counted.count > limit:
        raise RateLimited(limit=limit, retry_after=math.ceil(counted.window_end - now))

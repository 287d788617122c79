"""The per-client rate limit: django-ratelimit over the shared counter cache.

One budget per client, ``CONTEXTGC_RATE_LIMIT`` compiles a minute, spent by the
API, the console and the proxy alike. Counters live in the database
(``playground.ratecache``), so every gunicorn worker sees the same count.
"""

from __future__ import annotations

from django.conf import settings
from django_ratelimit.core import get_usage

GROUP = "contextgc.compile"


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


def spend(request) -> None:
    """Count one compile for this client; raise ``RateLimited`` past the budget."""
    usage = get_usage(
        request,
        group=GROUP,
        key="ip",
        rate=f"{settings.CONTEXTGC_RATE_LIMIT}/m",
        increment=True,
    )
    if usage is not None and usage["should_limit"]:
        raise RateLimited(limit=usage["limit"], retry_after=max(1, usage["time_left"]))

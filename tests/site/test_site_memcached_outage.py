"""With the rate limit's memcached gone, every refusal says it cannot be reached.

pymemcache retries a failed server a few times before it gives up on it, answering
"no value" in between, which read as a count the cache had lost. The site's options
mark the server dead at the first failure, so the first refusal and every later one
give the same reason. A real memcached, stopped in the middle of the test.
"""

from __future__ import annotations

import json

import pytest

from tests.site.conftest import running_memcached

pytestmark = pytest.mark.django_db


def post_compile(client):
    body = json.dumps({"transcript": "user: hi"})
    return client.post("/api/compile", data=body, content_type="application/json")


def test_every_refusal_after_memcached_stops_says_it_cannot_be_reached(client, settings):
    server = running_memcached()
    location = server.__enter__()
    try:
        settings.CACHES = {
            **settings.CACHES,
            "ratelimit": {
                "BACKEND": "django.core.cache.backends.memcached.PyMemcacheCache",
                "LOCATION": location,
                "OPTIONS": settings.CONTEXTGC_MEMCACHED_OPTIONS,
            },
        }
        assert post_compile(client).status_code == 200
    finally:
        server.stop()
    answers = [post_compile(client) for _ in range(6)]
    assert [a.status_code for a in answers] == [503] * 6
    assert {a.json()["error"] for a in answers} == {"rate_limit_unavailable"}
    assert all("cannot be reached" in a.json()["message"] for a in answers)

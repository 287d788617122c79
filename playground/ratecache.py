"""Request counters for the rate limit, in a database table: one SQL statement a request.

Every gunicorn worker must see the same count, so the counters live in the
database (the table of ``playground.RateCounter``). Counting a request is a
single upsert that adds one and returns the new count, so it costs one round
trip, and the database serialises concurrent requests on the row: no count is
lost between workers or threads. Works on PostgreSQL and on SQLite (3.35 or
later, for ``RETURNING``).

A row is one key's count in one fixed window; ``expires`` is when that window
ends (seconds since the epoch).
"""

from __future__ import annotations

import time
from typing import NamedTuple

from django.db import connections, router

from playground.models import RateCounter

TABLE = RateCounter._meta.db_table

# A count from an earlier window restarts at 1 and takes the new window's end; a count
# from the same (or, from a process whose clock lags, a later) window goes on. Every
# expression in SET reads the row as it was before this statement.
COUNT_ONE = (
    f"INSERT INTO {TABLE} AS counter (cache_key, hits, expires) VALUES (%s, 1, %s) "
    "ON CONFLICT (cache_key) DO UPDATE SET "
    "hits = CASE WHEN counter.expires < excluded.expires THEN 1 ELSE counter.hits + 1 END, "
    "expires = CASE WHEN counter.expires < excluded.expires "
    "THEN excluded.expires ELSE counter.expires END "
    "RETURNING hits, expires"
)
DROP_ENDED = f"DELETE FROM {TABLE} WHERE expires <= %s"


class Hit(NamedTuple):
    """A request as counted: the key's count so far in the window, and when it ends."""

    count: int
    window_end: float


def hit(key: str, window_end: float) -> Hit:
    """Count one request for ``key`` in the window that ends at ``window_end``.

    A count of 1 means this request opened a window; only then are the rows of
    windows that have ended deleted, so the table stays as small as the set of
    recent clients while a request inside an open window stays one statement.
    """
    with connections[router.db_for_write(RateCounter)].cursor() as cursor:
        cursor.execute(COUNT_ONE, [key, window_end])
        count, end = cursor.fetchone()
        if count == 1:
            cursor.execute(DROP_ENDED, [time.time()])
    return Hit(count, end)

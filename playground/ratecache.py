"""A Django cache of whole-number counters in a database table, for the rate limit.

The rate limit is django-ratelimit, which counts a client's requests with the
cache calls ``add`` (open a window at 1) and ``incr`` (count one more). Every
gunicorn worker must see the same count, so the cache has to be shared. With
memcached configured (``CONTEXTGC_MEMCACHED``) that is memcached, whose ``add``
and ``incr`` are atomic. Without it, this backend keeps the counters in the
site's database (the table of ``playground.RateCounter``).

Django's own ``DatabaseCache`` would not do: it increments by reading and then
writing, so two workers can both read 7 and both write 8. Here each call is one
SQL statement — an upsert for ``add``, ``UPDATE … RETURNING`` for ``incr`` — so
the database serialises concurrent requests on the row and no count is lost.
Works on PostgreSQL and on SQLite (3.35 or later, for ``RETURNING``).

Only whole numbers are stored: it is a counter store, not a general cache.
"""

from __future__ import annotations

import time

from django.core.cache.backends.base import DEFAULT_TIMEOUT, BaseCache
from django.db import connections, router

from playground.models import RateCounter

TABLE = RateCounter._meta.db_table
NEVER = 1e18  # the expiry of an entry stored with no timeout

# Store a value unless a live entry holds the key; an expired entry is overwritten.
ADD = (
    f"INSERT INTO {TABLE} AS counter (cache_key, hits, expires) VALUES (%s, %s, %s) "
    "ON CONFLICT (cache_key) DO UPDATE SET hits = excluded.hits, expires = excluded.expires "
    "WHERE counter.expires <= %s"
)
SET = (
    f"INSERT INTO {TABLE} AS counter (cache_key, hits, expires) VALUES (%s, %s, %s) "
    "ON CONFLICT (cache_key) DO UPDATE SET hits = excluded.hits, expires = excluded.expires"
)
INCR = f"UPDATE {TABLE} SET hits = hits + %s WHERE cache_key = %s AND expires > %s RETURNING hits"
GET = f"SELECT hits FROM {TABLE} WHERE cache_key = %s AND expires > %s"
TOUCH = f"UPDATE {TABLE} SET expires = %s WHERE cache_key = %s AND expires > %s"
DELETE = f"DELETE FROM {TABLE} WHERE cache_key = %s"
DROP_ENDED = f"DELETE FROM {TABLE} WHERE expires <= %s"


class CounterCache(BaseCache):
    """A cache backend (``BACKEND: playground.ratecache.CounterCache``) of counters.

    An ``add`` that opens a new entry also deletes the entries that have expired, so
    the table stays as small as the set of recent clients while counting inside an
    open window stays one statement per call.
    """

    def __init__(self, location: str, params: dict):
        super().__init__(params)

    def add(self, key, value, timeout=DEFAULT_TIMEOUT, version=None) -> bool:
        """Store ``value`` unless a live entry holds ``key``; True when stored."""
        key = self.make_and_validate_key(key, version=version)
        now = time.time()
        with self._cursor() as cursor:
            cursor.execute(ADD, [key, _whole(value), self._expires(timeout), now])
            added = cursor.rowcount == 1
            if added:
                cursor.execute(DROP_ENDED, [now])
        return added

    def incr(self, key, delta=1, version=None) -> int:
        """Add ``delta`` in one statement; a missing or expired key raises ValueError."""
        key = self.make_and_validate_key(key, version=version)
        with self._cursor() as cursor:
            cursor.execute(INCR, [_whole(delta), key, time.time()])
            row = cursor.fetchone()
        if row is None:
            raise ValueError(f"Key '{key}' not found")
        return row[0]

    def set(self, key, value, timeout=DEFAULT_TIMEOUT, version=None) -> None:
        key = self.make_and_validate_key(key, version=version)
        with self._cursor() as cursor:
            cursor.execute(SET, [key, _whole(value), self._expires(timeout)])

    def get(self, key, default=None, version=None):
        key = self.make_and_validate_key(key, version=version)
        with self._cursor() as cursor:
            cursor.execute(GET, [key, time.time()])
            row = cursor.fetchone()
        return default if row is None else row[0]

    def touch(self, key, timeout=DEFAULT_TIMEOUT, version=None) -> bool:
        key = self.make_and_validate_key(key, version=version)
        now = time.time()
        with self._cursor() as cursor:
            cursor.execute(TOUCH, [self._expires(timeout), key, now])
            return cursor.rowcount == 1

    def delete(self, key, version=None) -> bool:
        key = self.make_and_validate_key(key, version=version)
        with self._cursor() as cursor:
            cursor.execute(DELETE, [key])
            return cursor.rowcount == 1

    def clear(self) -> None:
        RateCounter.objects.all().delete()

    def _expires(self, timeout) -> float:
        seconds = self.get_backend_timeout(timeout)  # an absolute time, or None: never
        return NEVER if seconds is None else float(seconds)

    @staticmethod
    def _cursor():
        return connections[router.db_for_write(RateCounter)].cursor()


def _whole(value) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"CounterCache stores whole numbers only, not {type(value).__name__}")
    return value

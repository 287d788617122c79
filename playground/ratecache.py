"""A cache of integer counters in a database table, with atomic increments.

The rate limit (django-ratelimit) counts requests per client with ``add`` and
``incr`` on a cache that every gunicorn worker must share. Django's
``DatabaseCache`` is shared but increments by reading then writing, so two
workers can both read 7 and both write 8. Here each operation is one SQL
statement — an upsert for ``add`` and ``set``, ``UPDATE … RETURNING`` for
``incr`` — so the database serialises them and no count is lost. Works on
PostgreSQL and on SQLite (3.35 or later).

Only whole numbers are stored: it is a counter store, not a general cache.
The table is ``playground.RateCounter`` (created by the app's migration).
"""

from __future__ import annotations

import time

from django.core.cache.backends.base import DEFAULT_TIMEOUT, BaseCache
from django.db import connections, router

from playground.models import RateCounter

NEVER = 1e18  # an expiry for "no timeout"


class CounterCache(BaseCache):
    """Cache backend: ``LOCATION`` names the table (informational; the model owns it)."""

    def __init__(self, location: str, params: dict):
        super().__init__(params)
        self._table = RateCounter._meta.db_table

    # --- helpers -------------------------------------------------------------------

    def _cursor(self, *, write: bool):
        route = router.db_for_write if write else router.db_for_read
        return connections[route(RateCounter)].cursor()

    def _expires(self, timeout) -> float:
        seconds = self.get_backend_timeout(timeout)
        return NEVER if seconds is None else float(seconds)

    @staticmethod
    def _int(value) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"CounterCache stores whole numbers only, not {type(value).__name__}")
        return value

    # --- the cache API -------------------------------------------------------------

    def add(self, key, value, timeout=DEFAULT_TIMEOUT, version=None) -> bool:
        """Store ``value`` unless a live entry exists; True when stored."""
        key = self.make_and_validate_key(key, version=version)
        value, now = self._int(value), time.time()
        with self._cursor(write=True) as cursor:
            cursor.execute(
                f"INSERT INTO {self._table} (cache_key, hits, expires) VALUES (%s, %s, %s) "
                "ON CONFLICT (cache_key) DO UPDATE SET hits = excluded.hits, "
                f"expires = excluded.expires WHERE {self._table}.expires <= %s",
                [key, value, self._expires(timeout), now],
            )
            added = cursor.rowcount == 1
            if added:  # a new window for a client: drop the windows that have ended
                cursor.execute(f"DELETE FROM {self._table} WHERE expires <= %s", [now])
        return added

    def set(self, key, value, timeout=DEFAULT_TIMEOUT, version=None) -> None:
        key = self.make_and_validate_key(key, version=version)
        with self._cursor(write=True) as cursor:
            cursor.execute(
                f"INSERT INTO {self._table} (cache_key, hits, expires) VALUES (%s, %s, %s) "
                "ON CONFLICT (cache_key) DO UPDATE SET hits = excluded.hits, "
                "expires = excluded.expires",
                [key, self._int(value), self._expires(timeout)],
            )

    def incr(self, key, delta=1, version=None) -> int:
        """Add ``delta`` in one statement; a missing or expired key raises ValueError."""
        key = self.make_and_validate_key(key, version=version)
        with self._cursor(write=True) as cursor:
            cursor.execute(
                f"UPDATE {self._table} SET hits = hits + %s "
                "WHERE cache_key = %s AND expires > %s RETURNING hits",
                [self._int(delta), key, time.time()],
            )
            row = cursor.fetchone()
        if row is None:
            raise ValueError(f"Key '{key}' not found")
        return row[0]

    def get(self, key, default=None, version=None):
        key = self.make_and_validate_key(key, version=version)
        with self._cursor(write=False) as cursor:
            cursor.execute(
                f"SELECT hits FROM {self._table} WHERE cache_key = %s AND expires > %s",
                [key, time.time()],
            )
            row = cursor.fetchone()
        return default if row is None else row[0]

    def touch(self, key, timeout=DEFAULT_TIMEOUT, version=None) -> bool:
        key = self.make_and_validate_key(key, version=version)
        with self._cursor(write=True) as cursor:
            cursor.execute(
                f"UPDATE {self._table} SET expires = %s WHERE cache_key = %s AND expires > %s",
                [self._expires(timeout), key, time.time()],
            )
            return cursor.rowcount == 1

    def delete(self, key, version=None) -> bool:
        key = self.make_and_validate_key(key, version=version)
        with self._cursor(write=True) as cursor:
            cursor.execute(f"DELETE FROM {self._table} WHERE cache_key = %s", [key])
            return cursor.rowcount == 1

    def has_key(self, key, version=None) -> bool:
        return self.get(key, version=version) is not None

    def clear(self) -> None:
        with self._cursor(write=True) as cursor:
            cursor.execute(f"DELETE FROM {self._table}")

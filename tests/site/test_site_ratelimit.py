"""The rate limit's counters, the limit over requests, and the limit across worker processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from django.db import connection, connections
from django.test.utils import CaptureQueriesContext

from playground.models import RateCounter
from playground.ratecache import CounterCache
from tests.site.conftest import free_port

ROOT = Path(__file__).resolve().parents[2]
END = 2_000_000_000  # a window end far in the future, in seconds since the epoch


def post_compile(client, **extra):
    body = json.dumps({"transcript": "user: hi"})
    return client.post("/api/compile", data=body, content_type="application/json", **extra)


# --- the database counters ----------------------------------------------------------


@pytest.fixture
def counters():
    return CounterCache("", {})


@pytest.mark.django_db
def test_add_opens_an_entry_once_and_incr_counts_on(counters):
    assert [counters.add("k", 1, 60), counters.add("k", 1, 60)] == [True, False]
    assert [counters.incr("k") for _ in range(3)] == [2, 3, 4]
    assert counters.get("k") == 4 and counters.get("other", "none") == "none"


@pytest.mark.django_db
def test_an_expired_entry_is_gone_and_add_opens_it_again(counters):
    RateCounter.objects.create(cache_key=counters.make_key("k"), hits=9, expires=time.time() - 1)
    assert counters.get("k") is None
    with pytest.raises(ValueError):
        counters.incr("k")
    assert counters.add("k", 1, 60) is True and counters.incr("k") == 2


@pytest.mark.django_db
def test_opening_an_entry_drops_the_expired_ones(counters):
    now = time.time()
    RateCounter.objects.create(cache_key="ended", hits=3, expires=now - 1)
    RateCounter.objects.create(cache_key="open", hits=2, expires=now + 30)
    counters.add("new", 1, 60)
    kept = RateCounter.objects.order_by("cache_key").values_list("cache_key", "hits")
    assert list(kept) == [(counters.make_key("new"), 1), ("open", 2)]


@pytest.mark.django_db
def test_only_whole_numbers_are_stored(counters):
    with pytest.raises(TypeError):
        counters.set("k", "7")
    counters.set("k", 7, None)  # no timeout: kept until deleted
    assert counters.touch("k", 60) and counters.get("k") == 7
    assert counters.delete("k") and counters.get("k") is None


@pytest.mark.django_db(transaction=True)
def test_concurrent_increments_from_many_connections_each_get_their_own_count(counters):
    counters.add("shared", 0, 60)
    start, counts = threading.Barrier(6), []

    def hammer():
        start.wait()
        try:
            counts.extend(counters.incr("shared") for _ in range(25))
        finally:
            connections.close_all()  # this thread's own connection

    threads = [threading.Thread(target=hammer) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(counts) == list(range(1, 151))
    assert counters.get("shared") == 150


# --- memcached ---------------------------------------------------------------------------


def _memcached_cache(location: str) -> dict:
    backend = "django.core.cache.backends.memcached.PyMemcacheCache"
    return {"BACKEND": backend, "LOCATION": location, "OPTIONS": {"connect_timeout": 2}}


@pytest.mark.django_db
def test_with_memcached_configured_the_count_is_there_not_in_the_database(
    client, settings, memcached
):
    settings.CACHES = {**settings.CACHES, "ratelimit": _memcached_cache(memcached)}
    settings.CONTEXTGC_RATE_LIMIT = 2
    with CaptureQueriesContext(connection) as queries:
        statuses = [post_compile(client, REMOTE_ADDR="198.51.100.9").status_code for _ in range(3)]
    assert statuses == [200, 200, 429]
    assert len(queries) == 0 and not RateCounter.objects.exists()


@pytest.mark.django_db
def test_an_unreachable_rate_limit_cache_is_a_503_with_the_reason(client, settings):
    settings.CACHES = {
        **settings.CACHES,
        "ratelimit": _memcached_cache(f"127.0.0.1:{free_port()}"),
    }
    response = post_compile(client)
    assert response.status_code == 503
    assert response.json()["error"] == "rate_limit_unavailable"
    assert "cannot be reached" in response.json()["message"]


@pytest.mark.django_db
def test_a_count_the_cache_lost_is_a_503_not_a_429(client, monkeypatch):
    # django-ratelimit's add said the window was open, then incr found no entry (an
    # eviction or expiry in between): it has no count, and the request was not over
    # the limit, so the answer must not be "too many requests, retry after 0 s"
    monkeypatch.setattr(CounterCache, "add", lambda self, *args, **kwargs: False)
    response = post_compile(client)
    assert response.status_code == 503
    assert "Retry-After" not in response
    assert response.json()["error"] == "rate_limit_unavailable"
    assert "lost" in response.json()["message"]


@pytest.mark.django_db
def test_with_the_library_switched_off_nothing_is_counted(client, settings):
    settings.RATELIMIT_ENABLE = False
    settings.CONTEXTGC_RATE_LIMIT = 1
    statuses = [post_compile(client).status_code for _ in range(3)]
    assert statuses == [200, 200, 200] and not RateCounter.objects.exists()


# --- the limit over requests -----------------------------------------------------------


@pytest.mark.django_db
def test_an_api_compile_counts_in_two_statements_on_the_database(client):
    with CaptureQueriesContext(connection) as opening:
        post_compile(client)
    with CaptureQueriesContext(connection) as counting:
        response = post_compile(client)
    assert response.status_code == 200
    # django-ratelimit's add (+ drop the ended windows when it opens one), then its incr
    assert [len(opening), len(counting)] == [2, 2]


@pytest.mark.django_db
def test_retry_after_is_exactly_the_wait_until_the_window_ends(client, settings, monkeypatch):
    settings.CONTEXTGC_RATE_LIMIT = 1
    clock = [1_800_000_000.25]
    monkeypatch.setattr(time, "time", lambda: clock[0])
    post_compile(client)
    retry = int(post_compile(client)["Retry-After"])
    clock[0] += retry - 1
    assert post_compile(client).status_code == 429
    clock[0] += 1
    assert post_compile(client).status_code == 200


@pytest.mark.django_db
def test_ipv6_clients_share_a_budget_per_64_network(client, settings):
    settings.CONTEXTGC_RATE_LIMIT = 1
    first = post_compile(client, REMOTE_ADDR="2001:db8:1:2::10")
    same_network = post_compile(client, REMOTE_ADDR="2001:db8:1:2:ffff::20")
    other_network = post_compile(client, REMOTE_ADDR="2001:db8:1:3::10")
    statuses = [first.status_code, same_network.status_code, other_network.status_code]
    assert statuses == [200, 429, 200]


# --- the limit across gunicorn workers ---------------------------------------------------


def _database_env() -> dict[str, str]:
    """Environment that points a new process at this test run's database."""
    db = connection.settings_dict
    if db["ENGINE"].endswith("sqlite3"):
        return {"CONTEXTGC_SQLITE_PATH": str(db["NAME"])}
    auth = db["USER"] + (f":{db['PASSWORD']}" if db["PASSWORD"] else "")
    return {"DATABASE_URL": f"postgres://{auth}@{db['HOST']}:{db['PORT']}/{db['NAME']}"}


def _wait_until_both_serve(url: str, log: Path, process: subprocess.Popen) -> None:
    """Return once each worker has answered a request.

    A worker's first request is slow (Django loads the URLconf and the compiler then):
    started with one worker still cold, the test would see the warm one serve every
    compile. Both workers wait on the one socket, so either may take any request.
    """
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"gunicorn exited with {process.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=5):
                pass
        except OSError:
            time.sleep(0.1)
        if log.exists() and len({line.split()[0] for line in log.read_text().splitlines()}) == 2:
            return
    raise RuntimeError("the two gunicorn workers did not both answer in time")


def _post(url: str) -> int:
    body = json.dumps({"transcript": "user: hi\nassistant: hello"}).encode()
    request = urllib.request.Request(url, body, {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=20) as response:
            return response.status
    except urllib.error.HTTPError as exc:
        exc.close()
        return exc.code


@pytest.fixture(params=["database", "memcached"])
def two_workers(request, tmp_path):
    """gunicorn with two worker processes on this run's database, limit 20 a minute,
    counting in the database or in a real memcached."""
    port, log = free_port(), tmp_path / "access.log"
    shared = {}
    if request.param == "memcached":
        shared["CONTEXTGC_MEMCACHED"] = request.getfixturevalue("memcached")
    env = {
        **{k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "CONTEXTGC_MEMCACHED")},
        **_database_env(),
        **shared,
        "DJANGO_SETTINGS_MODULE": "playground.settings",
        "DJANGO_SECRET_KEY": "test-only",
        "DJANGO_DEBUG": "0",
        "CONTEXTGC_RATE_LIMIT": "20",
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "playground.wsgi", "--workers", "2",
         "--bind", f"127.0.0.1:{port}", "--access-logfile", str(log),
         "--access-logformat", "%(p)s %(s)s %(U)s"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        _wait_until_both_serve(f"http://127.0.0.1:{port}/api/health", log, process)
        yield f"http://127.0.0.1:{port}", log, request.param
    finally:
        process.terminate()
        process.wait(timeout=30)


@pytest.mark.django_db(transaction=True)
def test_the_limit_is_one_budget_shared_by_every_worker_process(two_workers):
    base, log, store = two_workers
    start, statuses = threading.Barrier(6), []

    def client():
        start.wait()
        for _ in range(5):
            statuses.append(_post(f"{base}/api/compile"))

    threads = [threading.Thread(target=client) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    served = [line.split() for line in log.read_text().splitlines()]
    compiles = [pid for pid, _, path in served if path == "/api/compile"]
    assert sorted(statuses) == [200] * 20 + [429] * 10
    assert len(set(compiles)) == 2, "both worker processes served compiles"
    counted = list(RateCounter.objects.values_list("hits", flat=True))
    assert counted == ([30] if store == "database" else [])

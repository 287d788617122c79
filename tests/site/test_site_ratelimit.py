"""The rate limit's counters, the limit over requests, and the limit across worker processes."""

from __future__ import annotations

import json
import os
import socket
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

from playground import ratecache
from playground.models import RateCounter

ROOT = Path(__file__).resolve().parents[2]
END = 2_000_000_000  # a window end far in the future, in seconds since the epoch


def post_compile(client, **extra):
    body = json.dumps({"transcript": "user: hi"})
    return client.post("/api/compile", data=body, content_type="application/json", **extra)


# --- the counters ----------------------------------------------------------------------


@pytest.mark.django_db
def test_hit_counts_up_within_a_window_and_says_when_it_ends():
    assert [ratecache.hit("k", END) for _ in range(3)] == [(1, END), (2, END), (3, END)]


@pytest.mark.django_db
def test_hit_counts_keys_apart():
    ratecache.hit("a", END)
    assert ratecache.hit("b", END) == (1, END)


@pytest.mark.django_db
def test_a_later_window_starts_the_count_again():
    ratecache.hit("k", END)
    ratecache.hit("k", END)
    assert ratecache.hit("k", END + 60) == (1, END + 60)
    assert list(RateCounter.objects.values_list("hits", "expires")) == [(1, END + 60)]


@pytest.mark.django_db
def test_a_process_whose_clock_lags_counts_into_the_later_window():
    ratecache.hit("k", END + 60)
    assert ratecache.hit("k", END) == (2, END + 60)


@pytest.mark.django_db
def test_opening_a_window_drops_the_windows_that_have_ended():
    now = time.time()
    RateCounter.objects.create(cache_key="ended", hits=3, expires=now - 1)
    RateCounter.objects.create(cache_key="open", hits=2, expires=now + 30)
    ratecache.hit("new", now + 60)
    kept = RateCounter.objects.order_by("cache_key").values_list("cache_key", "hits")
    assert list(kept) == [("new", 1), ("open", 2)]


@pytest.mark.django_db(transaction=True)
def test_concurrent_hits_from_many_connections_each_get_their_own_count():
    start, counts = threading.Barrier(6), []

    def hammer():
        start.wait()
        try:
            counts.extend(ratecache.hit("shared", END).count for _ in range(25))
        finally:
            connections.close_all()  # this thread's own connection

    threads = [threading.Thread(target=hammer) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(counts) == list(range(1, 151))
    assert RateCounter.objects.get(cache_key="shared").hits == 150


# --- the limit over requests -----------------------------------------------------------


@pytest.mark.django_db
def test_an_api_compile_makes_one_sql_statement_once_its_window_is_open(client):
    with CaptureQueriesContext(connection) as opening:
        post_compile(client)
    with CaptureQueriesContext(connection) as counting:
        response = post_compile(client)
    assert response.status_code == 200
    assert [len(opening), len(counting)] == [2, 1]  # count (+ drop ended windows once)


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


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


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


@pytest.fixture
def two_workers(tmp_path):
    """gunicorn with two worker processes on this run's database, limit 20 a minute."""
    port, log = _free_port(), tmp_path / "access.log"
    env = {
        **{k: v for k, v in os.environ.items() if k != "DATABASE_URL"},
        **_database_env(),
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
        yield f"http://127.0.0.1:{port}", log
    finally:
        process.terminate()
        process.wait(timeout=30)


@pytest.mark.django_db(transaction=True)
def test_the_limit_is_one_budget_shared_by_every_worker_process(two_workers):
    base, log = two_workers
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
    assert list(RateCounter.objects.values_list("hits", flat=True)) == [30]

"""The rate limit's counter store, and the limit itself across real worker processes."""

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
from django.core.cache import caches
from django.db import connection, connections

from playground.models import RateCounter

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def counters():
    return caches["ratelimit"]


# --- the counter store -----------------------------------------------------------------


@pytest.mark.django_db
def test_add_stores_a_count_only_when_there_is_none(counters):
    assert counters.add("k", 1, 60) is True
    assert counters.add("k", 5, 60) is False
    assert counters.get("k") == 1


@pytest.mark.django_db
def test_incr_counts_up_and_returns_the_new_count(counters):
    counters.add("k", 0, 60)
    assert [counters.incr("k") for _ in range(3)] == [1, 2, 3]
    assert counters.incr("k", 10) == 13


@pytest.mark.django_db
def test_incr_of_a_missing_key_raises_value_error_as_django_caches_do(counters):
    with pytest.raises(ValueError, match="not found"):
        counters.incr("missing")


@pytest.mark.django_db
def test_an_ended_window_counts_as_absent_and_is_replaced(counters):
    counters.set("k", 7, 0)  # a timeout of 0 expires at once
    assert counters.get("k") is None
    assert counters.add("k", 1, 60) is True
    assert counters.get("k") == 1


@pytest.mark.django_db
def test_a_new_window_drops_the_windows_that_have_ended(counters):
    counters.set("old", 3, 0)
    counters.add("new", 1, 60)
    assert list(RateCounter.objects.values_list("hits", flat=True)) == [1]


@pytest.mark.django_db
def test_it_stores_whole_numbers_only(counters):
    with pytest.raises(TypeError, match="whole numbers only"):
        counters.set("k", "7", 60)


@pytest.mark.django_db
def test_touch_delete_has_key_and_clear_behave_as_a_cache(counters):
    counters.set("a", 1, 60)
    counters.set("b", 2, None)
    assert counters.touch("a", 120) is True
    assert counters.has_key("b") is True
    assert counters.delete("b") is True
    assert counters.has_key("b") is False
    counters.clear()
    assert RateCounter.objects.count() == 0


@pytest.mark.django_db(transaction=True)
def test_concurrent_increments_from_many_connections_lose_no_count(counters):
    counters.add("shared", 0, 60)
    start = threading.Barrier(6)

    def hammer():
        start.wait()
        try:
            for _ in range(25):
                counters.incr("shared")
        finally:
            connections.close_all()  # this thread's own connection

    threads = [threading.Thread(target=hammer) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert counters.get("shared") == 150


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


def _wait_until_up(url: str, process: subprocess.Popen, seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"gunicorn exited with {process.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=1):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError("gunicorn did not start in time")


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
        _wait_until_up(f"http://127.0.0.1:{port}/api/health", process)
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

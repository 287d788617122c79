"""Under the site's gunicorn settings, keep-alive clients are spread across the workers.

A kept-open connection stays with the worker that accepted it. gunicorn's own default
lets one gthread worker accept a thousand connections, so four keep-alive clients could
all land on one worker while the other sits idle. The site's settings
(``playground/gunicorn_conf.py``) let a worker hold only what its thread can serve and
one more; this runs real gunicorn with them, as the Procfile does, and four clients
that each keep one connection open.
"""

from __future__ import annotations

import http.client
import os
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from tests.site.conftest import free_port

ROOT = Path(__file__).resolve().parents[2]
CLIENTS, REQUESTS = 4, 60


@pytest.fixture
def site(tmp_path):
    """gunicorn with the site's settings file and two workers, both warmed up."""
    port, log = free_port(), tmp_path / "access.log"
    env = {
        **{k: v for k, v in os.environ.items() if k not in ("DATABASE_URL",)},
        "CONTEXTGC_SQLITE_PATH": str(tmp_path / "site.sqlite3"),
        "DJANGO_SETTINGS_MODULE": "playground.settings",
        "DJANGO_SECRET_KEY": "test-only",
        "DJANGO_DEBUG": "0",
        "WEB_CONCURRENCY": "2",
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "playground.wsgi",
         "-c", "python:playground.gunicorn_conf", "--bind", f"127.0.0.1:{port}",
         "--access-logfile", str(log), "--access-logformat", "%(p)s %(U)s"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        warm_up(port, log, process)
        yield port, log
    finally:
        process.terminate()
        process.wait(timeout=30)


def warm_up(port: int, log: Path, process: subprocess.Popen) -> None:
    """Until each worker has answered once (a worker's first request loads Django)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"gunicorn exited with {process.returncode}")
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            connection.request("GET", "/api/health/live")
            connection.getresponse().read()
            connection.close()
        except OSError:
            time.sleep(0.1)
        if log.exists() and len({line.split()[0] for line in log.read_text().splitlines()}) == 2:
            return
    raise RuntimeError("the two gunicorn workers did not both answer in time")


def served_by(log: Path, since: int, expected: int) -> Counter:
    """Requests per worker pid from line ``since`` on, once the log holds ``expected``
    of them (a worker writes its access line after the answer has gone)."""
    deadline = time.monotonic() + 10
    while True:
        lines = log.read_text().splitlines()[since:]
        if len(lines) >= expected or time.monotonic() > deadline:
            return Counter(line.split()[0] for line in lines)
        time.sleep(0.05)


def test_four_keep_alive_clients_are_served_by_both_workers(site):
    port, log = site
    warmed = len(log.read_text().splitlines())
    start, failures = threading.Barrier(CLIENTS), []

    def client():
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
        start.wait()
        for _ in range(REQUESTS):
            connection.request("GET", "/api/health/live")
            response = connection.getresponse()
            response.read()
            if response.status != 200:
                failures.append(response.status)
        connection.close()

    threads = [threading.Thread(target=client) for _ in range(CLIENTS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    served = served_by(log, warmed, CLIENTS * REQUESTS)
    assert failures == [] and sum(served.values()) == CLIENTS * REQUESTS, dict(served)
    assert len(served) == 2, f"one worker served every request: {dict(served)}"
    assert max(served.values()) <= 0.75 * CLIENTS * REQUESTS, dict(served)

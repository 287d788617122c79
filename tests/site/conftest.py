"""Fixtures for the site's tests: clients, a fixture transcript, a real upstream, a real
memcached, and the suite's PostgreSQL stopped and started again."""

from __future__ import annotations

import os
import shlex
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest
from django.db import connections
from ninja.testing import TestClient

from playground.api import api
from tests.chat_server import ChatServer

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "site"


@pytest.fixture
def api_client():
    """django-ninja's test client: calls the operations directly, without middleware; it
    declares its JSON bodies as any client must."""
    return TestClient(api, headers={"Content-Type": "application/json"})


@pytest.fixture
def retail_text() -> str:
    """A real tau-bench retail conversation in which the payment method changes."""
    return (FIXTURES / "retail-gift-card-visa.txt").read_text(encoding="utf-8")


@pytest.fixture
def airline_messages_path() -> Path:
    return FIXTURES / "airline-task3-trial0-62-messages.json"


@pytest.fixture
def airline_text(airline_messages_path) -> str:
    """The 62-message airline trajectory as the console's text box takes it."""
    return airline_messages_path.read_text(encoding="utf-8")


@pytest.fixture
def upstream():
    with ChatServer(reply=lambda body: "Understood.") as server:
        yield server


@pytest.fixture
def proxy_on(settings, upstream):
    """The proxy configured with a server-side key, pointed at the loopback upstream."""
    settings.CONTEXTGC_UPSTREAM_KEY = "server-side-key"
    settings.CONTEXTGC_UPSTREAM_BASE = upstream.base_url
    settings.CONTEXTGC_UPSTREAM_TIMEOUT = 5.0
    return upstream


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def memcached():
    """A real memcached on a free loopback port (scripts/test installs it), stopped after."""
    with running_memcached() as location:
        yield location


class running_memcached:
    """A memcached on a free loopback port for the ``with`` block; its ``host:port``."""

    def __enter__(self) -> str:
        binary = shutil.which("memcached")
        if binary is None:
            pytest.fail("memcached is not installed: `bash scripts/test` installs it")
        port = free_port()
        args = [binary, "-l", "127.0.0.1", "-p", str(port), "-U", "0", "-m", "16"]
        if os.geteuid() == 0:  # memcached will not run as root
            args += ["-u", "nobody"]
        self.process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for_port(port, self.process)
        return f"127.0.0.1:{port}"

    def __exit__(self, *exc) -> None:
        self.stop()

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=30)


def wait_for_port(port: int, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"memcached exited with {process.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("memcached did not listen in time")


# --- the suite's PostgreSQL, stopped and started again --------------------------------

PG_CTL = os.environ.get("CONTEXTGC_TEST_PG_CTL")
PGDATA = os.environ.get("CONTEXTGC_TEST_PGDATA")
needs_pg_ctl = pytest.mark.skipif(
    not (PG_CTL and PGDATA),
    reason="needs the cluster scripts/test or tools' pytest-pg start "
    "(CONTEXTGC_TEST_PG_CTL/_PGDATA)",
)


def pg_ctl(*args: str) -> None:
    command = [PG_CTL, "-D", PGDATA, "-w", "-t", "60", *args]
    if os.getuid() == 0:  # the cluster belongs to the postgres user
        command = ["runuser", "-u", "postgres", "--", *command]
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


class PostgresControl:
    """Stop the suite's cluster and start it again with the options it was started with
    (its ``postmaster.opts``: port, socket directory, settings)."""

    def __init__(self):
        words = shlex.split((Path(PGDATA) / "postmaster.opts").read_text())
        at = words.index("-D") if "-D" in words else None
        options = words[1:] if at is None else words[1:at] + words[at + 2 :]
        self.options = shlex.join(options)
        self.running = True

    def stop(self, *, close_connections: bool = True) -> None:
        """Stop the server; with ``close_connections=False`` this process keeps its open
        connection, as a worker with ``CONN_MAX_AGE`` does, and finds it dead on next use."""
        if close_connections:
            connections.close_all()
        pg_ctl("-m", "fast", "stop")
        self.running = False

    def start(self) -> None:
        pg_ctl("-l", str(Path(PGDATA).parent / "log"), "-o", self.options, "start")
        self.running = True
        connections.close_all()


@pytest.fixture
def postgres():
    """The suite's PostgreSQL, to stop and start; running again after the test whatever
    happened in it."""
    control = PostgresControl()
    try:
        yield control
    finally:
        if not control.running:
            control.start()

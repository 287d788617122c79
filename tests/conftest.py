import os
import socket

import pytest

# ``scripts/test`` (the README's test command, and CI's) sets this for the cluster it
# starts: under it the suite must run on that PostgreSQL and every layer must run.
UNDER_TEST_COMMAND = bool(os.environ.get("CONTEXTGC_TEST_PGDATA"))


@pytest.fixture(scope="session", autouse=True)
def postgresql_under_the_test_command():
    """Under the test command, a database that is not PostgreSQL stops the run: the
    settings fall back to SQLite when ``DATABASE_URL`` is unset, and the PostgreSQL-only
    tests would skip."""
    if UNDER_TEST_COMMAND:
        from django.conf import settings

        engine = settings.DATABASES["default"]["ENGINE"]
        if "postgresql" not in engine:
            pytest.exit(f"scripts/test runs the suite on PostgreSQL, got {engine}", returncode=1)


def pytest_sessionfinish(session, exitstatus):
    """Under the test command a skipped test fails the run: every layer (PostgreSQL,
    memcached, Chromium, the peers) is installed there, so a skip is a layer not run."""
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    skipped = len(reporter.stats.get("skipped", ())) if reporter is not None else 0
    if UNDER_TEST_COMMAND and skipped and exitstatus == 0:
        reporter.write_line(f"{skipped} test(s) skipped under scripts/test: a layer did not run")
        session.exitstatus = 1


@pytest.fixture(scope="module")
def monkeypatch_socket():
    """Every attempt to open a socket is recorded and refused."""
    attempts = []
    real = socket.socket

    class Refused(real):
        def __init__(self, *args, **kwargs):
            attempts.append(args)
            raise OSError("the compiler must not open sockets")

    socket.socket = Refused
    try:
        yield attempts
    finally:
        socket.socket = real

"""How the background jobs scale with workers, on a throwaway PostgreSQL.

    python tests/bench/jobs_scale.py [--transcripts 2000] [--workers 1 2] [--json]

Starts a PostgreSQL cluster of its own (unless ``DATABASE_URL`` is set), migrates
it, and runs ``python manage.py run_jobs_bench`` against it: a corpus of at least
``--transcripts`` transcripts built by repeating the real airline transcripts
(and saying so), imported as a background job, then measured once per worker
count by that many ``db_worker`` processes sharing the queue. The cluster is
stopped and removed at the end. Settings are production's (DEBUG off).

PostgreSQL's ``initdb`` refuses to run as root: as root the cluster belongs to the
``postgres`` user, as ``scripts/test`` does it.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _as_pg(command: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *command] if os.geteuid() == 0 else command


def _pg_bin() -> Path:
    found = subprocess.run(["pg_config", "--bindir"], capture_output=True, text=True, check=False)
    candidate = Path(found.stdout.strip()) if found.returncode == 0 else None
    if candidate and (candidate / "initdb").exists():
        return candidate
    versions = sorted(Path("/usr/lib/postgresql").glob("*/bin"), key=lambda p: int(p.parent.name))
    if not versions:
        raise SystemExit("PostgreSQL is not installed (apt-get install postgresql)")
    return versions[-1]


@contextlib.contextmanager
def throwaway_postgres():
    """A PostgreSQL cluster on a free loopback port; yields its DATABASE_URL."""
    pg_bin = _pg_bin()
    directory = Path(tempfile.mkdtemp(prefix="contextgc-bench-pg."))
    if os.geteuid() == 0:
        shutil.chown(directory, "postgres", "postgres")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    data = directory / "data"
    options = f"-h 127.0.0.1 -p {port} -k {directory} -c fsync=off -c synchronous_commit=off"
    try:
        subprocess.run(
            _as_pg([str(pg_bin / "initdb"), "-D", str(data), "-U", "postgres", "-A", "trust",
                    "-E", "UTF8", "--no-locale", "--no-sync"]),
            check=True, stdout=subprocess.DEVNULL,
        )  # fmt: skip
        subprocess.run(
            _as_pg([str(pg_bin / "pg_ctl"), "-D", str(data), "-l", str(directory / "log"),
                    "-w", "-t", "60", "-o", options, "start"]),
            check=True, stdout=subprocess.DEVNULL,
        )  # fmt: skip
        subprocess.run(
            [str(pg_bin / "createdb"), "-h", "127.0.0.1", "-p", str(port), "-U", "postgres",
             "contextgc_bench"],
            check=True,
        )  # fmt: skip
        yield f"postgres://postgres@127.0.0.1:{port}/contextgc_bench"
    finally:
        if (data / "postmaster.pid").exists():
            subprocess.run(
                _as_pg([str(pg_bin / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop"]),
                check=False, stdout=subprocess.DEVNULL,
            )  # fmt: skip
        shutil.rmtree(directory, ignore_errors=True)


def run(database_url: str, argv: list[str]) -> int:
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "DJANGO_DEBUG": "false",
        "DJANGO_SECRET_KEY": os.environ.get("DJANGO_SECRET_KEY", "bench-only-key-signs-nothing"),
    }
    manage = [sys.executable, str(ROOT / "manage.py")]
    subprocess.run([*manage, "migrate", "-v", "0"], check=True, cwd=ROOT, env=env)
    return subprocess.run([*manage, "run_jobs_bench", *argv], cwd=ROOT, env=env).returncode


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if os.environ.get("DATABASE_URL"):
        return run(os.environ["DATABASE_URL"], argv)
    with throwaway_postgres() as url:
        return run(url, argv)


if __name__ == "__main__":
    sys.exit(main())

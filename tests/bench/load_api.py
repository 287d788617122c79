"""Load the compile API under gunicorn on loopback and set it beside the library's own time.

    python3 -m pip install -e '.[site,bench]'
    python3 tests/bench/load_api.py [--seconds 60] [--workers 2] [--users N] [--floor-seconds 15]

It starts gunicorn with the site's own settings (``playground.gunicorn_conf``: threaded
workers that keep connections open) on a free 127.0.0.1 port against ``DATABASE_URL``
when that is set, else a fresh SQLite file; checks that one API answer equals the
library's output; drives ``POST /api/compile`` with a real 62-message tau-bench
airline transcript (``tests/fixtures/site``) through locust (headless, FastHttpUser)
for the given time, with one client per worker unless ``--users`` says otherwise, so
every worker is kept busy; and prints requests/s, p50/p99, errors and 5xx beside the
library's in-process ``compile_messages`` p50/p99 for the same transcript. Then, for
``--floor-seconds``, the same clients call ``GET /api/health/live``: what a request costs
gunicorn and Django with no compile, which bounds from below the overhead a compile
request can have. The rate
limit stays on (set high enough never to trip) so its counting is measured: in a
memcached this command starts (``--rate-cache memcached``, the default when memcached
is installed, as a several-worker deployment would set ``CONTEXTGC_MEMCACHED``) or in
the database (``--rate-cache database``, the site's default without memcached).

Latencies are every request's own time as locust's request event reports it (float
milliseconds), not locust's rounded summary. Only loopback traffic; bounded in time;
every process it starts is stopped before it exits.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TRANSCRIPT = ROOT / "tests" / "fixtures" / "site" / "airline-task3-trial0-62-messages.json"
SCHEMA = "travel"
CONF = "playground.gunicorn_conf"  # the site's gunicorn settings

# Written to a temporary file and run by locust in its own process: importing locust
# here would monkey-patch this interpreter (gevent), and pytest imports this module.
LOCUSTFILE = """
import json, os
from locust import FastHttpUser, events, task

BODY = open(os.environ["LOAD_BODY"], "rb").read()
FLOOR = os.environ.get("LOAD_FLOOR") == "1"  # GET /api/health/live instead of a compile
TIMES, STATUSES = [], {}

@events.request.add_listener
def record(response_time, response, exception, **kw):
    TIMES.append(response_time)
    code = getattr(response, "status_code", 0) if exception is None else 0
    STATUSES[code] = STATUSES.get(code, 0) + 1

@events.quitting.add_listener
def dump(environment, **kw):
    with open(os.environ["LOAD_OUT"], "w") as out:
        json.dump({"times": TIMES, "statuses": STATUSES}, out)

class Caller(FastHttpUser):
    @task
    def compile(self):
        if FLOOR:
            with self.client.get("/api/health/live", catch_response=True) as r:
                if r.status_code != 200:
                    r.failure(f"HTTP {r.status_code}")
            return
        with self.client.post("/api/compile", data=BODY, catch_response=True,
                              headers={"Content-Type": "application/json"}) as r:
            if r.status_code != 200:
                r.failure(f"HTTP {r.status_code}")
"""


def percentile(values: list[float], share: float) -> float:
    """The nearest-rank percentile.

    Example:
        >>> percentile([4.0, 1.0, 3.0, 2.0], 0.5), percentile(list(range(1, 101)), 0.99)
        (2.0, 99)
    """
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, round(share * len(ordered)) - 1))]


def library_times(messages: list, runs: int, idle_ms: float = 0.0) -> list[float]:
    """Milliseconds of ``compile_messages`` in this process, after a warm-up; with
    ``idle_ms``, each call follows that long asleep, as a worker waits for its client."""
    from compiler import compile_messages, load_schema

    schema = load_schema(SCHEMA)
    for _ in range(50):
        compile_messages(messages, schema=schema)
    times = []
    for _ in range(runs):
        if idle_ms:
            time.sleep(idle_ms / 1000)
        start = time.perf_counter()
        compile_messages(messages, schema=schema)
        times.append((time.perf_counter() - start) * 1000)
    return times


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_memcached(port: int) -> subprocess.Popen:
    args = [shutil.which("memcached"), "-l", "127.0.0.1", "-p", str(port), "-U", "0", "-m", "16"]
    if os.geteuid() == 0:  # memcached will not run as root
        args += ["-u", "nobody"]
    return subprocess.Popen(args, start_new_session=True)


def site_env(workdir: Path, memcached: str | None) -> dict[str, str]:
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "playground.settings",
        "DJANGO_SECRET_KEY": "load-test-only",
        "DJANGO_DEBUG": "0",
        "CONTEXTGC_RATE_LIMIT": "100000000",
        "DJANGO_STATIC_ROOT": str(workdir / "static"),
    }
    (workdir / "static").mkdir(exist_ok=True)
    if not env.get("DATABASE_URL"):
        env["CONTEXTGC_SQLITE_PATH"] = str(workdir / "load.sqlite3")
    env.pop("CONTEXTGC_MEMCACHED", None)
    if memcached:
        env["CONTEXTGC_MEMCACHED"] = memcached
    return env


def start_gunicorn(
    env: dict, port: int, workers: int, log: Path, app: str = "playground.wsgi"
) -> subprocess.Popen:
    if app == "playground.wsgi":
        subprocess.run(
            [sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"],
            cwd=ROOT, env=env, check=True,
        )  # fmt: skip
    return subprocess.Popen(
        [sys.executable, "-m", "gunicorn", app, "-c", f"python:{CONF}",
         "--pythonpath", str(Path(__file__).resolve().parent),
         "--workers", str(workers),
         "--bind", f"127.0.0.1:{port}", "--log-level", "warning",
         "--access-logfile", str(log), "--access-logformat", "%(U)s %(s)s %(D)s %(p)s",
         *os.environ.get("LOAD_GUNICORN_ARGS", "").split()],
        cwd=ROOT, env=env, start_new_session=True,
    )  # fmt: skip


def wait_until_up(base: str, server: subprocess.Popen) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"gunicorn exited with {server.returncode}")
        try:
            with urllib.request.urlopen(f"{base}/api/health", timeout=1):
                return
        except OSError:
            time.sleep(0.2)
    raise SystemExit("gunicorn did not start within 60 s")


def check_answer(base: str, body: bytes, messages: list) -> None:
    """One answer must be the library's own output before anything is timed."""
    from compiler import compile_messages, load_schema

    request = urllib.request.Request(
        f"{base}/api/compile", body, {"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        answer = json.loads(response.read())
    expected, _ = compile_messages(messages, schema=load_schema(SCHEMA))
    if answer["compiled_messages"] != expected:
        raise SystemExit("the API's compiled messages differ from the library's")


def run_locust(
    base: str, workdir: Path, body: bytes, users: int, seconds: int, floor: bool = False
) -> dict:
    locust = shutil.which("locust") or str(Path(sys.executable).with_name("locust"))
    (workdir / "locustfile.py").write_text(LOCUSTFILE)
    (workdir / "body.json").write_bytes(body)
    env = {
        **os.environ,
        "LOAD_BODY": str(workdir / "body.json"),
        "LOAD_OUT": str(workdir / "out.json"),
        "LOAD_FLOOR": "1" if floor else "0",
    }
    started = time.monotonic()
    subprocess.run(
        [locust, "-f", str(workdir / "locustfile.py"), "--headless", "--host", base,
         "--users", str(users), "--spawn-rate", str(users), "--run-time", f"{seconds}s",
         "--stop-timeout", "5", "--only-summary", "--loglevel", "WARNING"],
        env=env, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        timeout=seconds + 60,
    )  # fmt: skip
    result = json.loads((workdir / "out.json").read_text())
    result["elapsed"] = min(time.monotonic() - started, float(seconds))
    return result


def log_lines(log: Path) -> list[list[str]]:
    return [line.split() for line in log.read_text().splitlines()] if log.exists() else []


def server_times(log: Path, path: str, since: int) -> list[float]:
    """Milliseconds gunicorn spent on each request to ``path`` (its access log's %(D)s)
    from line ``since`` on: the readiness checks and the correctness check come before
    the load and are left out."""
    return [int(us) / 1000 for where, _, us, _ in log_lines(log)[since:] if where == path]


def worker_split(log: Path, path: str, since: int) -> dict[str, int]:
    """How many requests to ``path`` each worker process served (the access log's
    ``%(p)s``, its pid), from line ``since`` on, most first."""
    counts: dict[str, int] = {}
    for where, _, _, pid in log_lines(log)[since:]:
        if where == path:
            counts[pid.strip("<>")] = counts.get(pid.strip("<>"), 0) + 1
    return dict(sorted(counts.items(), key=lambda item: -item[1]))


def split_line(split: dict[str, int], workers: int) -> str:
    """The share of the load each worker served; a worker that served nothing is named.

    Example:
        >>> print(split_line({"11": 600, "12": 400}, 2))
        split       /api/compile per worker: pid 11 600 (60.0%), pid 12 400 (40.0%);
                    the busiest served 1.20× an even share
        >>> print(split_line({"11": 10}, 2))
        split       /api/compile per worker: pid 11 10 (100.0%), 1 worker(s) served none;
                    the busiest served 2.00× an even share
    """
    total = sum(split.values()) or 1
    parts = [f"pid {pid} {n:,} ({100 * n / total:.1f}%)" for pid, n in split.items()]
    idle = workers - len(split)
    if idle > 0:
        parts[-1] += f", {idle} worker(s) served none"
    busiest = max(split.values(), default=0) / (total / workers)
    return (
        f"split       /api/compile per worker: {', '.join(parts)};\n"
        f"            the busiest served {busiest:.2f}× an even share"
    )


def server_settings(workers: int) -> str:
    """The gunicorn settings of the run, and whether the Procfile's web process uses them."""
    import importlib

    conf = importlib.import_module(CONF)
    extra = os.environ.get("LOAD_GUNICORN_ARGS", "")
    web = next(
        (line for line in (ROOT / "Procfile").read_text().splitlines() if line.startswith("web:")),
        "",
    )
    procfile = (
        "as the Procfile's web process"
        if f"python:{CONF}" in web and not extra
        else f"NOT as the Procfile's web process ({web.split('exec ', 1)[-1]})"
    )
    return (
        f"{workers} workers, {conf.worker_class} with {conf.threads} thread and at most "
        f"{conf.worker_connections} connections each, keep-alive {conf.keepalive} s "
        f"({CONF}{', ' + extra if extra else ''}), {procfile}"
    )


def report(args, messages, body, library, load, floor=None) -> str:
    times, statuses = load["times"], {int(k): v for k, v in load["statuses"].items()}
    total = len(times)
    errors = total - statuses.get(200, 0)
    server_errors = sum(n for code, n in statuses.items() if code >= 500)
    lib50, lib99 = percentile(library, 0.5), percentile(library, 0.99)
    api50, api99 = percentile(times, 0.5), percentile(times, 0.99)
    server = load["server"]
    srv50, srv99 = percentile(server, 0.5), percentile(server, 0.99)
    woken = load["library_after_idle"]
    idle50 = percentile(woken, 0.5)
    rate = total / args.seconds
    database = "PostgreSQL (DATABASE_URL)" if os.environ.get("DATABASE_URL") else "SQLite file"
    lines = [
        f"transcript  {TRANSCRIPT.relative_to(ROOT)}: {len(messages)} messages, "
        f"{len(body):,} bytes as a request, schema {SCHEMA}",
        f"library     compile_messages in-process: p50 {lib50:.3f} ms, p99 {lib99:.3f} ms "
        f"(N={len(library):,}, mean {statistics.fmean(library):.3f} ms; its incremental cache "
        "on, as in the server: each call after the first resumes the fold it cached)",
        f"gunicorn    {server_settings(args.workers)}",
        f"api         {database}, rate limit "
        f"on (counted in {args.rate_cache}); locust FastHttpUser, {args.users} users, "
        f"{args.seconds} s, {os.cpu_count()} cores",
        f"            requests {total:,} ({rate:.1f}/s), p50 {api50:.3f} ms, p99 {api99:.3f} ms, "
        f"errors {errors}, 5xx {server_errors}, statuses {dict(sorted(statuses.items()))}",
        f"server      gunicorn's own time per compile (access log, N={len(server):,}): "
        f"p50 {srv50:.3f} ms, p99 {srv99:.3f} ms",
        split_line(load["split"], args.workers),
        f"overhead    p50 over the library: {srv50 - lib50:.3f} ms inside the server, "
        f"{api50 - lib50:.3f} ms as the load tool saw it (connect, send, receive included)",
        f"            the same library call after {load['idle_ms']:.3f} ms asleep (a worker's wait "
        f"for its client, p50 client minus server time): p50 {idle50:.3f} ms (N={len(woken):,}), "
        f"so {idle50 - lib50:.3f} ms of the overhead is this machine waking up, not site code",
        "targets     "
        + "; ".join(
            f"{name}: {'met' if ok else 'MISSED'}"
            for name, ok in (
                ("p50 overhead <= 1 ms inside the server", srv50 - lib50 <= 1.0),
                ("as the load tool saw it", api50 - lib50 <= 1.0),
                (">= 300 requests/s", rate >= 300),
                ("zero 5xx", server_errors == 0),
            )
        ),
    ]
    if floor is not None:
        lines.append(floor_line(args, floor))
    return "\n".join(lines)


def bare_floor(workdir: Path, body: bytes, args) -> dict:
    """The floor load once more on ``bare_wsgi`` under the same gunicorn settings."""
    port, log = free_port(), workdir / "bare.log"
    server = start_gunicorn(site_env(workdir, None), port, args.workers, log, app="bare_wsgi")
    try:
        base = f"http://127.0.0.1:{port}"
        wait_until_up(base, server)
        since = len(log_lines(log))
        bare = run_locust(base, workdir, body, args.users, args.floor_seconds, floor=True)
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
    bare["server"] = server_times(log, "/api/health/live", since)
    return bare


def floor_line(args, floor: dict) -> str:
    """What a request costs this stack with no compile: ``GET /api/health/live``'s server
    time."""
    server, statuses = floor["server"], {int(k): v for k, v in floor["statuses"].items()}
    bare = floor["bare"]
    return (
        f"floor       GET /api/health/live, same server and users, {args.floor_seconds} s: "
        f"{len(floor['times']) / args.floor_seconds:.1f}/s, gunicorn's own time p50 "
        f"{percentile(server, 0.5):.3f} ms, p99 {percentile(server, 0.99):.3f} ms "
        f"(N={len(server):,}), statuses {dict(sorted(statuses.items()))}\n"
        f"            the same load on a WSGI app that only answers {{}} (bare_wsgi.py), same "
        f"gunicorn settings: {len(bare['times']) / args.floor_seconds:.1f}/s, gunicorn's own "
        f"time p50 {percentile(bare['server'], 0.5):.3f} ms (N={len(bare['server']):,})"
    )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=int, default=60)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument(
        "--users", type=int, help="concurrent clients (default: one per worker, all busy)"
    )
    parser.add_argument(
        "--floor-seconds",
        type=int,
        default=15,
        help="then load GET /api/health/live this long, for the stack's own cost (0: skip)",
    )
    parser.add_argument("--library-runs", type=int, default=2000)
    parser.add_argument(
        "--rate-cache",
        choices=("memcached", "database"),
        default="memcached" if shutil.which("memcached") else "database",
        help="where the rate limit counts (default: memcached when installed)",
    )
    args = parser.parse_args(argv)
    args.users = args.users or args.workers
    sys.path.insert(0, str(ROOT))
    messages = json.loads(TRANSCRIPT.read_text(encoding="utf-8"))
    body = json.dumps({"messages": messages, "entity_schema": SCHEMA}).encode()
    library = library_times(messages, args.library_runs)
    with tempfile.TemporaryDirectory(prefix="contextgc-load-") as tmp:
        workdir, port = Path(tmp), free_port()
        cache, location = None, None
        if args.rate_cache == "memcached":
            location = f"127.0.0.1:{free_port()}"
            cache = start_memcached(int(location.rsplit(":", 1)[1]))
        env = site_env(workdir, location)
        server = start_gunicorn(env, port, args.workers, workdir / "access.log")
        try:
            base = f"http://127.0.0.1:{port}"
            wait_until_up(base, server)
            check_answer(base, body, messages)
            load, floor = drive(base, workdir, body, args)
        finally:
            for process in (server, cache):
                if process is not None:
                    os.killpg(process.pid, signal.SIGTERM)
                    process.wait(timeout=30)
        if floor is not None:
            floor["bare"] = bare_floor(workdir, body, args)
    # A worker sleeps between requests while its client reads the answer and sends the
    # next; this machine runs the same code slower just after such a sleep.
    idle = max(0.0, percentile(load["times"], 0.5) - percentile(load["server"], 0.5))
    load["idle_ms"] = idle
    load["library_after_idle"] = library_times(messages, args.library_runs // 2, idle)
    print(report(args, messages, body, library, load, floor))
    return 0


def drive(base: str, workdir: Path, body: bytes, args) -> tuple[dict, dict | None]:
    """The compile load, then (``--floor-seconds``) the same load on ``GET /api/health/live``:
    gunicorn and Django's middleware with no compile, no JSON body, no database and no
    rate limit, so its server time is what any request costs this stack."""
    log = workdir / "access.log"
    since = len(log_lines(log))
    load = run_locust(base, workdir, body, args.users, args.seconds)
    load["server"] = server_times(log, "/api/compile", since)
    load["split"] = worker_split(log, "/api/compile", since)
    if not args.floor_seconds:
        return load, None
    since = len(log_lines(log))
    floor = run_locust(base, workdir, body, args.users, args.floor_seconds, floor=True)
    floor["server"] = server_times(log, "/api/health/live", since)
    return load, floor


if __name__ == "__main__":
    sys.exit(main())

"""python manage.py run_jobs_bench [--transcripts 2000] [--workers 1 2]

How the background jobs scale: builds a corpus of at least ``--transcripts``
transcripts by REPEATING the real airline transcripts (tau-bench GPT-4o
trajectories and few-shot conversations, 119 of them) as many times as needed,
imports it as a background job, then measures it once per worker count with that
many ``manage.py db_worker --batch`` processes sharing the queue. Reports wall time
(first worker started to last worker exited, process start-up included), the job's
own span (first chunk started to report written), throughput in transcripts and
megabytes per second, and how the chunks fell to the workers.

A repeated corpus is a load test, not evidence: its figures repeat the real ones and
its transcripts are not independent. The corpus is named and described as such.
Needs PostgreSQL (``DATABASE_URL``); on SQLite the workers would take turns.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import quote

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.db import connection

from labelling.measurement.models import Job, JobStatus
from labelling.measurement.tasks import start_import, start_measure

DEFAULT_CORPORA = settings.BASE_DIR.parent / "shared" / "corpora"
SOURCES = ("airline/gpt-4o-trajectories-dev.json", "airline/few_shot.jsonl")
TIMING = ("timing", "compile_ms", "command", "job", "per_transcript")


def repeated_corpus(corpora: Path, at_least: int) -> tuple[bytes, int, int]:
    """JSONL bytes holding the real airline transcripts ``copies`` times; (bytes, real, copies)."""
    trajectories = json.loads((corpora / SOURCES[0]).read_text(encoding="utf-8"))
    lines = [json.dumps(record, ensure_ascii=False) for record in trajectories]
    lines += (corpora / SOURCES[1]).read_text(encoding="utf-8").splitlines()
    lines = [line for line in lines if line.strip()]
    copies = max(1, math.ceil(at_least / len(lines)))
    return ("\n".join(lines * copies) + "\n").encode("utf-8"), len(lines), copies


def without_timing(value):
    if isinstance(value, dict):
        return {k: without_timing(v) for k, v in value.items() if k not in TIMING}
    if isinstance(value, list):
        return [without_timing(v) for v in value]
    return value


class Command(BaseCommand):
    help = __doc__.strip().splitlines()[0]

    def add_arguments(self, parser):
        parser.add_argument("--corpora", type=Path, default=DEFAULT_CORPORA)
        parser.add_argument("--transcripts", type=int, default=2000)
        parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
        parser.add_argument("--chunk-size", type=int, default=50)
        parser.add_argument("--repeats", type=int, default=1, help="timed repeats per transcript")
        parser.add_argument("--peer", action="store_true", help="measure the peer too")
        parser.add_argument("--json", action="store_true")

    def handle(self, *args, **options):
        if connection.vendor != "postgresql":
            self.stderr.write(f"warning: the database is {connection.vendor}, not PostgreSQL")
        data, real, copies = repeated_corpus(options["corpora"], options["transcripts"])
        name = f"bench: airline transcripts repeated ×{copies}"
        imported = self._import(data, name, real, copies)
        corpus = Job.objects.get(pk=imported["job"]).corpus
        runs = [self._measure(corpus, workers, options) for workers in options["workers"]]
        same = len({json.dumps(r.pop("figures"), sort_keys=True) for r in runs}) == 1
        result = {
            "corpus": {
                "name": corpus.name,
                "transcripts": corpus.transcripts.count(),
                "real_transcripts": real,
                "copies": copies,
                "bytes": len(data),
                "note": "built by repeating real transcripts: a load test, not evidence",
            },
            "import": imported,
            "runs": runs,
            "figures_identical_across_runs": same,
            "database": connection.vendor,
            "cpus": _cpus(),
        }
        self.stdout.write(json.dumps(result, indent=2) if options["json"] else render(result))

    def _import(self, data: bytes, name: str, real: int, copies: int) -> dict:
        provenance = (
            f"{real} real airline transcripts ({', '.join(SOURCES)}) repeated {copies} times "
            "for the jobs benchmark; repeats are not independent evidence"
        )
        job = start_import(data, name=name, source="run_jobs_bench", provenance=provenance)
        wall = self._workers(1, f"import{job.pk}")
        job.refresh_from_db()
        if job.status != JobStatus.DONE:
            raise CommandError(f"import job {job.pk} ended {job.status}: {job.error}")
        return {
            "job": job.pk,
            "created": job.params.get("created"),
            "wall_seconds": round(wall, 3),
            "transcripts": job.units_done,
        }

    def _measure(self, corpus, workers: int, options) -> dict:
        job = start_measure(
            corpus,
            "travel",
            chunk_size=options["chunk_size"],
            repeats=options["repeats"],
            use_peer=options["peer"],
        )
        load = os.getloadavg()[0]  # other work on the machine shows in the timings
        wall = self._workers(workers, f"bench{job.pk}")
        job.refresh_from_db()
        if job.status != JobStatus.DONE:
            raise CommandError(f"measuring job {job.pk} ended {job.status}: {job.error}")
        chunks = list(job.chunks.values_list("worker", "seconds"))
        per_worker: dict[str, int] = {}
        for worker, _ in chunks:
            per_worker[worker] = per_worker.get(worker, 0) + 1
        characters = job.report.figures["header"]["characters"]
        span = job.seconds
        return {
            "workers": workers,
            "load_before": round(load, 2),
            "job": job.pk,
            "transcripts": job.units_done,
            "chunks": len(chunks),
            "chunks_per_worker": sorted(per_worker.values(), reverse=True),
            "wall_seconds": round(wall, 3),
            "job_span_seconds": round(span, 3),
            "chunk_seconds_sum": round(sum(s or 0 for _, s in chunks), 3),
            "transcripts_per_second": round(job.units_done / wall, 1),
            "transcripts_per_second_span": round(job.units_done / span, 1),
            "mb_per_second": round(characters / 1e6 / wall, 2),
            "figures": without_timing(job.report.figures),
        }

    def _workers(self, count: int, tag: str) -> float:
        """Run ``count`` batch workers until the queue is empty; their wall time."""
        command = [sys.executable, str(settings.BASE_DIR / "manage.py"), "db_worker", "--batch"]
        command += ["--no-startup-delay", "--interval", "0", "--no-reload", "-v", "0"]
        started = time.perf_counter()
        env = worker_env()
        processes = [
            subprocess.Popen(
                [*command, "--worker-id", f"{tag}-{i}"], cwd=settings.BASE_DIR, env=env
            )
            for i in range(count)
        ]
        codes = [p.wait() for p in processes]
        elapsed = time.perf_counter() - started
        if any(codes):
            raise CommandError(f"a worker exited with {codes}")
        return elapsed


def worker_env() -> dict[str, str]:
    """The environment for worker processes: this process's, on the database this
    command is connected to (a test database, too, when a test runs the command)."""
    db = connection.settings_dict
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": os.environ.get(
            "DJANGO_SETTINGS_MODULE", settings.SETTINGS_MODULE
        ),
    }
    if connection.vendor == "postgresql":
        auth = quote(db["USER"] or "", safe="")
        if db["PASSWORD"]:
            auth += ":" + quote(db["PASSWORD"], safe="")
        host = f"{db['HOST'] or 'localhost'}:{db['PORT'] or 5432}"
        env["DATABASE_URL"] = f"postgres://{auth}@{host}/{quote(db['NAME'], safe='')}"
    else:
        env.pop("DATABASE_URL", None)
        env["CONTEXTGC_SQLITE_PATH"] = str(db["NAME"])
    return env


def _cpus() -> int | None:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


def render(result: dict) -> str:
    corpus = result["corpus"]
    lines = [
        f"CORPUS  {corpus['name']}: {corpus['transcripts']:,} transcripts = "
        f"{corpus['real_transcripts']} real airline transcripts × {corpus['copies']} "
        f"({corpus['bytes']:,} bytes); {corpus['note']}",
        f"import (1 worker): {result['import']['wall_seconds']} s wall"
        + ("" if result["import"]["created"] else " (already imported: nothing added)"),
        f"database {result['database']}, {result['cpus']} CPUs",
        "",
        f"{'workers':>7} {'wall s':>8} {'span s':>8} {'Σ chunk s':>10} {'transcripts/s':>14} "
        f"{'MB/s':>6} {'load':>5}  chunks per worker",
    ]
    for run in result["runs"]:
        lines.append(
            f"{run['workers']:>7} {run['wall_seconds']:>8.2f} {run['job_span_seconds']:>8.2f} "
            f"{run['chunk_seconds_sum']:>10.2f} {run['transcripts_per_second']:>14.1f} "
            f"{run['mb_per_second']:>6.2f} {run['load_before']:>5.2f}  {run['chunks_per_worker']}"
        )
    lines += [
        "",
        "wall: first worker started to last exited (process start-up included); span: first "
        "chunk started to report written; transcripts/s over wall; load: the 1-minute load "
        "average just before the run (other work on the machine slows it)",
        "figures identical across runs (timing aside): "
        + ("yes" if result["figures_identical_across_runs"] else "NO"),
    ]
    return "\n".join(lines)

"""python manage.py measure <stored corpus | file | directory> --schema S

The corpus report: transcripts, turns, characters, models where known; facts
extracted, keys re-asserted, token reduction, payloads compacted, turns retired,
retirement violations, contexts that grew, compile ms p50/p95, each with its N; the
peer (``contextgc``) measured beside ours in the same process when it is installed;
precision only where labels support it. ``--background`` queues a stored corpus for
the workers instead (``python manage.py db_worker``), and ``--save`` keeps the
figures as a report for the pages.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from labelling.labels import FORMAT
from labelling.measurement.corpus_report import corpus_report
from labelling.measurement.measure import cap_per_repo, measure_items, read_path
from labelling.measurement.measure_render import render
from labelling.measurement.models import Report, ReportKind
from labelling.measurement.tasks import CHUNK_SIZE, start_measure, stored_items, stored_labels
from labelling.retirement_labels import LABEL_FILES, retirement_precision

DEFAULT_CORPORA = settings.BASE_DIR.parent / "shared" / "corpora"
LABELS = settings.BASE_DIR / "tests" / "bench" / "labels"


def positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise ValueError(text)
    return value


class Command(BaseCommand):
    help = __doc__.strip().splitlines()[0]

    def add_arguments(self, parser):
        parser.add_argument("corpus", help="a transcript file or directory, or a stored corpus")
        parser.add_argument("--schema", required=True, help="schema name (travel, logistics…)")
        parser.add_argument(
            "--corpora",
            type=Path,
            default=DEFAULT_CORPORA,
            help="where relative corpus paths and label names resolve (default ../shared/corpora)",
        )
        parser.add_argument("--repeats", type=positive, default=3, help="timed repeats, best of")
        parser.add_argument("--limit", type=positive, help="the first N transcripts only")
        parser.add_argument(
            "--per-repo", type=positive, help="at most N transcripts per repository"
        )
        parser.add_argument("--no-peer", action="store_true", help="measure ours only")
        parser.add_argument(
            "--labels",
            type=Path,
            help="a label file (default: tests/bench/labels/<schema>.json for files, the "
            "stored labels for a stored corpus)",
        )
        parser.add_argument(
            "--retirement-labels",
            type=Path,
            default=LABEL_FILES,
            help="a directory of retirement label files (default tests/bench/labels/retirement)",
        )
        parser.add_argument("--json", action="store_true", help="print every figure as JSON")
        parser.add_argument("--save", action="store_true", help="store the report for the pages")
        parser.add_argument(
            "--background",
            action="store_true",
            help="stored corpus only: queue a job for the workers and print its id",
        )
        parser.add_argument("--chunk-size", type=positive, default=CHUNK_SIZE)

    def handle(self, *args, **options):
        path, corpus = self._resolve(options["corpus"], options["corpora"])
        if options["background"]:
            return self._background(corpus, options)
        if path is not None:
            items = read_path(path, options["corpora"])
            # The committed label files name transcripts by their path under the shared
            # corpora: they only speak for files read from there.
            under = path.resolve().is_relative_to(options["corpora"].resolve())
            default = LABELS / f"{options['schema']}.json" if under else None
            labels = self._labels(options, default)
            name = options["corpus"]
        else:
            items = stored_items(corpus)
            labels = self._labels(options, None) or stored_labels(corpus, options["schema"])
            name = corpus.name
        items, cap = cap_per_repo(items, options["per_repo"])
        if options["limit"]:
            items = items[: options["limit"]]
        rows, errors, peer = measure_items(
            items, options["schema"], repeats=options["repeats"], use_peer=not options["no_peer"]
        )
        report = corpus_report(
            rows,
            errors,
            corpus=name,
            schema=options["schema"],
            repeats=options["repeats"],
            peer=peer,
            labels=labels,
            cap=cap,
            command=_command(options),
            retirements=retirement_precision(options["retirement_labels"]),
        )
        if options["save"]:
            saved = Report.objects.create(
                kind=ReportKind.MEASURE,
                title=f"{name} × {options['schema']}",
                corpus=corpus,
                schema_name=options["schema"],
                command=report["command"],
                figures=report,
            )
            self.stderr.write(f"saved as report {saved.pk}")
        self.stdout.write(json.dumps(report, indent=2) if options["json"] else render(report))

    def _resolve(self, given: str, corpora: Path):
        for candidate in (Path(given), corpora / given):
            if candidate.exists():
                return candidate, None
        from labelling.models import Corpus

        corpus = Corpus.objects.filter(name=given).first()
        if corpus is None:
            raise CommandError(
                f"no file or directory {given!r} (nor under {corpora}) and no stored corpus "
                "of that name"
            )
        return None, corpus

    def _labels(self, options, default: Path | None) -> dict | None:
        path = options["labels"] or default
        if path is None or not path.is_file():
            if options["labels"]:
                raise CommandError(f"no label file {path}")
            return None
        labels = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(labels, dict) and labels.get("format") == FORMAT:  # the app's own file
            labels = {**labels, "rows": labels.get("labels") or []}
        if not isinstance(labels, dict) or not isinstance(labels.get("rows"), list):
            raise CommandError(
                f"{path} is neither a label file ({FORMAT}, exported by the app) nor a bench "
                'label file (a "rows" list, tests/bench/labels/)'
            )
        labels.setdefault("source", str(path))
        return labels

    def _background(self, corpus, options) -> None:
        if corpus is None:
            raise CommandError("--background measures a stored corpus; import the file first")
        job = start_measure(
            corpus,
            options["schema"],
            chunk_size=options["chunk_size"],
            repeats=options["repeats"],
            use_peer=not options["no_peer"],
            per_repo=options["per_repo"],
        )
        self.stdout.write(
            f"queued job {job.pk}: {job.units_total} transcripts in {job.chunks_total} chunks; "
            "run `python manage.py db_worker` to work the queue"
        )


def _command(options) -> str:
    parts = ["python", "manage.py", "measure", options["corpus"], "--schema", options["schema"]]
    parts += ["--repeats", str(options["repeats"])]
    for flag in ("limit", "per_repo", "labels"):
        if options[flag]:
            parts += [f"--{flag.replace('_', '-')}", str(options[flag])]
    if options["no_peer"]:
        parts.append("--no-peer")
    return shlex.join(parts)

"""python manage.py score_records airline|retail [--corpora DIR]

Each extraction against the environment's own records (the tau-bench database and
the tool results of the conversation): corroborated, contradicted or unverifiable,
per provenance and per slot, the rate over the decidable ones with its N and a 95%
Wilson interval, the contradicted cases with their turns, and the final register
against the task's gold actions. See ``labelling.bench.records``.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from labelling.bench.records_db import DOMAINS
from labelling.measurement.models import Report, ReportKind
from labelling.measurement.records_render import render
from labelling.measurement.records_report import score_records

DEFAULT_CORPORA = settings.BASE_DIR.parent / "shared" / "corpora"


class Command(BaseCommand):
    help = __doc__.strip().splitlines()[0]

    def add_arguments(self, parser):
        parser.add_argument("domain", choices=sorted(DOMAINS))
        parser.add_argument(
            "--corpora",
            type=Path,
            default=DEFAULT_CORPORA,
            help="the corpora directory, with <domain>/db/ (default ../shared/corpora)",
        )
        parser.add_argument("--limit", type=int, help="the first N transcripts only")
        parser.add_argument("--json", action="store_true", help="print every figure as JSON")
        parser.add_argument("--save", action="store_true", help="store the report for the pages")

    def handle(self, *args, **options):
        try:
            report = score_records(options["corpora"], options["domain"], options["limit"])
        except FileNotFoundError as missing:
            raise CommandError(str(missing)) from None
        parts = ["python", "manage.py", "score_records", options["domain"]]
        parts += ["--corpora", str(options["corpora"])]
        if options["limit"]:
            parts += ["--limit", str(options["limit"])]
        report["command"] = shlex.join(parts)
        if options["save"]:
            saved = Report.objects.create(
                kind=ReportKind.RECORDS,
                title=f"{options['domain']} records",
                schema_name=report["schema"],
                command=report["command"],
                figures=report,
            )
            self.stderr.write(f"saved as report {saved.pk}")
        self.stdout.write(json.dumps(report, indent=2) if options["json"] else render(report))

"""manage.py build_worksheet CORPUS SCHEMA --name N --reviewer A --reviewer B …"""

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from labelling.models import Corpus, WorksheetKind
from labelling.worksheets import Sampling, build_retirement_worksheet, build_worksheet


class Command(BaseCommand):
    help = (
        "Build a worksheet: round-robin across slots up to --per-slot, one row per value and "
        "per transcript within a slot, skipping rows already labelled; short slots are named."
    )

    def add_arguments(self, parser):
        parser.add_argument("corpus", help="Corpus name.")
        parser.add_argument("schema")
        parser.add_argument("--name", required=True)
        parser.add_argument("--creator", required=True, help="Username of the maintainer.")
        parser.add_argument(
            "--kind",
            choices=WorksheetKind.values,
            default=WorksheetKind.EXTRACTION,
            help="extracted values, or turns a compact compile retired (--per-slot: rows)",
        )
        parser.add_argument("--per-slot", type=int, default=12)
        parser.add_argument("--limit", type=int, help="Only the first N transcripts.")
        parser.add_argument("--seed", type=int, help="Shuffle candidates with this seed.")
        parser.add_argument("--suggest", action="store_true", help="Attach mechanical evidence.")
        parser.add_argument("--reviewer", action="append", default=[])
        parser.add_argument("--adjudicator", action="append", default=[])
        parser.add_argument("--reviews-per-row", type=int, default=1)

    def handle(self, *args, **o):
        corpus = Corpus.objects.filter(name=o["corpus"]).first()
        if corpus is None:
            raise CommandError(f"no corpus called {o['corpus']!r}")
        if o["per_slot"] < 1 or o["reviews_per_row"] < 1:
            raise CommandError("--per-slot and --reviews-per-row must be at least 1")
        User = get_user_model()
        try:
            creator = User.objects.get(username=o["creator"])
        except User.DoesNotExist:
            raise CommandError(f"no user {o['creator']!r}") from None
        unknown = sorted(
            set(o["reviewer"] + o["adjudicator"])
            - set(User.objects.values_list("username", flat=True))
        )
        if unknown:
            raise CommandError(f"no such users: {', '.join(unknown)}")
        build = (
            build_retirement_worksheet if o["kind"] == WorksheetKind.RETIREMENT else build_worksheet
        )
        worksheet = build(
            corpus,
            o["schema"],
            name=o["name"],
            creator=creator,
            sampling=Sampling(o["per_slot"], o["limit"], o["seed"], o["suggest"]),
            reviewers=o["reviewer"],
            adjudicators=o["adjudicator"],
            reviews_per_row=o["reviews_per_row"],
        )
        self.stdout.write(f"worksheet {worksheet.pk}: {worksheet.rows.count()} rows")
        for shortfall in worksheet.shortfalls:
            self.stdout.write(f"  short: {shortfall['reason']}")

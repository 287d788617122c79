"""manage.py precision_report CORPUS SCHEMA [--json]"""

import json

from django.core.management.base import BaseCommand, CommandError

from labelling.models import Corpus
from labelling.precision import Figure, precision_report


def _pct(value) -> str:
    return "—" if value is None else f"{100 * value:.0f}%"


def _line(figure: Figure) -> str:
    interval = figure.interval
    ci = f"95% CI {100 * interval[0]:.0f}-{100 * interval[1]:.0f}%" if interval else "no CI"
    return (
        f"  {figure.name:<22} rows {_pct(figure.row_precision):>5} (n={figure.rows})   "
        f"units {_pct(figure.unit_precision):>5} (n={figure.unit_n}, {ci})"
    )


class Command(BaseCommand):
    help = (
        "Precision of the stored labels per slot and overall: rows and independent units "
        "(transcript family, turn, slot), Wilson 95% interval, and labels that drifted."
    )

    def add_arguments(self, parser):
        parser.add_argument("corpus")
        parser.add_argument("schema")
        parser.add_argument(
            "--json", dest="as_json", action="store_true", help="Print the figures as JSON."
        )

    def handle(self, *args, corpus, schema, as_json: bool, **options):
        found = Corpus.objects.filter(name=corpus).first()
        if found is None:
            raise CommandError(f"no corpus called {corpus!r}")
        report = precision_report(found, schema)
        if as_json:
            self.stdout.write(json.dumps(report.as_dict(), indent=2, ensure_ascii=False))
            return
        self.stdout.write(f"PRECISION  {found.name} × {schema}  ({report.labels} labels)")
        for figure in [report.overall, *report.slots]:
            self.stdout.write(_line(figure))
            for warning in figure.warnings:
                self.stdout.write(f"      ! {warning}")
        self.stdout.write(f"  DRIFTED (not counted)  {len(report.drifted)}")
        for label in report.drifted:
            self.stdout.write(
                f"    {label.transcript.external_id} turn {label.turn} {label.slot} = "
                f"{label.value!r}: {label.verdict}"
            )
        for note in report.notes:
            self.stdout.write(f"  note: {note}")

"""manage.py export_labels (--worksheet ID | --corpus NAME --schema S) [-o FILE]"""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from labelling.labels import ExportRefused, dumps, export_labels, export_worksheet
from labelling.models import Corpus, Worksheet, WorksheetKind


class Command(BaseCommand):
    help = (
        "Write a label file: a finished worksheet's final verdicts (refused, naming each row, "
        "while any is unlabelled or disputed), or every stored label of a corpus and schema."
    )

    def add_arguments(self, parser):
        parser.add_argument("--worksheet", type=int)
        parser.add_argument("--corpus")
        parser.add_argument("--schema")
        parser.add_argument(
            "--kind",
            choices=WorksheetKind.values,
            default=WorksheetKind.EXTRACTION,
            help="with --corpus: extraction labels or retirement labels",
        )
        parser.add_argument("-o", "--output", type=Path, help="File to write (default: stdout).")

    def handle(self, *args, worksheet, corpus, schema, kind, output, **options):
        if worksheet is not None:
            sheet = Worksheet.objects.filter(pk=worksheet).first()
            if sheet is None:
                raise CommandError(f"no worksheet {worksheet}")
            try:
                document = export_worksheet(sheet)
            except ExportRefused as refused:
                lines = "\n".join(f"  {reason}" for reason in refused.reasons)
                raise CommandError(f"not exported, still open:\n{lines}") from None
        elif corpus and schema:
            found = Corpus.objects.filter(name=corpus).first()
            if found is None:
                raise CommandError(f"no corpus called {corpus!r}")
            document = export_labels(found, schema, kind)
        else:
            raise CommandError("give --worksheet, or --corpus and --schema")
        text = dumps(document)
        if output is None:
            self.stdout.write(text, ending="")
        else:
            output.write_text(text, encoding="utf-8")
            self.stderr.write(f"wrote {len(document['labels'])} labels to {output}")

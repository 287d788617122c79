"""manage.py import_labels FILE"""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from labelling.labels import LabelImportRefused, import_labels, parse


class Command(BaseCommand):
    help = "Store a label file's rows as labels, all or none (refusals name each row)."

    def add_arguments(self, parser):
        parser.add_argument("path", type=Path)

    def handle(self, *args, path: Path, **options):
        if not path.is_file():
            raise CommandError(f"{path}: no such file")
        try:
            summary = import_labels(parse(path.read_bytes()))
        except LabelImportRefused as refused:
            lines = "\n".join(f"  {reason}" for reason in refused.reasons)
            raise CommandError(f"{path}: refused, nothing imported:\n{lines}") from None
        self.stdout.write(f"imported {summary.created} labels, {summary.unchanged} unchanged")

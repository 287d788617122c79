"""manage.py import_corpus FILE [--name N] [--provenance TEXT] [--compile SCHEMA]"""

from functools import partial
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from labelling.compiling import compile_corpus
from labelling.importing import ImportRefused, import_corpus


class Command(BaseCommand):
    help = (
        "Import a corpus file in any format the compiler reads. The same bytes twice add "
        "nothing; a file the reader cannot read in full is refused with line-numbered reasons."
    )

    def add_arguments(self, parser):
        parser.add_argument("path", type=Path)
        parser.add_argument("--name", help="Corpus name (default: the file name).")
        parser.add_argument("--provenance", default="", help="Where it came from, its licence.")
        parser.add_argument(
            "--compile", metavar="SCHEMA", action="append", default=[],
            help="Also compile it under this schema (repeatable).",
        )  # fmt: skip
        parser.add_argument("--no-progress", action="store_true", help="No progress bar.")

    def handle(self, *args, path: Path, name, provenance, compile, no_progress, **options):
        if not path.is_file():
            raise CommandError(f"{path}: no such file")

        def progress(items, what="transcripts"):
            return tqdm(items, desc=what, unit="", disable=no_progress, file=self.stderr._out)

        try:
            result = import_corpus(
                path.read_bytes(),
                name=name or path.name,
                source=str(path),
                provenance=provenance,
                progress=progress,
            )
        except ImportRefused as refused:
            lines = "\n".join(f"  {reason}" for reason in refused.reasons)
            raise CommandError(f"{path}: refused, nothing imported:\n{lines}") from None
        corpus = result.corpus
        if result.created:
            self.stdout.write(
                f"imported {corpus.name}: {result.transcripts} transcripts, "
                f"{result.warnings} reader warnings"
            )
        else:
            self.stdout.write(f"already imported as {corpus.name}: nothing added")
        for schema in compile:
            run = compile_corpus(corpus, schema, progress=partial(progress, what=schema))
            self.stdout.write(f"compiled under {schema}: {run.extractions.count()} extractions")

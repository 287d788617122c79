"""Make the retirement label files in tests/bench/labels/retirement/ through the app.

Imports each corpus that retires anything (airline, retail, coding under ../shared/corpora),
builds one retirement worksheet per corpus (seeded, budget above the corpus's retirements,
so every retired turn is a row), records the verdicts a reviewer wrote down in
``--verdicts`` (a JSON list of ``{file, transcript, turn, verdict, note}``, each read from
the row: retired turn, superseding turns and the conversation around them), merges each
worksheet into the stored labels and writes the exported label files. A row with no
verdict in the file stops the run, naming it: nothing is judged by default.

    /work/tools/pg-run env PYTHONPATH=$PWD python tests/bench/judge_retirements.py \\
        --verdicts judged.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORPORA = ROOT.parent / "shared" / "corpora"
OUT = ROOT / "tests" / "bench" / "labels" / "retirement"
SEED = 23
BUDGET = 1000
REVIEWER = "retirement-reviewer"
PROVENANCE = (
    "{path} from ../shared/corpora (see its README.md; MIT-licensed, {origin}); "
    "the file whole and unchanged"
)
ORIGINS = {
    "airline": "sierra-research/tau-bench",
    "retail": "sierra-research/tau-bench",
    "coding/nebius-sample.txt": "nebius/SWE-agent-trajectories via j4yop/context-hackdevengers",
    "coding/swe-agent": "SWE-agent/SWE-agent trajectories/demonstrations",
}
CORPUS_SCHEMAS = {"airline": "travel", "retail": "logistics", "coding": "coding"}


def origin_of(path: str) -> str:
    return next(text for prefix, text in ORIGINS.items() if path.startswith(prefix))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--verdicts", type=Path, required=True)
    parser.add_argument("--corpora", type=Path, default=CORPORA)
    parser.add_argument("files", nargs="*", help="corpus files under ../shared/corpora")
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "playground.settings")
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from labelling.importing import import_corpus
    from labelling.labels import dumps, export_labels, merge_worksheet
    from labelling.models import WorksheetKind
    from labelling.verdicts import record_verdict
    from labelling.worksheets import Sampling, build_retirement_worksheet

    call_command("migrate", verbosity=0)
    judged = {
        (v["file"], v["transcript"], v["turn"]): v
        for v in json.loads(args.verdicts.read_text(encoding="utf-8"))
    }
    files = args.files or sorted({key[0] for key in judged})
    user, _ = get_user_model().objects.get_or_create(username=REVIEWER)
    OUT.mkdir(parents=True, exist_ok=True)
    for path in files:
        schema = CORPUS_SCHEMAS[path.split("/")[0]]
        corpus = import_corpus(
            (args.corpora / path).read_bytes(),
            name=path,
            source=path,
            provenance=PROVENANCE.format(path=path, origin=origin_of(path)),
        ).corpus
        sheet = build_retirement_worksheet(
            corpus,
            schema,
            name=f"retired turns of {path}",
            creator=user,
            sampling=Sampling(per_slot_budget=BUDGET, seed=SEED),
            reviewers=[user],
        )
        assert sheet.kind == WorksheetKind.RETIREMENT
        for row in sheet.rows.select_related("retirement__transcript").order_by("position"):
            key = (path, row.retirement.transcript.external_id, row.retirement.turn)
            if key not in judged:
                print(f"no verdict for {key}: judge it first", file=sys.stderr)
                return 1
            record_verdict(row, user, judged[key]["verdict"], judged[key]["note"])
        merge_worksheet(sheet)
        document = export_labels(corpus, schema, WorksheetKind.RETIREMENT)
        target = OUT / (path.replace("/", "__") + ".json")
        target.write_text(dumps(document), encoding="utf-8")
        print(f"{path}: {sheet.rows.count()} rows → {target.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""What the browser was told is saved (a verdict, a label import, a corpus import) survives a crash.

``bash scripts/test`` starts a throwaway cluster with ``synchronous_commit=off`` and
``fsync=off`` and exports where its ``pg_ctl`` and data directory are. This test saves
a verdict through the page, then kills the server at once (``-m immediate``: no
shutdown checkpoint, shared WAL buffers lost, as in a crash), starts it again, and
reads the verdict back through a fresh connection. The save asks for a synchronous
commit, so this does not rest on the WAL writer having flushed in time (with the
cluster's ``synchronous_commit=off`` it usually has, so the test alone cannot tell
the two apart; ``labelling.verdicts`` says why the setting is there).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connections
from django.test.utils import CaptureQueriesContext

from labelling.importing import import_corpus
from labelling.models import Label, Transcript, Verdict

PG_CTL = os.environ.get("CONTEXTGC_TEST_PG_CTL")
PGDATA = os.environ.get("CONTEXTGC_TEST_PGDATA")

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        not (PG_CTL and PGDATA),
        reason="needs the cluster `bash scripts/test` starts (CONTEXTGC_TEST_PG_CTL/_PGDATA)",
    ),
]


def restart_postgres(mode: str) -> None:
    command = [PG_CTL, "-D", PGDATA, "-m", mode, "-w", "-t", "60", "restart"]
    command += ["-l", str(Path(PGDATA).parent / "log")]
    if os.getuid() == 0:
        command = ["runuser", "-u", "postgres", "--", *command]
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def test_an_acknowledged_verdict_survives_a_crash_restart(login, reviewer, worksheet):
    response = login(reviewer).post(
        f"/labelling/worksheets/{worksheet.pk}/rows/1/",
        {"verdict": "incorrect", "note": "hypothetical", "version": 0},
    )
    assert response.status_code == 302  # acknowledged
    connections.close_all()
    restart_postgres("immediate")
    stored = Verdict.objects.get(row__worksheet=worksheet, reviewer=reviewer)
    assert (stored.verdict, stored.note, stored.version) == ("incorrect", "hypothetical", 1)


def test_an_acknowledged_label_import_survives_a_crash_restart(login, maintainer, finished):
    from labelling.labels import dumps, export_worksheet

    upload = SimpleUploadedFile("labels.json", dumps(export_worksheet(finished)).encode())
    response = login(maintainer).post("/labelling/labels/import", {"upload": upload})
    assert response.status_code == 302  # acknowledged
    connections.close_all()
    restart_postgres("immediate")
    assert Label.objects.count() == 7


def test_an_acknowledged_corpus_import_survives_a_crash_restart(login, maintainer):
    from labelling.measurement.models import Job, JobStatus
    from labelling.measurement.uploads import import_upload_job
    from tests.personas import AIRLINE

    upload = SimpleUploadedFile("airline.json", AIRLINE.read_bytes())
    response = login(maintainer).post("/labelling/corpora/import", {"upload": upload})
    assert response.status_code == 302  # the upload is acknowledged, its job queued
    job = Job.objects.get()
    import_upload_job.call(job.pk)
    job.refresh_from_db()
    assert job.status == JobStatus.DONE  # the import is acknowledged
    connections.close_all()
    restart_postgres("immediate")
    assert Transcript.objects.filter(corpus__name="airline.json").count() == 4


def test_a_corpus_import_asks_for_a_synchronous_commit_as_a_verdict_does():
    from tests.personas import AIRLINE

    with CaptureQueriesContext(connections["default"]) as queries:
        import_corpus(AIRLINE.read_bytes(), name="airline", source="airline.json")
    statements = [query["sql"] for query in queries.captured_queries]
    synchronous = statements.index("SET LOCAL synchronous_commit TO on")
    assert synchronous < next(i for i, sql in enumerate(statements) if "INSERT" in sql)

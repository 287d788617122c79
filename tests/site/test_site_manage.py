"""``python3 manage.py`` on a fresh clone: development mode unless the operator chose."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from django.conf import settings

from playground.env import PRODUCTION_SIGNS

MANAGE = Path(settings.BASE_DIR) / "manage.py"


def _manage(tmp_path, *args, **env) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if k not in PRODUCTION_SIGNS}
    clean.pop("DJANGO_SETTINGS_MODULE", None)
    clean["CONTEXTGC_SQLITE_PATH"] = str(tmp_path / "site.sqlite3")
    return subprocess.run(
        [sys.executable, str(MANAGE), *args],
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_it_runs_a_command_with_nothing_exported(tmp_path):
    done = _manage(tmp_path, "migrate", "--noinput", "-v", "0")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "site.sqlite3").exists()


def test_it_still_refuses_production_without_a_key_and_says_how_to_try_it(tmp_path):
    done = _manage(tmp_path, "check", DATABASE_URL="postgres://nobody@127.0.0.1:1/none")
    assert done.returncode != 0
    assert "DJANGO_SECRET_KEY must be set when DJANGO_DEBUG is off" in done.stderr
    assert "set DJANGO_DEBUG=1" in done.stderr


def test_it_keeps_debug_off_when_the_operator_set_a_key(tmp_path):
    printed = "from django.conf import settings; print(settings.DEBUG)"
    done = _manage(tmp_path, "shell", "-c", printed, DJANGO_SECRET_KEY="k")
    assert (done.returncode, done.stdout.split()[-1]) == (0, "False"), done.stderr


def test_an_upload_directory_that_cannot_be_made_stops_the_start(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    done = _manage(tmp_path, "check", CONTEXTGC_UPLOAD_DIR=str(blocker / "uploads"))
    assert done.returncode != 0
    assert f"CONTEXTGC_UPLOAD_DIR='{blocker / 'uploads'}' cannot be written" in done.stderr

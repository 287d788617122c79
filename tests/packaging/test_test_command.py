"""The README's test command is CI's, and under it the suite cannot quietly run less."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_ci_runs_exactly_the_readme_test_command():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("Install what the tests need") :]
    command = re.search(r"```sh\n(.*?)\n```", section, re.DOTALL).group(1)
    run = [line for line in (ROOT / ".ci" / "run").read_text().splitlines() if line.strip()]
    assert command == "bash scripts/test"
    assert run[-1] == f"exec {command}"


def test_the_test_command_installs_and_starts_what_the_layers_need():
    script = (ROOT / "scripts" / "test").read_text()
    for package in ("postgresql", "chromium", "memcached"):
        assert f"|| missing+=({package})" in script
    assert "apt-get install" in script
    assert "'.[test,exact,site,bench]'" in script
    assert "export DATABASE_URL=" in script and "CONTEXTGC_TEST_PGDATA=" in script
    assert script.rstrip().endswith('python3 -m pytest "$@"')


def _run_probe(tmp_path, test_body: str, **env) -> int:
    shutil.copy(ROOT / "tests" / "conftest.py", tmp_path / "conftest.py")
    (tmp_path / "test_probe.py").write_text(f"import pytest\n\n\ndef test_probe():\n{test_body}\n")
    environ = {k: v for k, v in os.environ.items() if k not in ("CONTEXTGC_TEST_PGDATA",)}
    environ.update(PYTHONPATH=str(ROOT), DJANGO_SETTINGS_MODULE="playground.settings_test", **env)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
        cwd=tmp_path,
        env=environ,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return done.returncode


def test_under_the_test_command_a_skipped_test_fails_the_run(tmp_path):
    postgres = {"DATABASE_URL": "postgres://postgres@127.0.0.1:1/unused"}
    skipping = '    pytest.skip("a layer that did not run")'
    assert _run_probe(tmp_path, skipping, **postgres) == 0
    assert _run_probe(tmp_path, skipping, CONTEXTGC_TEST_PGDATA="/pgdata", **postgres) == 1
    assert _run_probe(tmp_path, "    pass", CONTEXTGC_TEST_PGDATA="/pgdata", **postgres) == 0


def test_under_the_test_command_a_database_other_than_postgresql_stops_the_run(tmp_path):
    sqlite = {"DATABASE_URL": "", "CONTEXTGC_SQLITE_PATH": str(tmp_path / "db.sqlite3")}
    assert _run_probe(tmp_path, "    pass", **sqlite) == 0
    assert _run_probe(tmp_path, "    pass", CONTEXTGC_TEST_PGDATA="/pgdata", **sqlite) == 1

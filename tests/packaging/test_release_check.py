"""The library's own distribution: its version follows the package, the site pins it, and
scripts/release-check refuses a library that gains a dependency or ships another package.

scripts/test runs release-check on the real project; these tests run it on broken copies.
"""

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import compiler

ROOT = Path(__file__).resolve().parents[2]
LIBRARY = ROOT / "packaging" / "library"
RELEASE_CHECK = ROOT / "scripts" / "release-check"


def library_copy(tmp_path, old, new):
    """A copy of the library project (its link to compiler/ resolved) with one edit made to
    its pyproject.toml; fails if the edit finds nothing to replace."""
    project = tmp_path / "library"
    shutil.copytree(LIBRARY, project, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    pyproject = project / "pyproject.toml"
    text = pyproject.read_text()
    assert old in text
    pyproject.write_text(text.replace(old, new))
    return project


def release_check(project):
    return subprocess.run(
        [sys.executable, str(RELEASE_CHECK), str(project)],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )


def test_the_library_takes_its_version_from_the_compiler_package():
    project = tomllib.loads((LIBRARY / "pyproject.toml").read_text())
    assert project["project"]["dynamic"] == ["version"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "compiler.__version__"}


def test_the_site_depends_on_the_library_at_the_compiler_version():
    site = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert f"contextgc-compiler=={compiler.__version__}" in site["project"]["dependencies"]


def test_the_site_distribution_does_not_ship_the_compiler_package_itself():
    site = tomllib.loads((ROOT / "pyproject.toml").read_text())
    included = site["tool"]["setuptools"]["packages"]["find"]["include"]
    assert not [pattern for pattern in included if pattern.startswith("compiler")]


def test_release_check_fails_naming_a_dependency_added_to_the_library(tmp_path):
    project = library_copy(tmp_path, "dependencies = []", 'dependencies = ["rs-bpe==0.1.0"]')

    done = release_check(project)

    assert done.returncode == 1
    assert "must have no dependencies, but its wheel requires: rs-bpe==0.1.0" in done.stderr


def test_release_check_fails_naming_a_package_shipped_beside_the_compiler(tmp_path):
    project = library_copy(
        tmp_path, 'include = ["compiler", "compiler.*"]', 'include = ["compiler*", "playground"]'
    )
    (project / "playground").mkdir()
    (project / "playground" / "__init__.py").write_text("")

    done = release_check(project)

    assert done.returncode == 1
    assert "holds files outside the library: ['playground/__init__.py']" in done.stderr


def test_release_check_fails_naming_a_compiler_module_the_wheel_leaves_out(tmp_path):
    project = library_copy(
        tmp_path, 'include = ["compiler", "compiler.*"]', 'include = ["compiler"]'
    )
    (project / "compiler" / "stage").mkdir()
    (project / "compiler" / "stage" / "__init__.py").write_text("")

    done = release_check(project)

    assert done.returncode == 1
    assert "the wheel lacks files of the project's compiler/: [" in done.stderr
    assert "'compiler/stage/__init__.py'" in done.stderr

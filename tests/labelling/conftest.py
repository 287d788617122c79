"""The labelling tests' fixtures: personas, corpora and a worksheet (``tests.personas``),
and a temporary directory for uploaded corpus files."""

import pytest

from tests.personas import (  # noqa: F401 (fixtures)
    adjudicator,
    airline,
    finished,
    login,
    maintainer,
    nebius,
    other_reviewer,
    outsider,
    reviewer,
    row,
    worksheet,
)


@pytest.fixture(autouse=True)
def upload_dir(settings, tmp_path):
    settings.CONTEXTGC_UPLOAD_DIR = tmp_path / "uploads"
    return settings.CONTEXTGC_UPLOAD_DIR

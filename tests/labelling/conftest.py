"""The labelling tests' fixtures: personas, corpora and a worksheet (``tests.personas``)."""

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

"""Personas, small real corpora and a worksheet, shared by the labelling and the
measurement tests (each folder's conftest imports the fixtures it uses).

Personas: ``reviewer`` and ``other_reviewer`` judge rows, ``adjudicator`` settles
disputes, ``maintainer`` holds the app's permissions, ``outsider`` is signed in and
belongs to nothing. ``airline`` is a real tau-bench slice (four trajectories, two of
them trials of one task), ``worksheet`` a two-reviewer travel worksheet built on it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from labelling.importing import import_corpus
from labelling.management.commands.create_reviewer import maintainers_group
from labelling.verdicts import adjudicate, record_verdict
from labelling.worksheets import Sampling, build_worksheet

FIXTURES = Path(__file__).resolve().parent / "fixtures"
AIRLINE = FIXTURES / "labelling" / "tau-airline-tasks-2-4-5.json"
NEBIUS = FIXTURES / "formats" / "nebius-two-blocks.txt"
PASSWORD = "correct horse battery staple"


def make_user(username: str, *, maintainer: bool = False):
    user = get_user_model().objects.create_user(username, password=PASSWORD)
    if maintainer:
        user.groups.add(maintainers_group())
    return user


@pytest.fixture
def reviewer(db):
    return make_user("alice")


@pytest.fixture
def other_reviewer(db):
    return make_user("bob")


@pytest.fixture
def adjudicator(db):
    return make_user("carol")


@pytest.fixture
def maintainer(db):
    return make_user("maria", maintainer=True)


@pytest.fixture
def outsider(db):
    return make_user("oscar")


@pytest.fixture
def login():
    """A client signed in as ``user`` (anonymous for None)."""

    def login(user, **kwargs) -> Client:
        client = Client(**kwargs)
        if user is not None:
            client.force_login(user)
        return client

    return login


@pytest.fixture
def airline(db):
    return import_corpus(AIRLINE.read_bytes(), name="airline-slice", source=AIRLINE.name).corpus


@pytest.fixture
def nebius(db):
    return import_corpus(NEBIUS.read_bytes(), name="nebius-slice", source=NEBIUS.name).corpus


@pytest.fixture
def worksheet(airline, maintainer, reviewer, other_reviewer, adjudicator):
    """Seven travel slots, one row each, two verdicts per row, suggestions on."""
    return build_worksheet(
        airline,
        "travel",
        name="airline sample",
        creator=maintainer,
        sampling=Sampling(per_slot_budget=1, suggest=True),
        reviewers=[reviewer, other_reviewer],
        adjudicators=[adjudicator],
        reviews_per_row=2,
    )


@pytest.fixture
def row(worksheet):
    return worksheet.rows.get(position=1)


@pytest.fixture
def finished(worksheet, reviewer, other_reviewer, adjudicator):
    """The worksheet judged by both reviewers, who disagree on row 1 only, and row 1
    adjudicated: every row has its final verdict."""
    for row in worksheet.rows.order_by("position"):
        record_verdict(row, reviewer, "correct", "reads right")
        record_verdict(row, other_reviewer, "incorrect" if row.position == 1 else "correct")
    adjudicate(worksheet.rows.get(position=1), adjudicator, "incorrect", "moved on by then")
    return worksheet


def big_airline(copies: int = 25) -> bytes:
    """The airline slice repeated ``copies`` times as further trials of its tasks (the
    copies are identical in content, distinct in id): 25 copies are 100 transcripts,
    about 2.5 MB, ten times the body cap of the rest of the site."""
    import json

    records = json.loads(AIRLINE.read_bytes())
    repeated = [
        {**record, "trial": copy * 10 + record["trial"]}
        for copy in range(copies)
        for record in records
    ]
    return json.dumps(repeated, indent=1).encode()

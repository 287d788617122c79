"""Every permission edge: who gets what on every labelling URL.

Anonymous visitors are sent to sign in; outsiders get 404 on every worksheet URL (a
worksheet's existence is not disclosed); members whose role does not allow an action
get 403; maintainers (the app's permissions) may read and export any worksheet but
not judge or adjudicate rows on one they are not a member of.
"""

from __future__ import annotations

import pytest

from labelling.models import Verdict

pytestmark = pytest.mark.django_db

PERSONAS = ("anonymous", "outsider", "reviewer", "adjudicator", "maintainer")

# (method, path under the worksheet, expected status per persona)
WORKSHEET_EDGES = [
    ("get", "", (302, 404, 200, 200, 200)),
    ("get", "rows/1/", (302, 404, 200, 403, 403)),
    ("post", "rows/1/", (302, 404, 302, 403, 403)),
    ("get", "agreement", (302, 404, 403, 200, 200)),
    ("get", "disagreements", (302, 404, 403, 200, 200)),
    ("post", "rows/1/adjudicate", (302, 404, 403, 422, 403)),
    ("get", "export.json", (302, 404, 403, 409, 409)),
    ("post", "merge", (302, 404, 403, 403, 409)),
]

SITE_EDGES = [
    ("get", "/labelling/", (302, 200, 200, 200, 200)),
    ("get", "/labelling/corpora/import", (302, 403, 403, 403, 200)),
    ("get", "/labelling/worksheets/new", (302, 403, 403, 403, 200)),
    ("get", "/labelling/labels/import", (302, 403, 403, 403, 200)),
    ("get", "/labelling/precision", (302, 403, 403, 403, 200)),
    ("get", "/labelling/labels/export.json", (302, 403, 403, 403, 422)),
]

POST_DATA = {"verdict": "correct", "version": 0, "reason": "r"}


@pytest.fixture
def personas(outsider, reviewer, adjudicator, maintainer):
    return {
        "anonymous": None,
        "outsider": outsider,
        "reviewer": reviewer,
        "adjudicator": adjudicator,
        "maintainer": maintainer,
    }


def cases(edges):
    for method, path, statuses in edges:
        for persona, status in zip(PERSONAS, statuses, strict=True):
            yield pytest.param(method, path, persona, status, id=f"{method} {path} as {persona}")


@pytest.mark.parametrize(("method", "path", "persona", "status"), cases(WORKSHEET_EDGES))
def test_each_worksheet_url_answers_each_persona_as_its_role_allows(
    login, personas, worksheet, method, path, persona, status
):
    client = login(personas[persona])
    url = f"/labelling/worksheets/{worksheet.pk}/{path}"
    response = getattr(client, method)(url, POST_DATA if method == "post" else None)
    assert response.status_code == status
    if status == 302 and persona == "anonymous":
        assert response["Location"].startswith("/accounts/login/?next=")


@pytest.mark.parametrize(("method", "path", "persona", "status"), cases(SITE_EDGES))
def test_each_site_url_answers_each_persona_as_its_permissions_allow(
    login, personas, method, path, persona, status
):
    response = getattr(login(personas[persona]), method)(path)
    assert response.status_code == status


@pytest.mark.parametrize("persona", PERSONAS[1:])
def test_a_worksheet_that_does_not_exist_is_404_for_everyone(login, personas, persona):
    assert login(personas[persona]).get("/labelling/worksheets/999999/").status_code == 404


def test_an_outsider_posting_a_verdict_stores_nothing(login, outsider, worksheet):
    login(outsider).post(f"/labelling/worksheets/{worksheet.pk}/rows/1/", POST_DATA)
    assert Verdict.objects.count() == 0


def test_an_outsider_does_not_see_the_worksheet_listed(login, outsider, worksheet):
    body = login(outsider).get("/labelling/").content.decode()
    assert worksheet.name not in body


def test_a_reviewer_sees_their_worksheet_listed(login, reviewer, worksheet):
    body = login(reviewer).get("/labelling/").content.decode()
    assert f'href="/labelling/worksheets/{worksheet.pk}/">airline sample</a>' in body


def test_adjudicating_requires_post(login, adjudicator, worksheet):
    url = f"/labelling/worksheets/{worksheet.pk}/rows/1/adjudicate"
    assert login(adjudicator).get(url).status_code == 405


def test_signing_in_and_out_works_through_the_forms(client, reviewer):
    from tests.personas import PASSWORD

    response = client.post("/accounts/login/", {"username": "alice", "password": PASSWORD})
    assert response.status_code == 302
    assert response["Location"] == "/labelling/"
    assert client.post("/accounts/logout/").status_code == 302
    assert client.get("/labelling/").status_code == 302


def test_a_reviewer_does_not_see_how_others_judged(login, reviewer, other_reviewer, row):
    from labelling.verdicts import record_verdict

    record_verdict(row, reviewer, "correct")
    record_verdict(row, other_reviewer, "incorrect")
    body = login(reviewer).get(f"/labelling/worksheets/{row.worksheet.pk}/").content.decode()
    assert "Disputed" not in body


def test_an_adjudicator_sees_the_counts_of_each_row_state(login, adjudicator, worksheet):
    body = login(adjudicator).get(f"/labelling/worksheets/{worksheet.pk}/").content.decode()
    assert '<dt>Unlabelled</dt><dd class="number">7</dd>' in body

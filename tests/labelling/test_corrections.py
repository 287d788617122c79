"""A maintainer corrects a stored label: an audit trail, exports that follow it, and a
stale edit refused with 409."""

from __future__ import annotations

import json
import threading

import pytest
from django.db import connection
from django.test import Client

from labelling.labels import merge_worksheet
from labelling.models import Label, LabelCorrection

pytestmark = pytest.mark.django_db


@pytest.fixture
def label(finished):
    merge_worksheet(finished)
    return Label.objects.get(verdict="incorrect")  # row 1, adjudicated incorrect


def _correct(client, label, verdict="correct", version=1, reason="the booking says so"):
    url = f"/labelling/labels/{label.pk}/correct"
    return client.post(url, {"verdict": verdict, "reason": reason, "version": version})


def test_a_maintainer_corrects_a_label_and_the_trail_says_who_when_what_and_why(
    login, maintainer, label
):
    response = _correct(login(maintainer), label)
    assert (response.status_code, response["Location"]) == (
        302,
        f"/labelling/labels/{label.pk}/correct",
    )
    label.refresh_from_db()
    assert (label.verdict, label.version) == ("correct", 2)
    correction = LabelCorrection.objects.get()
    assert (correction.corrected_by, correction.old_verdict, correction.new_verdict) == (
        maintainer,
        "incorrect",
        "correct",
    )
    assert (correction.reason, correction.version) == ("the booking says so", 2)
    assert correction.corrected_at is not None


def test_the_page_lists_the_corrections(login, maintainer, label):
    client = login(maintainer)
    _correct(client, label)
    page = client.get(f"/labelling/labels/{label.pk}/correct").content.decode()
    assert "<td>maria</td><td>incorrect</td><td>correct</td><td>the booking says so</td>" in page


def test_exports_carry_the_corrected_verdict(login, maintainer, label):
    client = login(maintainer)
    _correct(client, label)
    query = f"corpus={label.transcript.corpus_id}&schema={label.schema_name}"
    document = json.loads(client.get(f"/labelling/labels/export.json?{query}").content)
    exported = [row for row in document["labels"] if row["value"] == label.value]
    assert [row["verdict"] for row in exported] == ["correct"]


def test_a_stale_correction_answers_409_and_keeps_the_first(login, maintainer, label):
    client = login(maintainer)
    _correct(client, label, verdict="correct")
    response = _correct(client, label, verdict="unclear", reason="not sure", version=1)
    page = response.content.decode()
    assert response.status_code == 409
    assert "Not saved: this label was corrected by maria after you opened it." in page
    assert "It is now correct (version 2)" in page
    assert 'name="version" value="2"' in page
    label.refresh_from_db()
    assert (label.verdict, label.version, LabelCorrection.objects.count()) == ("correct", 2, 1)


def test_a_correction_to_the_same_verdict_is_refused(login, maintainer, label):
    response = _correct(login(maintainer), label, verdict="incorrect")
    assert response.status_code == 422
    assert "nothing to correct" in response.content.decode()
    assert not LabelCorrection.objects.exists()


def test_a_correction_needs_a_reason(login, maintainer, label):
    assert _correct(login(maintainer), label, reason="").status_code == 422
    assert not LabelCorrection.objects.exists()


def test_reviewers_and_adjudicators_cannot_correct_a_label(login, reviewer, adjudicator, label):
    assert _correct(login(reviewer), label).status_code == 403
    assert _correct(login(adjudicator), label).status_code == 403
    assert login(reviewer).get(f"/labelling/labels/{label.pk}/correct").status_code == 403


def test_the_labels_table_links_each_label_to_its_correction(login, maintainer, label):
    query = f"corpus={label.transcript.corpus_id}&schema={label.schema_name}"
    page = login(maintainer).get(f"/labelling/labels/?{query}").content.decode()
    assert page.count('">Correct</a>') == Label.objects.count() == 7
    assert f'href="/labelling/labels/{label.pk}/correct"' in page


@pytest.mark.django_db(transaction=True)
def test_two_maintainers_correcting_at_once_make_one_correction(maintainer, label):
    other = type(maintainer).objects.create_user("mona")
    other.groups.set(maintainer.groups.all())
    attempts = [(maintainer, "correct"), (other, "unclear")]
    ready, statuses = threading.Barrier(len(attempts)), []

    def attempt(user, verdict):
        try:
            client = Client()
            client.force_login(user)
            ready.wait()
            statuses.append(_correct(client, label, verdict=verdict).status_code)
        finally:
            connection.close()

    threads = [threading.Thread(target=attempt, args=a) for a in attempts]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(statuses) == [302, 409]
    label.refresh_from_db()
    assert (label.version, LabelCorrection.objects.count()) == (2, 1)

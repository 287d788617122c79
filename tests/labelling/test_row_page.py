"""The reviewer's row page: one row at a time, HTMX saves, works without JavaScript."""

from __future__ import annotations

import pytest

from labelling.models import Verdict
from labelling.verdicts import record_verdict

pytestmark = pytest.mark.django_db

HX = {"HTTP_HX_REQUEST": "true"}


def url(worksheet, position=1):
    return f"/labelling/worksheets/{worksheet.pk}/rows/{position}/"


def test_it_shows_the_row_with_its_quote_evidence_and_keys(login, reviewer, worksheet):
    response = login(reviewer).get(url(worksheet))
    body = response.content.decode()
    assert response.status_code == 200
    assert "Row 1 of 7" in body
    assert '<strong class="value">JG7FMM</strong>' in body
    assert "registered the value" in body
    assert "Mechanical evidence — not a verdict" in body
    assert 'data-key="c"' in body and 'data-key="i"' in body and 'data-key="u"' in body
    assert '<progress max="7" value="0"' in body
    assert 'rel="next" href="/labelling/worksheets/' in body


def test_saving_without_javascript_redirects_to_the_next_row(login, reviewer, worksheet):
    response = login(reviewer).post(url(worksheet), {"verdict": "correct", "version": 0})
    assert response.status_code == 302
    assert response["Location"] == url(worksheet, 2)
    assert Verdict.objects.get().verdict == "correct"


def test_saving_with_htmx_returns_the_next_row_and_pushes_its_url(login, reviewer, worksheet):
    response = login(reviewer).post(
        url(worksheet), {"verdict": "incorrect", "note": "hypothetical", "version": 0}, **HX
    )
    body = response.content.decode()
    assert response.status_code == 200
    assert response["HX-Push-Url"] == url(worksheet, 2)
    assert body.startswith('\n<section id="labeller"') or body.lstrip().startswith(
        '<section id="labeller"'
    )
    assert "Row 2 of 7" in body
    assert "<html" not in body
    assert '<progress max="7" value="1"' in body
    stored = Verdict.objects.get()
    assert (stored.verdict, stored.note) == ("incorrect", "hypothetical")


def test_saving_the_last_unjudged_row_goes_back_to_the_worksheet(login, reviewer, worksheet):
    for row in worksheet.rows.exclude(position=7):
        record_verdict(row, reviewer, "correct")
    response = login(reviewer).post(url(worksheet, 7), {"verdict": "correct", "version": 0}, **HX)
    assert response["HX-Redirect"] == f"/labelling/worksheets/{worksheet.pk}/"


def test_after_a_save_it_moves_to_the_next_row_not_yet_judged(login, reviewer, worksheet):
    record_verdict(worksheet.rows.get(position=2), reviewer, "correct")
    response = login(reviewer).post(url(worksheet), {"verdict": "correct", "version": 0})
    assert response["Location"] == url(worksheet, 3)


def test_a_stale_second_tab_gets_a_conflict_message_not_an_overwrite(login, reviewer, row):
    client = login(reviewer)
    first = client.post(url(row.worksheet), {"verdict": "correct", "version": 0}, **HX)
    second = client.post(url(row.worksheet), {"verdict": "incorrect", "version": 0}, **HX)
    body = second.content.decode()
    assert first.status_code == 200
    assert second.status_code == 409
    assert "Not saved: this verdict changed in another tab" in body
    assert "Your “incorrect” was not saved." in body
    assert "What is stored now: <strong>correct</strong>, version 1." in body
    assert 'name="version" value="1"' in body  # saving again is a deliberate choice
    assert Verdict.objects.get().verdict == "correct"


def test_a_stale_tab_without_javascript_gets_the_conflict_page(login, reviewer, row):
    record_verdict(row, reviewer, "correct")
    response = login(reviewer).post(url(row.worksheet), {"verdict": "unclear", "version": 0})
    assert response.status_code == 409
    assert "<html" in response.content.decode()
    assert "Not saved: this verdict changed in another tab" in response.content.decode()


def test_an_invalid_verdict_is_refused_with_the_form(login, reviewer, worksheet):
    response = login(reviewer).post(url(worksheet), {"verdict": "maybe", "version": 0}, **HX)
    assert response.status_code == 422
    assert "Select a valid choice." in response.content.decode()
    assert Verdict.objects.count() == 0


def test_it_shows_the_reviewers_own_verdict_and_version(login, reviewer, row):
    record_verdict(row, reviewer, "unclear", "cannot tell")
    body = login(reviewer).get(url(row.worksheet)).content.decode()
    assert "Your verdict: <strong>unclear</strong> (version 1)." in body
    assert "cannot tell</textarea>" in body


def test_it_never_shows_another_reviewers_verdict(login, reviewer, other_reviewer, row):
    record_verdict(row, other_reviewer, "incorrect", "bob's private reasoning")
    body = login(reviewer).get(url(row.worksheet)).content.decode()
    assert "bob's private reasoning" not in body
    assert "Your verdict:" not in body


def test_posting_only_ever_writes_the_posters_own_verdict(login, reviewer, other_reviewer, row):
    record_verdict(row, reviewer, "correct", "mine")
    login(other_reviewer).post(url(row.worksheet), {"verdict": "incorrect", "version": 1})
    mine = Verdict.objects.get(reviewer=reviewer)
    assert (mine.verdict, mine.note, mine.version) == ("correct", "mine", 1)
    assert not Verdict.objects.filter(reviewer=other_reviewer).exists()  # stale: conflict


def test_a_verdict_post_without_a_csrf_token_is_refused(login, reviewer, worksheet):
    client = login(reviewer, enforce_csrf_checks=True)
    response = client.post(url(worksheet), {"verdict": "correct", "version": 0}, **HX)
    assert response.status_code == 403
    assert Verdict.objects.count() == 0


def test_an_htmx_verdict_post_with_the_csrf_header_is_accepted(login, reviewer, worksheet):
    client = login(reviewer, enforce_csrf_checks=True)
    page = client.get(url(worksheet))
    token = page.cookies["csrftoken"].value
    response = client.post(
        url(worksheet), {"verdict": "correct", "version": 0}, HTTP_X_CSRFTOKEN=token, **HX
    )
    assert response.status_code == 200
    assert Verdict.objects.count() == 1


def test_the_page_carries_the_csrf_token_for_htmx_on_body(login, reviewer, worksheet):
    body = login(reviewer).get(url(worksheet)).content.decode()
    assert 'hx-headers=\'{"X-CSRFToken": "' in body


def test_the_page_loads_its_script_from_a_file_not_inline(login, reviewer, worksheet):
    response = login(reviewer).get(url(worksheet))
    body = response.content.decode()
    assert '<script src="/static/labelling.js" defer></script>' in body
    assert "<script>" not in body and "style=" not in body
    assert "script-src 'self'" in response["Content-Security-Policy"]


def test_a_row_that_does_not_exist_is_404(login, reviewer, worksheet):
    assert login(reviewer).get(url(worksheet, 99)).status_code == 404

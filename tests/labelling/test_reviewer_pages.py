"""What a reviewer can open beside a row: the whole transcript, and their own verdicts."""

from __future__ import annotations

import pytest

from labelling.compiling import turn_text
from labelling.verdicts import record_verdict

pytestmark = pytest.mark.django_db


def test_the_transcript_page_shows_every_turn_in_full(login, reviewer, row):
    transcript = row.extraction.transcript
    response = login(reviewer).get(f"/labelling/worksheets/{row.worksheet_id}/rows/1/transcript")
    page = response.content.decode()
    assert response.status_code == 200
    assert page.count("<details") == len(transcript.messages) == transcript.turn_count
    longest = max((turn_text(m) for m in transcript.messages), key=len)
    assert len(longest) > 700  # longer than any quote on the row page
    assert longest.replace("'", "&#x27;").replace('"', "&quot;") in page.replace("&amp;", "&")
    assert f'id="turn-{row.extraction.turn}"' in page


def test_the_transcript_page_opens_the_registering_turn_and_its_neighbours(login, reviewer, row):
    page = login(reviewer).get(f"/labelling/worksheets/{row.worksheet_id}/rows/1/transcript")
    assert page.content.decode().count("<details open>") == len(row.extraction.quote)


def test_the_row_page_links_to_the_whole_transcript(login, reviewer, row):
    page = login(reviewer).get(f"/labelling/worksheets/{row.worksheet_id}/rows/1/").content
    url = f"/labelling/worksheets/{row.worksheet_id}/rows/1/transcript#turn-{row.extraction.turn}"
    assert url.encode() in page


def test_adjudicators_and_maintainers_open_the_transcript_too(login, adjudicator, maintainer, row):
    url = f"/labelling/worksheets/{row.worksheet_id}/rows/1/transcript"
    assert login(adjudicator).get(url).status_code == 200
    assert login(maintainer).get(url).status_code == 200


def test_an_outsider_gets_no_transcript(login, outsider, row):
    url = f"/labelling/worksheets/{row.worksheet_id}/rows/1/transcript"
    assert login(outsider).get(url).status_code == 404


def test_your_verdicts_lists_each_with_a_link_to_change_it(
    login, reviewer, other_reviewer, worksheet
):
    rows = list(worksheet.rows.order_by("position"))
    record_verdict(rows[0], reviewer, "correct", "reads right")
    record_verdict(rows[2], reviewer, "incorrect")
    record_verdict(rows[1], other_reviewer, "unclear", "someone else's")
    response = login(reviewer).get(f"/labelling/worksheets/{worksheet.pk}/verdicts")
    page = response.content.decode()
    assert response.status_code == 200
    assert page.count("<tr>") == 3  # the header and two verdicts
    assert f'href="/labelling/worksheets/{worksheet.pk}/rows/1/"' in page
    assert f'href="/labelling/worksheets/{worksheet.pk}/rows/3/"' in page
    assert "reads right" in page and "someone else" not in page


def test_your_verdicts_is_for_the_worksheets_reviewers(login, adjudicator, worksheet):
    response = login(adjudicator).get(f"/labelling/worksheets/{worksheet.pk}/verdicts")
    assert response.status_code == 403


def test_a_reviewer_who_judged_every_row_is_sent_to_the_table(login, reviewer, worksheet):
    for row in worksheet.rows.all():
        record_verdict(row, reviewer, "correct")
    page = login(reviewer).get(f"/labelling/worksheets/{worksheet.pk}/").content.decode()
    link = f'<a href="/labelling/worksheets/{worksheet.pk}/verdicts">Review your verdicts</a>'
    assert link in page

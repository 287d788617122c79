"""A retired turn judged in a real browser: the reviewer opens a retirement row, sees the
retired turn and the turn that superseded it, opens the transcript around it, and records
a verdict by key."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from labelling.importing import import_corpus
from labelling.models import Verdict
from labelling.worksheets import Sampling, build_retirement_worksheet
from tests.browser.test_browser_labelling import AIRLINE, sign_in, user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def sheet(db):
    maria, alice = user("maria", maintainer=True), user("alice")
    corpus = import_corpus(AIRLINE.read_bytes(), name="airline-slice", source=AIRLINE.name).corpus
    return build_retirement_worksheet(
        corpus,
        "travel",
        name="airline retirements",
        creator=maria,
        sampling=Sampling(per_slot_budget=100, seed=7),
        reviewers=[alice],
    )


def test_a_reviewer_sees_both_turns_and_records_a_retirement_verdict(live_server, page, sheet):
    base = live_server.url
    row = sheet.rows.select_related("retirement").get(position=1)
    (by, *_) = row.retirement.superseding_turns
    sign_in(page, base, "alice")
    page.goto(f"{base}/labelling/worksheets/{sheet.pk}/rows/1/")

    expect(page.locator("#retired-turn")).to_contain_text(f"turn {row.retirement.turn}")
    expect(page.locator("#retired-turn")).to_contain_text("retired")
    expect(page.locator(f'[data-superseding="{by}"]')).to_contain_text("superseded it")
    expect(page.locator(".reason")).to_have_text(row.retirement.reason)

    with page.context.expect_page() as opened:
        page.locator("#whole-transcript").click()
    transcript = opened.value
    expect(transcript.locator(f"#turn-{row.retirement.turn}")).to_contain_text("retired")
    expect(transcript.locator(f"#turn-{by}")).to_contain_text("superseded it")
    transcript.close()

    page.keyboard.press("h")  # still needed
    expect(page.locator("#row-title")).to_contain_text(f"Row 2 of {sheet.rows.count()}")
    stored = Verdict.objects.get(row=row, reviewer__username="alice")
    assert stored.verdict == "still_needed"
    assert page.problems == []

"""Labelling in a real browser: the whole flow by keyboard, two tabs, and no JavaScript.

Two reviewers judge the same small worksheet built from a real tau-bench slice, by
keyboard alone; they disagree on one row; the adjudicator resolves it; the export
downloads and, imported again, exports equal. The flow also measures what one verdict
costs a reviewer: keystrokes, requests and wall time per row.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

from labelling.importing import import_corpus
from labelling.management.commands.create_reviewer import maintainers_group
from labelling.models import Label, Verdict
from labelling.worksheets import Sampling, build_worksheet

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

AIRLINE = Path(__file__).resolve().parent.parent / "fixtures" / "labelling"
AIRLINE = AIRLINE / "tau-airline-tasks-2-4-5.json"
PASSWORD = "correct horse battery staple"
ROWS = 7


def user(username, *, maintainer=False):
    created = get_user_model().objects.create_user(username, password=PASSWORD)
    if maintainer:
        created.groups.add(maintainers_group())
    return created


def sign_in(page, base, username, then="/labelling/"):
    page.goto(f"{base}/accounts/login/?next={then}")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(f"{base}{then}")


def label_by_keyboard(page, base, worksheet, verdicts: str, notes: dict[int, str]):
    """Judge every row with one key each (plus ``e``, the note, ``Escape`` where noted).

    Returns per-row measurements: keystrokes, requests, seconds to the next row.
    """
    requests = []
    page.on(
        "request",
        lambda r: "/labelling/" in r.url and requests.append((r.method, r.resource_type)),
    )
    page.goto(f"{base}/labelling/worksheets/{worksheet.pk}/")
    page.get_by_role("link", name="Start at row 1").click()
    expect(page.locator("#row-title")).to_contain_text(f"Row 1 of {ROWS}")
    measured = []
    for position, key in enumerate(verdicts, start=1):
        keystrokes = 0
        if position in notes:
            page.keyboard.press("e")
            page.keyboard.type(notes[position])
            page.keyboard.press("Escape")
            keystrokes += 2 + len(notes[position])
        requests.clear()
        started = time.perf_counter()
        page.keyboard.press(key)
        keystrokes += 1
        if position < ROWS:
            expect(page.locator("#row-title")).to_contain_text(f"Row {position + 1} of {ROWS}")
            expect(page.locator("#progress-text")).to_have_text(f"{position} of {ROWS} judged")
        else:
            expect(page.get_by_text("You have judged every row.")).to_be_visible()
        measured.append((keystrokes, list(requests), time.perf_counter() - started))
    return measured


@pytest.fixture
def people(db):
    return {
        name: user(name, maintainer=name == "maria") for name in ("alice", "bob", "carol", "maria")
    }


@pytest.fixture
def sheet(people):
    corpus = import_corpus(AIRLINE.read_bytes(), name="airline-slice", source=AIRLINE.name).corpus
    return build_worksheet(
        corpus,
        "travel",
        name="airline sample",
        creator=people["maria"],
        sampling=Sampling(per_slot_budget=1, suggest=True),
        reviewers=[people["alice"], people["bob"]],
        adjudicators=[people["carol"]],
        reviews_per_row=2,
    )


def test_two_reviewers_disagree_an_adjudicator_resolves_and_the_export_round_trips(
    live_server, open_page, sheet, tmp_path, capsys
):
    base = live_server.url
    alice, bob = open_page(), open_page()
    sign_in(alice, base, "alice")
    sign_in(bob, base, "bob")

    measured = label_by_keyboard(alice, base, sheet, "c" * ROWS, notes={})
    measured += label_by_keyboard(
        bob, base, sheet, "i" + "c" * (ROWS - 1), notes={1: "hypothetical"}
    )
    assert Verdict.objects.count() == 2 * ROWS
    assert Verdict.objects.get(reviewer__username="bob", row__position=1).note == "hypothetical"

    # Navigation keys: back to row 6, forward to row 7, without saving anything.
    bob.goto(f"{base}/labelling/worksheets/{sheet.pk}/rows/7/")
    bob.keyboard.press("p")
    expect(bob.locator("#row-title")).to_contain_text(f"Row 6 of {ROWS}")
    bob.keyboard.press("n")
    expect(bob.locator("#row-title")).to_contain_text(f"Row 7 of {ROWS}")
    assert bob.url == f"{base}/labelling/worksheets/{sheet.pk}/rows/7/"

    carol = open_page(accept_downloads=True)
    sign_in(carol, base, "carol")
    carol.goto(f"{base}/labelling/worksheets/{sheet.pk}/")
    carol.get_by_role("link", name="Disagreements (1 open)").click()
    card = carol.locator("#dispute-1")
    expect(card).to_contain_text("hypothetical")
    card.get_by_label("Incorrect", exact=True).check()
    card.get_by_label("Reason").fill("a conditional, not a booking")
    card.get_by_role("button", name="Record final verdict").click()
    expect(carol.locator("#dispute-1")).to_contain_text("adjudicated: incorrect")

    carol.goto(f"{base}/labelling/worksheets/{sheet.pk}/")
    with carol.expect_download() as download:
        carol.get_by_role("link", name="Export label file").click()
    exported = tmp_path / "exported.json"
    download.value.save_as(exported)
    assert download.value.suggested_filename == "labels-airline-slice-travel.json"

    maria = open_page(accept_downloads=True)
    sign_in(maria, base, "maria")
    maria.goto(f"{base}/labelling/labels/import")
    maria.get_by_label("Label file").set_input_files(str(exported))
    maria.get_by_role("button", name="Import labels").click()
    expect(maria.get_by_text(f"Imported {ROWS} labels (0 already stored).")).to_be_visible()
    expect(maria.locator('tr[data-slot="all slots"]')).to_contain_text("6 / 1 / 0")
    with maria.expect_download() as again:
        maria.get_by_role("link", name="Download the label file").click()
    reexported = tmp_path / "reexported.json"
    again.value.save_as(reexported)
    assert reexported.read_bytes() == exported.read_bytes()
    assert Label.objects.count() == ROWS
    assert all(p.problems == [] for p in (alice, bob, carol, maria))

    plain = [m for m in measured if m[0] == 1]
    seconds = [m[2] for m in measured]
    with capsys.disabled():
        print(
            f"\n[labelling flow] {len(measured)} verdicts by keyboard. Without a note: "
            f"{plain[0][0]} keystroke; requests per verdict: "
            f"{sorted({len(m[1]) for m in measured})} (2 only for the last row); "
            f"seconds from key to next row: median {statistics.median(seconds):.3f}, "
            f"max {max(seconds):.3f}"
        )
    assert {m[0] for m in plain} == {1}
    for reviewer in (measured[:ROWS], measured[ROWS:]):
        # One htmx POST answers with the next row; the last one redirects to the worksheet.
        assert [m[1] for m in reviewer[:-1]] == [[("POST", "xhr")]] * (ROWS - 1)
        assert reviewer[-1][1] == [("POST", "xhr"), ("GET", "document")]


def test_a_second_tab_gets_a_conflict_message_instead_of_overwriting(live_server, open_page, sheet):
    base = live_server.url
    first = open_page()
    sign_in(first, base, "alice")
    second = first.context.new_page()
    url = f"{base}/labelling/worksheets/{sheet.pk}/rows/1/"
    first.goto(url)
    second.goto(url)
    first.keyboard.press("c")
    expect(first.locator("#row-title")).to_contain_text(f"Row 2 of {ROWS}")
    second.keyboard.press("i")
    alert = second.locator("#labeller .conflict")
    expect(alert).to_contain_text("Not saved: this verdict changed in another tab")
    expect(alert).to_contain_text("What is stored now: correct")
    assert Verdict.objects.get().verdict == "correct"


def test_labelling_works_without_javascript(live_server, open_page, sheet):
    base = live_server.url
    page = open_page(java_script_enabled=False)
    sign_in(page, base, "alice")
    page.goto(f"{base}/labelling/worksheets/{sheet.pk}/rows/1/")
    page.get_by_label("Note").fill("reads right")
    page.get_by_role("button", name="c Correct", exact=True).click()
    page.wait_for_url(f"{base}/labelling/worksheets/{sheet.pk}/rows/2/")
    expect(page.locator("#progress-text")).to_have_text(f"1 of {ROWS} judged")
    page.get_by_role("link", name="Previous").click()
    expect(page.locator("#mine")).to_contain_text("Your verdict: correct (version 1).")
    assert Verdict.objects.get().note == "reads right"

"""The aligned diff in a real browser, with the 62-message airline transcript, at a desktop
width (1400 px) and a phone's (390 px): rows line up, links land, the page stays short."""

from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

AIRLINE = (
    Path(__file__).resolve().parent.parent
    / "fixtures"
    / "site"
    / "airline-task3-trial0-62-messages.json"
)
DESKTOP, PHONE = 1400, 390
# The whole page with "changed turns only", the folded form above the result included.
HEIGHT_LIMIT = 3_000


def compiled(open_page, url: str, width: int, *, changed_only: bool):
    page = open_page(viewport={"width": width, "height": 900})
    page.goto(f"{url}/console")
    page.get_by_label("Transcript", exact=True).fill(AIRLINE.read_text(encoding="utf-8"))
    page.get_by_label("Schema", exact=True).select_option("travel")
    if changed_only:
        page.get_by_label("Changed turns only").check()
    page.get_by_role("button", name="Compile", exact=True).click()
    page.locator("#result .diff").wait_for()
    return page


def box(page, selector: str) -> dict:
    return page.locator(selector).bounding_box()


def in_view(page, found: dict) -> bool:
    """Whether the box lies wholly in the viewport (the page cannot always scroll a row
    near its end up to the top)."""
    return found["y"] >= 0 and found["y"] + found["height"] <= page.viewport_size["height"]


def page_height(page) -> int:
    return page.evaluate("document.documentElement.scrollHeight")


@pytest.mark.parametrize("width", [DESKTOP, PHONE])
def test_changed_turns_only_keeps_the_page_short(live_server, open_page, width):
    page = compiled(open_page, live_server.url, width, changed_only=True)
    assert page.locator("#result .diff-gap").count() == 12  # between 13 changed turns
    assert page_height(page) <= HEIGHT_LIMIT


@pytest.mark.parametrize("width", [DESKTOP, PHONE])
def test_a_compile_folds_the_form_and_keeps_the_state_header_and_banner(
    live_server, open_page, width
):
    page = compiled(open_page, live_server.url, width, changed_only=True)
    assert not page.locator("#compose").evaluate("details => details.open")
    assert page.get_by_role("button", name="Compile", exact=True).is_visible()
    assert page.locator("#row-added .header-facts li").count() == 5
    assert page.locator("#result .banner").first.is_visible()


@pytest.mark.parametrize("width", [DESKTOP, PHONE])
def test_a_retired_turn_keeps_its_row_and_its_text_opens_in_place(live_server, open_page, width):
    page = compiled(open_page, live_server.url, width, changed_only=True)
    original = page.locator("#row-22 .diff-original")
    retired = page.locator("#row-22 .diff-compiled")
    assert "superseded by turn 40" in retired.inner_text()
    left, right = original.bounding_box(), retired.bounding_box()
    if width == DESKTOP:
        assert abs(left["y"] - right["y"]) <= 3 and right["x"] > left["x"] + 500
    else:
        assert abs(right["y"] - (left["y"] + left["height"])) <= 3
    text = original.locator("details.payload pre")
    assert not text.is_visible()
    original.locator("details.payload summary").click()
    assert "Houston" in text.inner_text() and text.is_visible()


@pytest.mark.parametrize("width", [DESKTOP, PHONE])
def test_the_page_never_scrolls_sideways(live_server, open_page, width):
    page = compiled(open_page, live_server.url, width, changed_only=False)
    overflow = page.evaluate(
        "document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )
    assert overflow <= 0


@pytest.mark.parametrize("turn", [7, 22, 40, 59])
def test_on_a_desktop_each_turn_sits_beside_its_compiled_form(live_server, open_page, turn):
    page = compiled(open_page, live_server.url, DESKTOP, changed_only=False)
    left = box(page, f"#row-{turn} .diff-original .turn-no")
    right = box(page, f"#row-{turn} .diff-compiled .turn-no")
    assert abs(left["y"] - right["y"]) <= 3
    assert right["x"] > left["x"] + 500


@pytest.mark.parametrize("turn", [7, 22, 59])
def test_on_a_phone_the_compiled_form_follows_its_turn(live_server, open_page, turn):
    page = compiled(open_page, live_server.url, PHONE, changed_only=True)
    left = box(page, f"#row-{turn} .diff-original")
    right = box(page, f"#row-{turn} .diff-compiled")
    assert abs(right["y"] - (left["y"] + left["height"])) <= 3
    assert abs(left["x"] - right["x"]) <= 1


@pytest.mark.parametrize("width", [DESKTOP, PHONE])
def test_a_banner_line_jumps_to_the_turn_it_names(live_server, open_page, width):
    page = compiled(open_page, live_server.url, width, changed_only=False)
    page.locator("#result .banner a[href='#row-40']").first.click()
    assert page.url.endswith("#row-40")
    assert 0 <= box(page, "#row-40")["y"] <= 100


def test_a_state_fact_jumps_to_a_folded_turn(live_server, open_page):
    page = compiled(open_page, live_server.url, DESKTOP, changed_only=True)
    page.locator("#row-added a[href='#row-40']").first.click()
    gap = page.locator("#result .diff-gap", has=page.locator("#row-40"))
    assert "Turns 38–58 unchanged (21)" in gap.inner_text()
    assert page.url.endswith("#row-40")
    assert in_view(page, gap.bounding_box())


def test_a_retired_turn_links_to_the_turn_that_superseded_it(live_server, open_page):
    page = compiled(open_page, live_server.url, PHONE, changed_only=False)
    link = page.locator(".diff-retired .diff-compiled .mark-retired a").first
    target = link.get_attribute("href")
    retired = link.locator("xpath=ancestor::li[1]").get_attribute("id")
    assert target.startswith("#row-") and int(target[5:]) > int(retired[4:])  # a later turn
    link.click()
    assert in_view(page, box(page, f"{target} .diff-original"))


def test_ticking_changed_only_after_a_compile_folds_the_rows_in_place(live_server, open_page):
    page = compiled(open_page, live_server.url, DESKTOP, changed_only=False)
    assert page.locator("#result .diff-gap").count() == 0
    page.get_by_label("Changed turns only").check()
    page.locator("#result .diff-gap").first.wait_for()
    assert page.locator("#result .diff-row").count() == 14  # 13 changed turns, the header
    assert page.url == f"{live_server.url}/console"
    assert page.problems == []


def test_long_payloads_open_in_place_and_nothing_scrolls_inside_a_box(live_server, open_page):
    page = compiled(open_page, live_server.url, DESKTOP, changed_only=False)
    payload = page.locator("#row-27 .diff-original details.payload")
    payload.locator("summary").click()
    assert "HAT084" in payload.locator("pre").inner_text()
    boxed = page.evaluate(
        """() => [...document.querySelectorAll('#result .diff pre')]
             .filter(pre => pre.offsetParent && pre.scrollHeight > pre.clientHeight + 1)
             .length"""
    )
    assert boxed == 0


@pytest.mark.parametrize("width", [DESKTOP, PHONE])
def test_the_loops_bill_opens_to_its_chart_without_widening_the_page(live_server, open_page, width):
    page = compiled(open_page, live_server.url, width, changed_only=True)
    section = page.locator("#loop-bill")
    assert not section.locator("svg.call-bars").is_visible()
    section.locator("summary").click()
    assert section.locator("svg.call-bars").is_visible()
    assert section.locator("tr[data-call]").count() == 30  # one call per assistant turn
    overflow = page.evaluate(
        "document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )
    assert overflow <= 0

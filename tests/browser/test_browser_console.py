"""Flows that need a real browser: HTMX swaps, uploads, inert markup, dark mode, keyboard."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

RETIRED_MARK = "Retired: payment_method superseded by turn 12"


def compile_pasted(page, url: str, text: str, schema: str = "logistics") -> None:
    page.goto(f"{url}/console")
    page.get_by_label("Transcript", exact=True).fill(text)
    page.get_by_label("Schema", exact=True).select_option(schema)
    page.get_by_role("button", name="Compile", exact=True).click()


def test_pasting_a_real_transcript_marks_the_retired_turn_and_shows_the_state(
    live_server, page, retail_path
):
    compile_pasted(page, live_server.url, retail_path.read_text())
    retired = page.locator("#result li.diff-retired")
    retired.wait_for()
    assert retired.count() == 1
    assert RETIRED_MARK in retired.inner_text()
    row = page.locator('#result tr.state-row[data-slot="payment_method"]')
    assert "visa" in row.locator("td").first.inner_text()
    assert page.url == f"{live_server.url}/console"  # swapped in place by htmx
    assert page.problems == []


def test_uploading_a_file_compiles_it(live_server, page, retail_path):
    page.goto(f"{live_server.url}/console")
    page.get_by_label("…or upload a file").set_input_files(str(retail_path))
    page.get_by_label("Schema", exact=True).select_option("logistics")
    page.get_by_role("button", name="Compile", exact=True).click()
    page.locator("#result li.diff-retired").wait_for()
    assert "uploaded file retail-gift-card-visa.txt" in page.locator("#result .source").inner_text()


def test_markup_in_a_transcript_renders_inert(live_server, page):
    dialogs = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    text = (
        "user: <script>window.__pwned = 'script'</script> please help\n"
        "assistant: <img src=x onerror=\"window.__pwned = 'onerror'; alert(1)\"> sure\n"
        "user: <svg onload=alert(2)></svg> thanks"
    )
    compile_pasted(page, live_server.url, text, schema="")
    page.locator("#result .diff-row").first.wait_for()
    page.wait_for_timeout(300)  # give any injected handler the time to fire
    assert dialogs == []
    assert page.evaluate("window.__pwned") is None
    # the one svg is the loop's bill chart, drawn by the server
    assert page.locator("#result script, #result img, #result svg:not(.call-bars)").count() == 0
    assert "<script>window.__pwned = 'script'</script>" in page.locator("#result").inner_text()


def test_dark_mode_swaps_the_design_tokens(live_server, open_page):
    colours = {}
    for scheme in ("light", "dark"):
        page = open_page(color_scheme=scheme)
        page.goto(f"{live_server.url}/")
        colours[scheme] = page.evaluate(
            "() => [getComputedStyle(document.body).backgroundColor,"
            " getComputedStyle(document.body).color]"
        )
    assert colours["light"] == ["rgb(251, 251, 250)", "rgb(27, 31, 36)"]
    assert colours["dark"] == ["rgb(17, 20, 24)", "rgb(230, 232, 235)"]


def test_without_javascript_the_form_posts_and_renders(live_server, open_page, retail_path):
    page = open_page(java_script_enabled=False)
    compile_pasted(page, live_server.url, retail_path.read_text())
    page.wait_for_load_state()
    assert RETIRED_MARK in page.locator("#result li.diff-retired").inner_text()


def test_the_console_works_from_the_keyboard(live_server, page, retail_path):
    page.goto(f"{live_server.url}/console")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "Skip to content"
    page.get_by_label("Transcript", exact=True).fill(retail_path.read_text())
    page.get_by_label("Schema", exact=True).focus()
    page.keyboard.press("ArrowDown")  # none → coding
    page.get_by_label("Schema", exact=True).select_option("logistics")
    page.get_by_role("button", name="Compile", exact=True).focus()
    page.keyboard.press("Enter")
    page.locator("#result li.diff-retired").wait_for()


def test_an_example_is_one_click_away(live_server, page):
    page.goto(f"{live_server.url}/console")
    page.get_by_role("link", name="Write path: a coding agent declares the file").click()
    page.locator("#result tr.state-row").first.wait_for()
    assert page.url == f"{live_server.url}/console?example=write_path"
    assert page.get_by_label("Schema", exact=True).input_value() == "coding"
    assert "declared" in page.locator("#result table.state").inner_text()


def test_the_schema_note_follows_the_selected_schema(live_server, page):
    page.goto(f"{live_server.url}/console")
    none = page.locator('#schema-notes li[data-schema=""]')
    travel = page.locator('#schema-notes li[data-schema="travel"]')
    assert none.is_visible() and not travel.is_visible()
    page.get_by_label("Schema", exact=True).select_option("travel")
    assert travel.is_visible() and not none.is_visible()


def test_the_result_is_readable_on_a_phone(live_server, open_page, retail_path):
    page = open_page(viewport={"width": 375, "height": 740}, is_mobile=True)
    compile_pasted(page, live_server.url, retail_path.read_text())
    page.locator("#result li.diff-retired").wait_for()
    overflow = page.evaluate(
        "document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )
    assert overflow <= 0


def test_the_overviews_schema_tables_scroll_inside_their_cards_on_a_phone(live_server, open_page):
    page = open_page(viewport={"width": 390, "height": 740}, is_mobile=True)
    page.goto(f"{live_server.url}/")
    overflow = page.evaluate(
        "document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )
    assert overflow <= 0


def test_the_pages_break_no_rule_of_the_content_security_policy(live_server, page):
    for path in ("/", "/console?example=read_path", "/api/docs"):
        page.goto(f"{live_server.url}{path}")
        page.wait_for_load_state("networkidle")
    page.locator(".swagger-ui .info").wait_for()
    assert page.problems == []


TOO_LARGE = "Not compiled: the request body is "


def test_a_refused_compile_shows_why_and_the_next_compile_still_works(
    live_server, page, retail_path
):
    compile_pasted(page, live_server.url, "user: " + "x" * (300 * 1024))
    page.get_by_text(TOO_LARGE).wait_for()
    assert "the limit is 262144 bytes (256 KiB)" in page.locator("#result").inner_text()
    page.get_by_label("Transcript", exact=True).fill(retail_path.read_text())
    page.get_by_role("button", name="Compile", exact=True).click()
    page.locator("#result li.diff-retired").wait_for()
    assert not [p for p in page.problems if "targetError" in p]
    assert page.locator("#result").count() == 1


def test_without_javascript_a_refused_post_gets_the_page_with_why(live_server, open_page):
    page = open_page(java_script_enabled=False)
    compile_pasted(page, live_server.url, "user: " + "x" * (300 * 1024))
    page.wait_for_load_state()
    assert TOO_LARGE in page.locator("#result").inner_text()
    assert page.get_by_role("button", name="Compile", exact=True).is_visible()


def test_a_file_of_the_full_256_kib_uploads_and_compiles(live_server, page, tmp_path):
    upload = tmp_path / "full.txt"
    upload.write_bytes(b"user: hello\nassistant: " + b"x" * (256 * 1024 - 24) + b"\n")
    assert upload.stat().st_size == 256 * 1024
    page.goto(f"{live_server.url}/console")
    page.get_by_label("…or upload a file").set_input_files(str(upload))
    page.get_by_role("button", name="Compile", exact=True).click()
    source = page.locator("#result .source")
    source.wait_for()
    assert "uploaded file full.txt (262,144 bytes)" in source.inner_text()

"""A real headless Chromium (Debian's), driven by Python Playwright, against live_server."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "site"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="module")
def chromium():
    """One browser per test module.

    Playwright's sync API runs an event loop on this thread, which Django takes for an
    async context and so refuses database calls (the test database's flush after each
    test). While the browser is open, and only then, that check is switched off.
    """
    executable = shutil.which("chromium")
    if executable is None:
        pytest.fail("Debian's chromium is not installed: `bash scripts/test` installs it")
    from playwright.sync_api import sync_playwright

    before = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
            yield browser
            browser.close()
    finally:
        if before is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = before


@pytest.fixture
def open_page(chromium):
    """Pages in fresh contexts; every context is closed after the test."""
    contexts = []

    def open_page(**context_options):
        context = chromium.new_context(**context_options)
        contexts.append(context)
        page = context.new_page()
        page.set_default_timeout(15_000)
        page.problems = []
        page.on("console", lambda m: m.type == "error" and page.problems.append(m.text))
        page.on("pageerror", lambda e: page.problems.append(str(e)))
        return page

    yield open_page
    for context in contexts:
        context.close()


@pytest.fixture
def page(open_page):
    return open_page()


@pytest.fixture
def retail_path() -> Path:
    """A real tau-bench retail conversation in which the payment method changes."""
    return FIXTURES / "retail-gift-card-visa.txt"

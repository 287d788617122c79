"""Fixtures for the site's tests: clients, a fixture transcript, a real upstream."""

from __future__ import annotations

from pathlib import Path

import pytest
from ninja.testing import TestClient

from playground.api import api
from tests.chat_server import ChatServer

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "site"


@pytest.fixture
def api_client():
    """django-ninja's test client: calls the operations directly, without middleware."""
    return TestClient(api)


@pytest.fixture
def retail_text() -> str:
    """A real tau-bench retail conversation in which the payment method changes."""
    return (FIXTURES / "retail-gift-card-visa.txt").read_text(encoding="utf-8")


@pytest.fixture
def airline_messages_path() -> Path:
    return FIXTURES / "airline-task3-trial0-62-messages.json"


@pytest.fixture
def upstream():
    with ChatServer(reply=lambda body: "Understood.") as server:
        yield server


@pytest.fixture
def proxy_on(settings, upstream):
    """The proxy configured with a server-side key, pointed at the loopback upstream."""
    settings.CONTEXTGC_UPSTREAM_KEY = "server-side-key"
    settings.CONTEXTGC_UPSTREAM_BASE = upstream.base_url
    settings.CONTEXTGC_UPSTREAM_TIMEOUT = 5.0
    return upstream

"""The conflicts banner's title, the footer's claim and the API's example body."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from playground.api_schemas import README_EXAMPLE

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}


def test_conflicts_without_a_declaration_are_not_called_declared(client, airline_messages_path):
    data = {
        "transcript": airline_messages_path.read_text(encoding="utf-8"),
        "entity_schema": "travel",
        "mode": "compact",
        "declaration_policy": "flag",
        "value_policy": "flag",
    }
    part = client.post("/console", data, **HTMX).content.decode()
    assert "<h3>Conflicts between values read from the transcript.</h3>" in part
    assert "declared and said" not in part


def test_the_console_footer_says_nothing_is_stored(client):
    assert "Nothing you compile here is stored." in client.get("/console").content.decode()


def test_the_overview_footer_does_not_claim_nothing_is_stored(client):
    assert "Nothing you compile here is stored." not in client.get("/").content.decode()


def test_the_compile_example_in_the_openapi_document_is_the_readmes_curl_body(client):
    document = client.get("/api/openapi.json").json()
    example = document["components"]["schemas"]["CompileIn"]["example"]
    assert example == README_EXAMPLE
    readme = (Path(__file__).parents[2] / "README.md").read_text(encoding="utf-8")
    curl = re.search(r"-d '(\{\"entity_schema\": \"logistics\".*?\})'", readme).group(1)
    assert json.loads(curl) == example


def test_the_openapi_example_compiles(client):
    response = client.post(
        "/api/compile", data=json.dumps(README_EXAMPLE), content_type="application/json"
    )
    assert response.status_code == 200
    assert response.json()["telemetry"]["retired_turn_indices"] == [1, 2]

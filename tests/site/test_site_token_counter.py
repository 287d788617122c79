"""One token counter: the API and the console count the same way and say which way."""

from __future__ import annotations

import json
import re

import pytest

from playground import service
from tests.site.console_form import HTMX, form_data

pytestmark = pytest.mark.django_db


def compile_api(client, **body):
    return client.post("/api/compile", data=json.dumps(body), content_type="application/json")


def console_tokens(client, text: str, **fields) -> tuple[int, int]:
    part = client.post("/console", form_data(text, **fields), **HTMX).content.decode()
    found = re.search(
        r'<span class="number">(\d+)</span> → <span class="number">(\d+)</span>', part
    )
    return int(found.group(1)), int(found.group(2))


def test_the_api_says_it_counted_chars_over_four_by_default(client, retail_text):
    body = compile_api(client, transcript=retail_text).json()
    assert body["token_counter"] == "chars/4"
    assert body["telemetry"]["token_estimator"] == "chars/4"


def test_the_api_counts_exactly_when_asked(client, retail_text):
    body = compile_api(client, transcript=retail_text, token_counter="exact").json()
    assert body["token_counter"] == "o200k_base"
    assert body["telemetry"]["token_estimator"].startswith("o200k_base (rs-bpe ")


def test_the_api_refuses_exact_counts_the_server_cannot_give(client, retail_text, monkeypatch):
    monkeypatch.setattr(service, "exact_counter", lambda: None)
    response = compile_api(client, transcript=retail_text, token_counter="exact")
    assert response.status_code == 422
    assert response.json() == {
        "error": "exact_counter_unavailable",
        "message": "exact token counts need the rs-bpe package (the library's 'exact' extra), "
        "which this server does not have: leave token_counter out, or ask for 'chars/4'",
    }


@pytest.mark.parametrize("counter", ["chars/4", "exact"])
def test_the_api_and_the_console_give_one_transcript_the_same_counts(client, airline_text, counter):
    tel = compile_api(
        client, transcript=airline_text, entity_schema="travel", token_counter=counter
    ).json()["telemetry"]
    expected = (tel["raw_token_count"], tel["compiled_token_count"])
    assert console_tokens(client, airline_text, token_counter=counter) == expected


def test_the_console_counts_as_the_api_does_by_default(client, airline_text):
    tel = compile_api(client, transcript=airline_text, entity_schema="travel").json()["telemetry"]
    assert console_tokens(client, airline_text) == (
        tel["raw_token_count"],
        tel["compiled_token_count"],
    )


def test_the_console_offers_exact_counts_only_where_the_extra_is_installed(client, monkeypatch):
    assert (
        '<option value="exact">exact: o200k_base</option>'
        in client.get("/console").content.decode()
    )
    monkeypatch.setattr("playground.forms.exact_counter", lambda: None)
    page = client.get("/console").content.decode()
    assert '<option value="exact">' not in page
    assert "Exact counts need the library's 'exact' extra (rs-bpe)." in page

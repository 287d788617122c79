"""The agent loop's bill in the console: the figures the library's billing module gives
for the pasted transcript, raw history beside compiled, under the chosen price model."""

from __future__ import annotations

import re

import pytest

from compiler import (
    CharEstimator,
    PriceModel,
    bill,
    compile_messages,
    formats,
    load_schema,
    message_to_dict,
    replay,
)
from tests.site.console_form import HTMX, form_data

pytestmark = pytest.mark.django_db


def library_bills(text: str, model: PriceModel):
    """The raw and compiled bills, straight from the library, as a loop over ``text``."""
    history = [message_to_dict(m) for m in formats(text).messages]
    schema = load_schema("travel")

    def compiled(prompt):
        return compile_messages(prompt, mode="compact", schema=schema)[0]

    counter = CharEstimator()
    return bill(replay(history), model, counter), bill(replay(history, compiled), model, counter)


def shown(part: str, name: str) -> float:
    return float(re.search(rf'data-bill="{name}" data-value="([-0-9.e]+)"', part).group(1))


def test_the_bill_shows_the_billing_modules_totals_for_the_transcript(client, airline_text):
    part = client.post("/console", form_data(airline_text), **HTMX).content.decode()
    raw, compiled = library_bills(airline_text, PriceModel.openai(0.1))
    assert (shown(part, "raw"), shown(part, "compiled")) == (raw.cost, compiled.cost)
    assert shown(part, "saved") == pytest.approx(raw.cost - compiled.cost)
    assert "Priced as <strong>openai@0.1</strong>" in part


def test_the_bill_shows_each_call_raw_beside_compiled(client, airline_text):
    part = client.post("/console", form_data(airline_text), **HTMX).content.decode()
    raw, compiled = library_bills(airline_text, PriceModel.openai(0.1))
    rows = re.findall(
        r'<tr data-call="\d+" data-raw="([-0-9.e]+)" data-compiled="([-0-9.e]+)">', part
    )
    expected = [(r.cost, c.cost) for r, c in zip(raw.calls, compiled.calls, strict=True)]
    assert [(float(r), float(c)) for r, c in rows] == expected
    assert part.count('class="cost raw"') == part.count('class="cost compiled"') == len(expected)


def test_the_bill_follows_the_chosen_price_model(client, airline_text):
    data = form_data(airline_text, bill_model="anthropic")
    part = client.post("/console", data, **HTMX).content.decode()
    raw, compiled = library_bills(airline_text, PriceModel.anthropic())
    assert (shown(part, "raw"), shown(part, "compiled")) == (raw.cost, compiled.cost)
    assert "Priced as <strong>anthropic</strong>" in part


def test_the_bill_comes_folded(client, airline_text):
    part = client.post("/console", form_data(airline_text), **HTMX).content.decode()
    assert '<details class="bill-section" id="loop-bill">' in part

"""The two pages: the overview, and the console with its HTMX partials."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils.html import escape

from playground.examples import examples
from playground.figures import shipped_figures
from tests.site.console_form import HTMX
from tests.site.console_form import form_data as console_form

pytestmark = pytest.mark.django_db

RETIRED_MARK = 'Retired: payment_method superseded by <a href="#row-12">turn 12</a>'


def form_data(text: str, **fields) -> dict:
    return console_form(text, **{"entity_schema": "logistics", **fields})


class Controls(HTMLParser):
    """Form controls of a page and the ids its labels point at."""

    def __init__(self):
        super().__init__()
        self.controls, self.labelled = [], set()

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "label" and attrs.get("for"):
            self.labelled.add(attrs["for"])
        if tag in ("input", "select", "textarea") and attrs.get("type") != "hidden":
            self.controls.append(attrs.get("id"))


# --- the overview -------------------------------------------------------------------------


def test_the_overview_shows_every_shipped_schemas_measured_figures(client):
    page = client.get("/").content.decode()
    for schema in shipped_figures():
        assert f'id="schema-{schema.name}"' in page
        for slot in schema.slots:
            assert escape(slot.precision_note) in page
            if slot.observations is not None:
                assert f'<td class="number">{slot.observations}</td>' in page


def test_the_overview_shows_what_the_read_path_example_does_now(client):
    page = client.get("/").content.decode()
    assert "turn 11: payment_method superseded by turn 12" in page
    assert "<code>payment_method = visa</code>" in page


def test_the_overview_shows_the_library_and_the_api(client):
    page = client.get("/").content.decode()
    assert "compile_messages(" in page
    assert "curl -X POST http://testserver/api/compile" in page


# --- the console: page and partials -------------------------------------------------------


def test_the_console_labels_every_form_control(client):
    parser = Controls()
    parser.feed(client.get("/console").content.decode())
    assert parser.controls, "the console has form controls"
    assert set(parser.controls) <= parser.labelled


def test_the_console_warns_that_no_state_is_tracked_without_a_schema(client):
    page = client.get("/console").content.decode()
    assert "No schema: no state is tracked." in page
    for schema in shipped_figures():
        assert f'<li data-schema="{schema.name}">{schema.note}.</li>' in page


def test_a_form_post_without_javascript_renders_the_whole_page_with_the_result(client, retail_text):
    response = client.post("/console", form_data(retail_text))
    page = response.content.decode()
    assert response.status_code == 200
    assert page.startswith("<!doctype html>")
    assert RETIRED_MARK in page
    assert '<tr class="state-row" data-slot="payment_method">' in page


def test_a_page_with_a_result_comes_with_the_form_folded(client, retail_text):
    page = client.post("/console", form_data(retail_text)).content.decode()
    assert '<details class="compose" id="compose">' in page


def test_the_empty_console_comes_with_the_form_open_and_more_options_folded(client):
    page = client.get("/console").content.decode()
    assert '<details class="compose" id="compose" open>' in page
    assert '<details class="more-options field-wide">' in page


def test_more_options_come_open_when_one_of_them_is_set(client, retail_text):
    data = form_data(retail_text, teach_protocol="on")
    page = client.post("/console", data).content.decode()
    assert '<details class="more-options field-wide" open>' in page


def test_an_htmx_post_gets_only_the_result_partial(client, retail_text):
    response = client.post("/console", form_data(retail_text), **HTMX)
    part = response.content.decode().strip()
    assert response.status_code == 200
    assert part.startswith('<section id="result"')
    assert part.endswith("</section>")
    assert "<html" not in part and "<form" not in part
    assert RETIRED_MARK in part


def test_the_result_marks_each_compacted_payload_with_its_size(client, retail_text):
    part = client.post("/console", form_data(retail_text), **HTMX).content.decode()
    assert re.search(r"Compacted \(json_\w+\): \d+ → \d+ characters", part)


def test_the_result_shows_each_slots_history_and_provenance(client, retail_text):
    part = client.post("/console", form_data(retail_text), **HTMX).content.decode()
    assert (
        '<code>Mastercard</code> at <a href="#row-11">turn 11</a>, inferred; '
        'superseded by <a href="#row-12">turn 12</a>'
    ) in part
    assert '<code>visa</code> at <a href="#row-12">turn 12</a>, inferred</li>' in part


def test_the_result_counts_tokens_exactly_when_asked_and_the_extra_is_installed(
    client, retail_text
):
    data = form_data(retail_text, token_counter="exact")
    part = client.post("/console", data, **HTMX).content.decode()
    assert "exact: o200k_base (rs-bpe" in part


def test_the_result_shows_the_compiled_messages_as_the_model_receives_them(client, retail_text):
    part = client.post("/console", form_data(retail_text), **HTMX).content.decode()
    assert escape('[ACTIVE_AGENT_STATE]\n  - payment_method = "visa"') in part


def test_a_compile_without_a_schema_says_no_state_is_tracked(client, retail_text):
    part = client.post("/console", form_data(retail_text, entity_schema=""), **HTMX).content
    assert b"No schema: no state is tracked." in part
    assert b"No state: no schema was chosen." in part


def test_the_write_path_example_shows_conflicts_and_malformed_blocks(client):
    part = client.get("/console?example=write_path", **HTMX).content.decode()
    assert "Conflicts between what was declared and said." in part
    assert "Malformed or partly dropped state blocks." in part
    assert "declared" in part


def test_an_example_link_returns_the_workspace_partial_prefilled(client):
    response = client.get("/console?example=airline", **HTMX)
    part = response.content.decode().strip()
    assert part.startswith('<div id="workspace"')
    assert '<option value="travel" selected>' in part
    assert escape(examples()["airline"].transcript.splitlines()[0]) in part
    assert "Turns retired" in part


def test_a_history_restore_gets_the_whole_page(client):
    response = client.get(
        "/console?example=airline", HTTP_HX_HISTORY_RESTORE_REQUEST="true", **HTMX
    )
    assert response.content.decode().startswith("<!doctype html>")


def test_every_example_link_keeps_a_real_href(client):
    page = client.get("/console").content.decode()
    for slug in examples():
        assert f'href="/console?example={slug}" hx-get="/console?example={slug}"' in page


def test_an_unknown_example_is_404(client):
    assert client.get("/console?example=nope").status_code == 404


def test_an_uploaded_file_is_compiled(client, retail_text):
    upload = SimpleUploadedFile("chat.txt", retail_text.encode(), content_type="text/plain")
    response = client.post("/console", form_data("", upload=upload), **HTMX)
    part = response.content.decode()
    assert response.status_code == 200
    assert f"uploaded file chat.txt ({len(retail_text.encode()):,} bytes)" in part
    assert RETIRED_MARK in part


def test_a_blank_upload_does_not_hide_the_pasted_text(client, retail_text):
    upload = SimpleUploadedFile("blank.txt", b"   \n", content_type="text/plain")
    response = client.post("/console", form_data(retail_text, upload=upload), **HTMX)
    part = response.content.decode()
    assert response.status_code == 200
    assert f"pasted text ({len(retail_text):,} characters)" in part


def test_an_upload_that_is_not_utf8_is_refused_by_the_form(client):
    upload = SimpleUploadedFile("chat.txt", b"\xff\xfe\x00user: hi", content_type="text/plain")
    response = client.post("/console", form_data("", upload=upload))
    assert response.status_code == 422
    assert b"The file is not UTF-8 text." in response.content


def test_an_empty_form_asks_for_a_transcript(client):
    response = client.post("/console", form_data(""))
    assert response.status_code == 422
    assert b"Paste a transcript or upload a file." in response.content


def test_an_htmx_post_of_an_invalid_form_says_what_to_change_in_the_result(client):
    upload = SimpleUploadedFile("chat.txt", b"\xff\xfe", content_type="text/plain")
    response = client.post("/console", form_data("", upload=upload), **HTMX)
    part = response.content.decode()
    assert response.status_code == 422
    assert part.strip().startswith('<section id="result"')
    assert "<li>…or upload a file: The file is not UTF-8 text.</li>" in part


def test_an_unparseable_transcript_shows_line_numbered_warnings(client):
    response = client.post("/console", form_data("notes without turns"), **HTMX)
    part = response.content.decode()
    assert response.status_code == 422
    assert "Not compiled: no recognisable turn (line 1, column 1)" in part
    assert "<li>line 1: text without any turn ignored (line 1)</li>" in part


def test_the_console_shares_the_clients_rate_limit(client, retail_text, settings):
    settings.CONTEXTGC_RATE_LIMIT = 1
    client.post("/console", form_data(retail_text), **HTMX)
    response = client.post("/console", form_data(retail_text), **HTMX)
    assert response.status_code == 429
    assert int(response["Retry-After"]) >= 1
    assert b"Not compiled: more than 1 requests in a minute" in response.content


def test_an_oversized_htmx_post_gets_the_result_partial_with_the_reason(client):
    response = client.post("/console", form_data("user: " + "x" * (300 * 1024)), **HTMX)
    part = response.content.decode()
    assert response.status_code == 413
    assert part.strip().startswith('<section id="result" class="result"')  # what the button swaps
    assert "<h2>Not compiled: the request body is " in part
    assert "the limit is 262144 bytes (256 KiB)</h2>" in part
    assert "<html" not in part


def test_an_oversized_post_without_javascript_gets_the_whole_page_with_the_reason(client):
    response = client.post("/console", form_data("user: " + "x" * (300 * 1024)))
    page = response.content.decode()
    assert response.status_code == 413
    assert page.startswith("<!doctype html>")
    assert '<form id="compile-form"' in page
    assert '<a href="/console" aria-current="page">Console</a>' in page
    assert '<section id="result" class="result"' in page
    assert "<h2>Not compiled: the request body is " in page


def test_a_file_of_exactly_256_kib_is_compiled(client):
    text = "user: hello\n" + "assistant: " + "x" * (256 * 1024 - 24) + "\n"
    assert len(text.encode()) == 256 * 1024
    upload = SimpleUploadedFile("big.txt", text.encode(), content_type="text/plain")
    response = client.post("/console", form_data("", upload=upload), **HTMX)
    assert response.status_code == 200
    assert "uploaded file big.txt (262,144 bytes)" in response.content.decode()


def test_a_file_over_256_kib_is_refused_by_the_form(client):
    upload = SimpleUploadedFile("big.txt", b"user: " + b"x" * (256 * 1024), "text/plain")
    response = client.post("/console", form_data("", upload=upload), **HTMX)
    assert response.status_code == 422
    assert "The file is larger than 256 KiB." in response.content.decode()


def test_pasted_text_over_the_cap_within_the_form_allowance_gets_the_413_banner(client):
    response = client.post("/console", form_data("user: " + "x" * (256 * 1024)), **HTMX)
    part = response.content.decode()
    assert response.status_code == 413
    assert part.strip().startswith('<section id="result" class="result"')
    assert "the limit is 262144 bytes (256 KiB)</h2>" in part


SURROGATE_TRANSCRIPTS = {
    "content": '[{"role":"user","content":"\\ud800 hi"}]',
    "role": '[{"role":"us\\ud800er","content":"hi"}]',
    "name": '[{"role":"user","name":"n\\ud800","content":"hi"}]',
    "tool call name": (
        '[{"role":"user","content":"hi"},{"role":"assistant","content":null,"tool_calls":'
        '[{"id":"c1","type":"function","function":{"name":"f\\ud800","arguments":"{}"}}]},'
        '{"role":"tool","tool_call_id":"c1","content":"r\\ud800"}]'
    ),
    "content part": '[{"role":"user","content":[{"type":"text","text":"t\\ud800"},'
    '{"type":"image_url","image_url":{"url":"u\\ud800"}}]}]',
}


@pytest.mark.parametrize("where", SURROGATE_TRANSCRIPTS)
@pytest.mark.parametrize("headers", [HTMX, {}], ids=["htmx", "page"])
def test_a_lone_surrogate_escape_is_shown_replaced(client, where, headers):
    text = SURROGATE_TRANSCRIPTS[where]
    response = client.post("/console", form_data(text, entity_schema=""), **headers)
    shown = response.content.decode()
    assert response.status_code == 200
    assert "\ufffd" in shown or "\\ud800" in shown  # replaced, or quoted in a warning
    assert "<h2>Result</h2>" in shown


def test_a_lone_surrogate_in_the_text_is_shown_as_the_replacement_character(client):
    text = SURROGATE_TRANSCRIPTS["content"]
    part = client.post("/console", form_data(text), **HTMX).content.decode()
    assert '<pre class="diff-text">\ufffd hi</pre>' in part


@pytest.mark.parametrize("where", SURROGATE_TRANSCRIPTS)
def test_the_download_keeps_a_lone_surrogate_as_its_escape(client, where):
    text = SURROGATE_TRANSCRIPTS[where]
    response = client.post("/console?download=json", form_data(text, entity_schema=""))
    assert response.status_code == 200
    assert b"\\ud800" in response.content
    json.loads(response.content)


def test_the_download_reads_back_as_the_same_lone_surrogate(client):
    text = SURROGATE_TRANSCRIPTS["content"]
    response = client.post("/console?download=json", form_data(text, entity_schema=""))
    assert b'"content": "\\ud800 hi"' in response.content
    assert json.loads(response.content)["compiled_messages"][0]["content"] == "\ud800 hi"


def test_content_in_parts_is_shown_part_by_part_as_the_model_receives_it(client):
    text = json.dumps(
        [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "MULTIPART_TEXT_HERE <b>"},
                    {"type": "image_url", "image_url": {"url": "https://x/IMG"}},
                ],
            },
            {"role": "assistant", "content": "ok"},
        ]
    )
    part = client.post("/console", form_data(text, entity_schema=""), **HTMX).content.decode()
    row = part[part.index('id="row-0"') :]
    compiled = row[row.index('class="diff-cell diff-compiled"') : row.index("</li>")]
    assert '<pre class="diff-text">MULTIPART_TEXT_HERE &lt;b&gt;</pre>' in compiled
    image = escape('{"type": "image_url", "image_url": {"url": "https://x/IMG"}}')
    assert f'<pre class="diff-text">{image}</pre>' in compiled
    assert "(no text)" not in compiled


def test_markup_in_a_transcript_is_shown_as_text(client):
    text = (
        "user: <script>alert('x')</script> and <img src=x onerror=alert(1)>\n"
        'assistant: <a href="javascript:alert(2)">click</a>'
    )
    part = client.post("/console", form_data(text), **HTMX).content.decode()
    assert "<script>alert" not in part
    assert "<img src=x" not in part
    assert '<a href="javascript' not in part
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in part
    assert "&lt;img src=x onerror=alert(1)&gt;" in part


def test_the_download_is_the_apis_json_for_the_same_form(client, retail_text):
    response = client.post("/console?download=json", form_data(retail_text))
    body = json.loads(response.content)
    assert response["Content-Disposition"] == 'attachment; filename="contextgc-compiled.json"'
    assert sorted(body) == ["compiled_messages", "parse_warnings", "telemetry", "token_counter"]
    assert body["telemetry"]["retired_turn_indices"] == [11]


def test_pages_send_a_strict_content_security_policy(client):
    policy = client.get("/console")["Content-Security-Policy"]
    assert "script-src 'self'" in policy
    assert "style-src 'self'" in policy
    assert "unsafe-inline" not in policy
    assert "frame-ancestors 'none'" in policy


def test_pages_over_https_send_hsts_outside_debug(client):
    response = client.get("/", secure=True)
    assert response["Strict-Transport-Security"] == "max-age=31536000"
    assert response["X-Frame-Options"] == "DENY"
    assert response["X-Content-Type-Options"] == "nosniff"


def test_htmx_comes_from_django_htmx_not_a_vendored_copy(client):
    page = client.get("/console").content.decode()
    assert '<script src="/static/django_htmx/htmx-2.min.js" defer></script>' in page


def test_compiled_output_pasted_back_marks_the_turn_the_compiler_retired(client):
    header = '[ACTIVE_AGENT_STATE]\n  - delivery_address = "900 Pine Avenue" (turn 1 [inferred])'
    messages = [
        {"role": "system", "content": header},
        {"role": "user", "content": "Hi, I need a delivery."},
        {"role": "user", "content": "Ship to 900 Pine Avenue, Suite 12."},
        {"role": "assistant", "content": "Done."},
        {"role": "user", "content": "Sorry, ship to 77 Elm Street after all."},
        {"role": "assistant", "content": "Changed."},
        {"role": "user", "content": "thanks"},
    ]
    part = client.post("/console", form_data(json.dumps(messages)), **HTMX).content.decode()
    # numbered as read: the header is message 0, set aside and not listed as a turn
    assert 'id="row-0"' not in part
    retired = re.search(r'<li class="diff-row diff-retired" id="row-(\d+)"', part)
    assert retired and messages[int(retired.group(1))]["content"].startswith("Ship to 900 Pine")
    assert 'Retired: delivery_address superseded by <a href="#row-4">turn 4</a>' in part

"""The JSON API, through django-ninja's test client and Django's client.

Every success is compared whole against the library run in-process on the same
input (only the wall-clock ``compile_time_ms`` differs); every error is
compared whole against the body a caller must be able to act on.
"""

from __future__ import annotations

import json
import re

import pytest
from django.db import OperationalError

import compiler
from compiler import compile_messages, compile_transcript, list_schemas, load_schema, schema_summary
from compiler.protocol.instruction import render_instruction
from playground.models import RateCounter

pytestmark = pytest.mark.django_db

SPEC_CURL_BODY = {
    "transcript": "user: deliver to Tower B\nuser: actually use Gate 2, code 4921",
    "mode": "compact",
    "invariants": ["refunds over 500 need supervisor approval"],
}


def without_clock(body: dict) -> dict:
    """The body with the one figure that is wall-clock time replaced by a marker."""
    telemetry = {**body["telemetry"], "compile_time_ms": "<clock>"}
    return {**body, "telemetry": telemetry}


def library_body(text: str, **options) -> dict:
    out, tel, warnings = compile_transcript(text, **options)
    body = {"compiled_messages": out, "telemetry": tel, "parse_warnings": warnings}
    return without_clock({**body, "token_counter": "chars/4"})


def post(client, path: str, body, **extra):
    data = body if isinstance(body, str) else json.dumps(body)
    return client.post(path, data=data, content_type="application/json", **extra)


# --- POST /api/compile: the product ---------------------------------------------------


def test_it_answers_the_specifications_curl_example_as_written(client):
    response = post(client, "/api/compile", SPEC_CURL_BODY)
    assert response.status_code == 200
    assert without_clock(response.json()) == library_body(
        SPEC_CURL_BODY["transcript"], mode="compact", invariants=SPEC_CURL_BODY["invariants"]
    )


def test_it_compiles_a_real_transcript_under_a_schema_through_the_ninja_client(
    api_client, retail_text
):
    response = api_client.post(
        "/compile", json={"transcript": retail_text, "entity_schema": "logistics"}
    )
    assert response.status_code == 200
    expected = library_body(retail_text, schema=load_schema("logistics"))
    assert without_clock(response.json()) == expected
    assert expected["telemetry"]["retired_turns"] == [
        {
            "turn": 11,
            "role": "assistant",
            "reason": "payment_method superseded by turn 12",
            "superseded_by": {"payment_method": 12},
        }
    ]


def test_it_compiles_a_message_array(api_client, airline_messages_path):
    messages = json.loads(airline_messages_path.read_text())
    response = api_client.post(
        "/compile", json={"messages": messages, "entity_schema": "travel", "mode": "compact"}
    )
    out, tel = compile_messages(messages, schema=load_schema("travel"))
    assert response.status_code == 200
    assert without_clock(response.json()) == without_clock(
        {
            "compiled_messages": out,
            "telemetry": tel,
            "parse_warnings": [],
            "token_counter": "chars/4",
        }
    )


def test_it_passes_every_option_through_to_the_compiler(api_client, retail_text):
    options = {
        "mode": "cache_friendly",
        "invariants": ["refunds go to the original payment method"],
        "recall_query": "Mastercard",
        "teach_protocol": True,
        "declaration_policy": "reject",
        "value_policy": "off",
    }
    response = api_client.post(
        "/compile", json={"transcript": retail_text, "entity_schema": "logistics", **options}
    )
    assert response.status_code == 200
    assert without_clock(response.json()) == library_body(
        retail_text, schema=load_schema("logistics"), **options
    )


def test_it_passes_cache_marks_through_and_marks_the_prefixs_end(api_client, retail_text):
    options = {"mode": "cache_friendly", "cache_marks": True}
    response = api_client.post(
        "/compile", json={"transcript": retail_text, "entity_schema": "logistics", **options}
    )
    assert response.status_code == 200
    body = response.json()
    assert body["compiled_messages"][-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    assert without_clock(body) == library_body(
        retail_text, schema=load_schema("logistics"), **options
    )


def test_it_marks_nothing_for_the_cache_unless_asked(api_client, retail_text):
    body = api_client.post("/compile", json={"transcript": retail_text}).json()
    assert "cache_control" not in json.dumps(body["compiled_messages"])


def test_it_refuses_cache_marks_that_are_not_a_json_boolean(api_client, retail_text):
    response = api_client.post("/compile", json={"transcript": retail_text, "cache_marks": "yes"})
    assert response.status_code == 422
    assert response.json()["error"] == "invalid_option"


def test_the_documented_cache_marks_example_compiles_as_the_library_does(client):
    document = client.get("/api/openapi.json").json()
    examples = document["paths"]["/api/compile"]["post"]["requestBody"]["content"][
        "application/json"
    ]["examples"]
    example = examples["cache_marks"]["value"]
    field = document["components"]["schemas"]["CompileIn"]["properties"]["cache_marks"]
    assert (field["type"], field["default"], example["cache_marks"]) == ("boolean", False, True)
    response = post(client, "/api/compile", example)
    assert response.status_code == 200
    options = {k: v for k, v in example.items() if k not in ("transcript", "entity_schema")}
    assert without_clock(response.json()) == library_body(
        example["transcript"], schema=load_schema(example["entity_schema"]), **options
    )
    assert "cache_control" in json.dumps(response.json()["compiled_messages"][-1])


def test_it_says_what_it_did_in_a_header_and_forbids_caching(client, retail_text):
    response = post(client, "/api/compile", {"transcript": retail_text})
    tel = response.json()["telemetry"]
    assert response["Cache-Control"] == "no-store"
    assert response["X-ContextGC-Telemetry"] == (
        f"raw={tel['raw_token_count']}; compiled={tel['compiled_token_count']}; "
        f"saved={tel['compression_ratio_pct']}%; compile_ms={tel['compile_time_ms']}"
    )
    assert re.fullmatch(
        r"raw=\d+; compiled=\d+; saved=\d+(\.\d)?%; compile_ms=\d+(\.\d+)?",
        response["X-ContextGC-Telemetry"],
    )


def test_the_header_shows_how_much_a_grown_context_grew(client):
    body = {"transcript": "user: hi", "teach_protocol": True, "entity_schema": "logistics"}
    response = post(client, "/api/compile", body)
    tel = response.json()["telemetry"]
    assert tel["context_grew"] and tel["compression_ratio_pct"] == 0.0
    assert response["X-ContextGC-Telemetry"] == (
        f"raw={tel['raw_token_count']}; compiled={tel['compiled_token_count']}; saved=0.0%; "
        f"grew={tel['token_growth']}; compile_ms={tel['compile_time_ms']}"
    )


def test_it_stores_nothing_but_the_callers_rate_count(client, retail_text):
    post(client, "/api/compile", {"transcript": retail_text, "entity_schema": "logistics"})
    assert [row.hits for row in RateCounter.objects.all()] == [1]


# --- limits and errors: status and the whole body --------------------------------------


def test_it_refuses_a_body_over_256_kib_with_413(client):
    body = json.dumps({"transcript": "user: " + "x" * (256 * 1024)})
    response = post(client, "/api/compile", body)
    assert response.status_code == 413
    assert response.json() == {
        "error": "body_too_large",
        "message": f"the request body is {len(body)} bytes; the limit is 262144 bytes (256 KiB)",
        "limit_bytes": 262144,
    }


def test_it_accepts_a_body_of_exactly_256_kib(client):
    filler = 256 * 1024 - len(json.dumps({"transcript": "user: "}))
    body = json.dumps({"transcript": "user: " + "x" * filler})
    assert len(body) == 256 * 1024
    assert post(client, "/api/compile", body).status_code == 200


def test_it_answers_an_unparseable_transcript_with_422_and_line_numbered_warnings(api_client):
    response = api_client.post("/compile", json={"transcript": "just some notes\nno turns here"})
    assert response.status_code == 422
    assert response.json() == {
        "error": "unparseable_transcript",
        "message": "no recognisable turn (line 1, column 1)",
        "line": 1,
        "column": 1,
        "parse_warnings": ["line 1: text without any turn ignored (lines 1-2)"],
    }


def test_it_answers_broken_json_inside_a_transcript_with_its_position(api_client):
    response = api_client.post("/compile", json={"transcript": '[{"role": "user", "content": }]'})
    assert response.status_code == 422
    body = response.json()
    assert body["error"] == "unparseable_transcript"
    assert body["parse_warnings"][0].startswith("line 1: not valid JSON")


@pytest.mark.parametrize("depth", [600, 900, 980])
def test_it_compiles_json_nested_as_deep_as_json_reads_it(client, depth):
    # the compiler raised RecursionError at a depth of about 500: a 1.2 KB paste was a 500
    nested = "[" * depth + "]" * depth
    transcript = '[{"role": "user", "content": "hi"}, {"role": "assistant", "content": "ok", '
    transcript += f'"meta": {nested}}}]'
    messages = '{"messages": ' + transcript + "}"  # written out: json.dumps here would recurse
    response = post(client, "/api/compile", messages)
    assert response.status_code == 200, response.content[:200]
    # (read without json: decoding the answer here would pass the stack's limit too)
    assert re.search(rb'"messages_in": ?2\b', response.content)
    response = post(client, "/api/compile", json.dumps({"transcript": transcript}))
    if depth < 980:
        assert response.status_code == 200, response.content[:200]
        assert response.json()["telemetry"]["messages_in"] == 2
    else:  # past what the decoder reads under the site's stack: a 422 that says why
        assert response.status_code == 422
        assert "nested too deeply" in response.json()["parse_warnings"][0]


def test_it_names_an_unknown_schema(api_client):
    response = api_client.post("/compile", json={"transcript": "user: hi", "entity_schema": "x"})
    assert response.status_code == 422
    assert response.json() == {
        "error": "unknown_schema",
        "message": "unknown schema 'x'; shipped: coding, logistics, travel",
        "field": "entity_schema",
    }


def test_it_never_reads_a_schema_from_a_path(api_client):
    response = api_client.post(
        "/compile", json={"transcript": "user: hi", "entity_schema": "/etc/passwd"}
    )
    assert response.status_code == 422
    assert response.json()["message"] == (
        "unknown schema '/etc/passwd'; shipped: coding, logistics, travel"
    )


@pytest.mark.parametrize(
    ("field", "given", "problem"),
    [
        ("mode", "fast", "Input should be 'compact' or 'cache_friendly'"),
        ("value_policy", "maybe", "Input should be 'flag', 'reject' or 'off'"),
    ],
)
def test_it_names_an_invalid_choice(api_client, field, given, problem):
    response = api_client.post("/compile", json={"transcript": "user: hi", field: given})
    assert response.status_code == 422
    assert response.json() == {
        "error": "invalid_option",
        "message": f"{field}: {problem}",
        "fields": [{"field": field, "problem": problem}],
    }


def test_it_names_an_unknown_option_instead_of_ignoring_it(api_client):
    response = api_client.post("/compile", json={"transcript": "user: hi", "mdoe": "compact"})
    assert response.status_code == 422
    assert response.json() == {
        "error": "invalid_option",
        "message": "mdoe: Extra inputs are not permitted",
        "fields": [{"field": "mdoe", "problem": "Extra inputs are not permitted"}],
    }


def test_it_refuses_an_invariant_that_is_not_text(api_client):
    response = api_client.post("/compile", json={"transcript": "user: hi", "invariants": [3]})
    assert response.status_code == 422
    assert response.json() == {
        "error": "invalid_option",
        "message": "invariants.0: Input should be a valid string",
        "fields": [{"field": "invariants.0", "problem": "Input should be a valid string"}],
    }


def test_it_answers_a_body_that_is_not_json_with_400(client):
    response = post(client, "/api/compile", "{not json")
    assert response.status_code == 400
    assert response.json() == {
        "error": "invalid_json",
        "message": "the request body is not valid JSON (Expecting property name enclosed in "
        "double quotes: line 1 column 2 (char 1))",
    }


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_it_answers_nan_or_infinity_with_400_not_a_null_it_was_never_sent(client, constant):
    body = '{"messages": [{"role": "user", "content": "a", "x": ' + constant + "}]}"
    response = post(client, "/api/compile", body)
    assert response.status_code == 400
    assert response.json() == {
        "error": "invalid_json",
        "message": f"the request body is not valid JSON ({constant} is not a JSON value)",
    }


@pytest.mark.parametrize("path", ["/api/compile", "/api/protocol-instruction"])
def test_it_says_the_body_is_empty(client, path):
    response = post(client, path, "")
    assert response.status_code == 400
    assert response.json() == {
        "error": "empty_body",
        "message": "the request body is empty: send a JSON object",
    }


@pytest.mark.parametrize("path", ["/api/compile", "/api/protocol-instruction"])
def test_it_asks_for_a_length_when_the_body_came_chunked(client, path):
    # WSGI servers pass a chunked body on without CONTENT_LENGTH: Django reads it as empty.
    response = post(client, path, "", HTTP_TRANSFER_ENCODING="chunked")
    assert response.status_code == 411
    assert response.json() == {
        "error": "length_required",
        "message": "Content-Length required: send the body with a Content-Length header, "
        "not with Transfer-Encoding: chunked",
    }
    assert response["Cache-Control"] == "no-store"


def test_it_requires_a_transcript_or_messages(api_client):
    response = api_client.post("/compile", json={"mode": "compact"})
    assert response.status_code == 422
    assert response.json() == {
        "error": "invalid_request",
        "message": "give exactly one of 'transcript' (text in any format) or 'messages' (an array)",
    }


def test_it_refuses_both_a_transcript_and_messages(api_client):
    response = api_client.post(
        "/compile", json={"transcript": "user: hi", "messages": [{"role": "user", "content": "x"}]}
    )
    assert response.status_code == 422
    assert response.json()["error"] == "invalid_request"


def test_it_refuses_an_empty_message_array(api_client):
    response = api_client.post("/compile", json={"messages": []})
    assert response.status_code == 422
    assert response.json() == {
        "error": "no_messages",
        "message": "'messages' is empty: there is nothing to compile",
    }


def test_it_refuses_messages_that_are_not_objects(api_client):
    response = api_client.post("/compile", json={"messages": [1, {"role": "user", "content": "x"}]})
    assert response.status_code == 422
    assert response.json() == {
        "error": "invalid_request",
        "message": "messages.0: Input should be a valid dictionary",
        "fields": [{"field": "messages.0", "problem": "Input should be a valid dictionary"}],
    }


def test_it_limits_each_client_and_says_when_to_retry(client, settings):
    settings.CONTEXTGC_RATE_LIMIT = 2
    statuses = [post(client, "/api/compile", {"transcript": "user: hi"}).status_code for _ in "ab"]
    response = post(client, "/api/compile", {"transcript": "user: hi"})
    assert statuses == [200, 200]
    assert response.status_code == 429
    retry = int(response["Retry-After"])
    assert 1 <= retry <= 60
    assert response.json() == {
        "error": "rate_limited",
        "message": f"more than 2 requests in a minute from this client; retry in {retry} s",
        "limit_per_minute": 2,
        "retry_after": retry,
    }


def test_it_counts_clients_apart(client, settings):
    settings.CONTEXTGC_RATE_LIMIT = 1
    first = post(client, "/api/compile", {"transcript": "user: hi"}, REMOTE_ADDR="10.0.0.1")
    other = post(client, "/api/compile", {"transcript": "user: hi"}, REMOTE_ADDR="10.0.0.2")
    again = post(client, "/api/compile", {"transcript": "user: hi"}, REMOTE_ADDR="10.0.0.1")
    assert [first.status_code, other.status_code, again.status_code] == [200, 200, 429]


# --- the other endpoints ---------------------------------------------------------------


def test_it_lists_the_shipped_schemas_with_their_measurement(api_client):
    response = api_client.get("/schemas")
    assert response.status_code == 200
    schemas = response.json()["schemas"]
    assert [s["name"] for s in schemas] == list_schemas()
    for shown in schemas:
        summary = schema_summary(shown["name"])
        assert shown["slots"] == summary["slots"]
        assert shown["measured"] == summary["measured"]
        assert shown["measurement"] == summary["measurement"]
        observed = summary["measurement"]["slots"]
        assert [f["observations"] for f in shown["slot_figures"]] == [
            observed[slot]["observations"] for slot in summary["slots"]
        ]


def test_it_marks_an_unmeasured_slot_as_unmeasured(api_client):
    coding = next(s for s in api_client.get("/schemas").json()["schemas"] if s["name"] == "coding")
    failing = next(f for f in coding["slot_figures"] if f["slot"] == "failing_test")
    precision = schema_summary("coding")["measurement"]["precision"]["failing_test"]
    assert failing["measured"] is False
    assert failing["precision_note"] == precision


@pytest.mark.parametrize("name", ["read_path_example", "write_path_example"])
def test_each_example_produces_state_under_the_schema_it_names(api_client, name):
    example = api_client.get("/example").json()[name]
    response = api_client.post("/compile", json=example)
    tel = response.json()["telemetry"]
    assert response.status_code == 200
    assert example["entity_schema"] in list_schemas()
    assert set(tel["active_state_slots"]) <= set(load_schema(example["entity_schema"]).slot_names)
    assert tel["active_state_slots"] != {}
    assert tel["retired_turn_count"] >= 1


def test_the_write_path_example_declares_its_state(api_client):
    example = api_client.get("/example").json()["write_path_example"]
    tel = api_client.post("/compile", json=example).json()["telemetry"]
    assert example["teach_protocol"] is True
    assert tel["declarations"]["asserted"] >= 1
    assert {fact["provenance"] for fact in tel["state"].values()} == {"declared"}


def test_the_examples_say_where_they_came_from(api_client):
    sources = api_client.get("/example").json()["sources"]
    assert "tau-bench" in sources["read_path_example"]
    assert "nebius/SWE-agent-trajectories" in sources["write_path_example"]


def test_it_renders_the_protocol_instruction_for_a_schema(api_client):
    response = api_client.post("/protocol-instruction", json={"entity_schema": "coding"})
    slots = load_schema("coding").slot_names
    text = render_instruction(slots)
    assert response.status_code == 200
    assert response.json() == {"instruction": text, "slots": list(slots), "chars": len(text)}


def test_it_renders_the_protocol_instruction_for_given_slots(api_client):
    response = api_client.post("/protocol-instruction", json={"slots": ["seat", " seat", "meal"]})
    text = render_instruction(("seat", "meal"))
    assert response.json() == {"instruction": text, "slots": ["seat", "meal"], "chars": len(text)}


def test_it_answers_the_slot_names_the_instruction_uses(api_client):
    body = {"slots": ["Delivery Address", "!!!", "deliveryAddress", "seat-number"]}
    response = api_client.post("/protocol-instruction", json=body)
    text = render_instruction(("delivery_address", "seat_number"))
    assert response.status_code == 200
    assert response.json() == {
        "instruction": text,
        "slots": ["delivery_address", "seat_number"],
        "chars": len(text),
    }
    assert "Tracked slots (the only keys to use): delivery_address, seat_number." in text


@pytest.mark.parametrize("slots", [["!!!"], ["", ""], [" ", "--"]])
def test_it_refuses_slots_that_normalise_to_nothing(api_client, slots):
    response = api_client.post("/protocol-instruction", json={"slots": slots})
    assert response.status_code == 422
    assert response.json() == {
        "error": "no_slots",
        "message": "no slot in 'slots' has a letter or digit: a slot name is kept as snake_case "
        "letters and digits (e.g. 'Delivery Address' is delivery_address)",
    }


def test_it_asks_for_slots_before_rendering_an_instruction(api_client):
    response = api_client.post("/protocol-instruction", json={})
    assert response.status_code == 422
    assert response.json() == {
        "error": "no_slots",
        "message": "name an 'entity_schema' or list 'slots': the instruction names the keys an "
        "agent may declare",
    }


def test_it_reports_health_with_the_database(api_client):
    response = api_client.get("/health")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "compiler": compiler.__version__, "database": "ok"}


def test_it_reports_an_unreachable_database_as_unavailable_without_its_host(
    api_client, monkeypatch
):
    def refuse():
        raise OperationalError('connection to server at "10.0.0.7", port 5432 failed')

    monkeypatch.setattr("playground.outage.connection.cursor", refuse)
    response = api_client.get("/health")
    assert response.status_code == 503
    assert response.json() == {
        "status": "unavailable",
        "compiler": compiler.__version__,
        "database": "unavailable",
    }


def test_it_reads_a_lone_surrogate_escape_as_the_standard_library_does(client):
    body = '{"transcript": "user: caf\\ud800 order\\nassistant: ok"}'
    response = post(client, "/api/compile", body)
    assert response.status_code == 200
    assert response.json()["compiled_messages"][0] == {"role": "user", "content": "caf\ud800 order"}


def test_it_documents_every_endpoint_in_openapi(client):
    paths = client.get("/api/openapi.json").json()["paths"]
    assert sorted(paths) == [
        "/api/compile",
        "/api/example",
        "/api/health",
        "/api/health/live",
        "/api/protocol-instruction",
        "/api/schemas",
    ]
    mode = client.get("/api/openapi.json").json()["components"]["schemas"]["CompileIn"]
    assert mode["properties"]["mode"]["enum"] == ["compact", "cache_friendly"]


def test_the_docs_page_loads_swagger_from_this_site(client):
    page = client.get("/api/docs").content.decode()
    assert "/static/ninja/swagger-ui-bundle.js" in page
    assert "cdn" not in page.lower()


def test_it_answers_a_number_too_large_inside_a_json_transcript_with_422_at_its_line(api_client):
    transcript = (
        '[{"role": "user", "content": "hi"},\n{"role": "user", "content": "x", "n": 1e999}]'
    )
    response = api_client.post("/compile", json={"transcript": transcript})
    assert response.status_code == 422
    body = response.json()
    assert (body["error"], body["line"], body["column"]) == ("unparseable_transcript", 2, 39)
    assert body["parse_warnings"][0] == (
        "line 2: not valid JSON (1e999 is too large to read: it would be Infinity, column 39); "
        "read as text"
    )

"""The edges of the HTTP contract: numbers JSON cannot hold, media types, compressed
bodies, TRACE, and an OpenAPI document that says exactly which bodies are accepted."""

from __future__ import annotations

import gzip
import json

import jsonschema_rs
import pytest

pytestmark = pytest.mark.django_db

CHAT = "/v1/chat/completions"
TRANSCRIPT = json.dumps({"transcript": "user: hi\nassistant: hello"})
OVERFLOWING = [
    '{"messages": [{"role": "user", "content": "x", "amount": 1e999}]}',
    '{"messages": [{"role": "assistant", "content": null, "tool_calls": [{"id": "c", "type": '
    '"function", "function": {"name": "pay", "arguments": {"amount": -2.5e400}}}]}]}',
]


def post(client, path: str, body: str | bytes, content_type="application/json", **extra):
    return client.post(path, data=body, content_type=content_type, **extra)


def openapi(client) -> dict:
    return client.get("/api/openapi.json").json()


# --- numbers --------------------------------------------------------------------------


@pytest.mark.parametrize("body", OVERFLOWING)
def test_a_number_too_large_for_json_is_refused_as_nan_is(client, body):
    response = post(client, "/api/compile", body)
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_json"
    assert "too large to read: it would be Infinity" in response.json()["message"]


def test_the_proxy_refuses_a_number_too_large_for_json(client, proxy_on):
    body = '{"model": "m", "messages": [{"role": "user", "content": "x"}], "top_p": 1e999}'
    response = post(client, CHAT, body)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_json"
    assert proxy_on.requests == []  # nothing went upstream


def test_a_small_or_long_but_finite_number_still_reads(client):
    body = '{"messages": [{"role": "user", "content": "x", "tiny": 1e-999, "big": 1.5e308}]}'
    assert post(client, "/api/compile", body).status_code == 200


# --- media types and encodings ----------------------------------------------------------


@pytest.mark.parametrize(
    "content_type",
    ["text/plain", "application/x-www-form-urlencoded", "application/xml", "text/json"],
)
@pytest.mark.parametrize("path", ["/api/compile", "/api/protocol-instruction"])
def test_a_body_that_is_not_declared_json_is_a_415(client, path, content_type):
    body = TRANSCRIPT if path == "/api/compile" else '{"slots": ["seat"]}'
    response = post(client, path, body, content_type=content_type)
    assert response.status_code == 415
    assert response.json() == {
        "error": "unsupported_media_type",
        "message": f"the body is sent as {content_type!r}; "
        "send JSON with Content-Type: application/json",
    }


def test_a_body_without_a_content_type_is_a_415(client):
    response = client.generic("POST", "/api/compile", TRANSCRIPT.encode(), content_type="")
    assert response.status_code == 415
    assert response.json()["message"].startswith("the body is sent without a Content-Type")


@pytest.mark.parametrize(
    "content_type", ["application/json; charset=utf-8", "Application/JSON", "application/ld+json"]
)
def test_json_with_a_charset_or_a_json_suffix_is_read(client, content_type):
    assert post(client, "/api/compile", TRANSCRIPT, content_type=content_type).status_code == 200


def test_the_proxy_answers_415_in_openai_shape(client, proxy_on):
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]})
    response = post(client, CHAT, body, content_type="text/plain")
    assert response.status_code == 415
    assert response.json()["error"]["code"] == "unsupported_media_type"
    assert proxy_on.requests == []


@pytest.mark.parametrize("path", ["/api/compile", CHAT])
def test_a_compressed_body_is_a_415_naming_the_encoding(client, proxy_on, path):
    body = gzip.compress(TRANSCRIPT.encode())
    response = post(client, path, body, HTTP_CONTENT_ENCODING="gzip")
    assert response.status_code == 415
    found = response.json() if path != CHAT else response.json()["error"]
    message = "Content-Encoding 'gzip' is not accepted: send the body uncompressed"
    assert (found.get("error") or found.get("code"), found["message"]) == (
        "unsupported_content_encoding",
        message,
    )


def test_an_identity_content_encoding_is_read(client):
    response = post(client, "/api/compile", TRANSCRIPT, HTTP_CONTENT_ENCODING="identity")
    assert response.status_code == 200


# --- TRACE --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "allow"),
    [("/api/compile", "POST"), ("/api/health", "GET, HEAD"), ("/api/health/live", "GET, HEAD")],
)
def test_trace_is_a_json_405_naming_the_allowed_methods(client, path, allow):
    response = client.generic("TRACE", path)
    assert response.status_code == 405
    assert response["Allow"] == allow
    assert response.json()["error"] == "method_not_allowed"


def test_trace_on_the_proxy_is_a_json_405(client):
    response = client.generic("TRACE", CHAT)
    assert response.status_code == 405
    assert response.json()["error"]["code"] == "method_not_allowed"


# --- the OpenAPI document -------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "accepted"),
    [
        ({"transcript": "user: hi"}, True),
        ({"messages": [{"role": "user", "content": "hi"}]}, True),
        ({"transcript": None, "messages": [{"role": "user", "content": "hi"}]}, True),
        ({"transcript": "user: hi", "messages": [{"role": "user", "content": "hi"}]}, False),
        ({}, False),
        ({"transcript": None, "messages": None}, False),
        ({"messages": []}, False),
        ({"transcript": "user: hi", "teach_protocol": "false"}, False),
        ({"transcript": "user: hi", "entity_schema": "nope"}, False),
        ({"transcript": "user: hi", "entity_schema": ""}, True),
    ],
)
def test_the_document_accepts_a_compile_body_exactly_when_the_api_does(client, body, accepted):
    schema = openapi(client)["components"]["schemas"]["CompileIn"]
    assert jsonschema_rs.is_valid(schema, body) is accepted
    status = post(client, "/api/compile", json.dumps(body)).status_code
    assert (status == 200) is accepted


@pytest.mark.parametrize(
    ("body", "accepted"),
    [
        ({"entity_schema": "travel"}, True),
        ({"slots": ["Delivery Address"]}, True),
        ({"entity_schema": None, "slots": None}, False),
        ({"entity_schema": "", "slots": []}, False),
        ({"slots": ["!!!"]}, False),
        ({"entity_schema": "nope", "slots": ["seat"]}, False),
    ],
)
def test_the_document_accepts_an_instruction_body_exactly_when_the_api_does(client, body, accepted):
    schema = openapi(client)["components"]["schemas"]["InstructionIn"]
    assert jsonschema_rs.is_valid(schema, body) is accepted
    status = post(client, "/api/protocol-instruction", json.dumps(body)).status_code
    assert (status == 200) is accepted


def test_every_operation_documents_the_errors_it_can_answer(client):
    paths = openapi(client)["paths"]
    documented = {
        (path, method): sorted(operation["responses"])
        for path, methods in paths.items()
        for method, operation in methods.items()
    }
    body = ["200", "400", "405", "411", "413", "415", "422"]
    assert documented == {
        ("/api/compile", "post"): sorted([*body, "429", "503"]),
        ("/api/protocol-instruction", "post"): body,
        ("/api/schemas", "get"): ["200", "405"],
        ("/api/example", "get"): ["200", "405"],
        ("/api/health", "get"): ["200", "405", "503"],
        ("/api/health/live", "get"): ["200", "405"],
    }

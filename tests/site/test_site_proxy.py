"""The optional proxy, against a real upstream server on loopback."""

from __future__ import annotations

import json

import openai
import pytest

from compiler import compile_messages, load_schema
from tests.chat_server import ChatServer, completion, events

pytestmark = pytest.mark.django_db

HISTORY = [  # the specification's first example: the address changes once
    {
        "role": "user",
        "content": "Deliver order ORD-1 to 402 Oak Street, Apt 5, Springfield, IL 62704. "
        "Pay with my credit card.",
    },
    {"role": "assistant", "content": "Confirmed: 402 Oak Street, Apt 5, on the credit card."},
    {
        "role": "user",
        "content": "Actually reroute to 900 Pine Avenue, Suite 12, Chicago, IL 60601.",
    },
    {"role": "assistant", "content": "Rerouted to 900 Pine Avenue, Suite 12."},
    {"role": "user", "content": "Thanks."},
]
DISABLED = (
    "the proxy is off: the operator has not set CONTEXTGC_UPSTREAM_KEY. This is not a model "
    "response. POST /api/compile compiles a history without calling any model."
)


def chat(client, body, **extra):
    data = body if isinstance(body, str) else json.dumps(body)
    return client.post("/v1/chat/completions", data=data, content_type="application/json", **extra)


def test_it_is_off_with_503_and_says_why_without_a_server_side_key(client, settings):
    settings.CONTEXTGC_UPSTREAM_KEY = None
    response = chat(client, {"messages": HISTORY}, HTTP_AUTHORIZATION="Bearer caller-key")
    assert response.status_code == 503
    assert response.json() == {
        "error": {"message": DISABLED, "type": "proxy_disabled", "code": "proxy_disabled"}
    }


def test_it_forwards_the_compiled_history_with_the_server_key_only(client, proxy_on):
    options = {"entity_schema": "logistics", "mode": "compact"}
    body = {"model": "m-1", "messages": HISTORY, "contextgc": options}
    response = chat(client, body, HTTP_AUTHORIZATION="Bearer caller-key")
    compiled, tel = compile_messages(HISTORY, schema=load_schema("logistics"))
    (seen,) = proxy_on.seen
    assert response.status_code == 200
    assert response.json() == completion(1, seen.body, "Understood.")
    assert seen.path == "/v1/chat/completions"
    assert seen.headers["authorization"] == "Bearer server-side-key"
    assert "caller-key" not in json.dumps(seen.headers)
    assert seen.body == {"model": "m-1", "messages": compiled}
    assert tel["retired_turn_indices"] == [1, 2]


def test_it_compiles_for_a_loop_when_the_caller_names_no_mode(client, proxy_on):
    # a proxy sits in a loop that re-sends its history: cache_friendly keeps its bill lowest
    body = {"model": "m-1", "messages": HISTORY, "contextgc": {"entity_schema": "logistics"}}
    chat(client, body)
    compiled = compile_messages(HISTORY, schema=load_schema("logistics"), mode="cache_friendly")
    assert proxy_on.requests[0]["messages"] == compiled[0]


def test_it_uses_the_configured_model_when_the_caller_names_none(client, proxy_on, settings):
    settings.CONTEXTGC_UPSTREAM_MODEL = "configured-model"
    chat(client, {"messages": HISTORY})
    assert proxy_on.requests[0]["model"] == "configured-model"


def test_it_says_what_it_did_in_the_telemetry_header(client, proxy_on):
    response = chat(client, {"messages": HISTORY})
    _, tel = compile_messages(HISTORY)
    assert response["X-ContextGC-Telemetry"].startswith(
        f"raw={tel['raw_token_count']}; compiled={tel['compiled_token_count']}; "
    )
    assert response["Cache-Control"] == "no-store"


def test_it_passes_a_server_sent_event_stream_through_unchanged(client, proxy_on):
    response = chat(client, {"model": "m", "messages": HISTORY, "stream": True})
    streamed = b"".join(response.streaming_content)
    assert response.status_code == 200
    assert response["Content-Type"] == "text/event-stream"
    assert response["X-ContextGC-Telemetry"].startswith("raw=")
    assert streamed == b"".join(events(1, proxy_on.requests[0], "Understood."))
    assert proxy_on.requests[0]["stream"] is True


def test_it_answers_a_body_that_is_not_json_with_400(client, proxy_on):
    response = chat(client, "model=m&messages=hi")
    assert response.status_code == 400
    assert response.json() == {
        "error": {
            "message": "the request body is not JSON",
            "type": "invalid_request_error",
            "code": "invalid_json",
        }
    }
    assert proxy_on.requests == []


def test_it_answers_nan_with_400_rather_than_sending_it_on(client, proxy_on):
    response = chat(client, '{"messages": [{"role": "user", "content": "a", "x": NaN}]}')
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_json"
    assert proxy_on.requests == []


@pytest.mark.parametrize("depth", [950, 5000])
def test_it_answers_a_deeply_nested_body_without_a_500(client, proxy_on, depth):
    deep = "[" * depth + "]" * depth
    # under a key the chat API takes (one it does not take is dropped before sending)
    body = '{"messages": [{"role": "assistant", "content": "a", "audio": ' + deep + "}]}"
    response = chat(client, body)
    if depth > 1024:  # deeper than a request body is read
        assert response.status_code == 400
        assert response.json()["error"]["message"] == "the request body is nested too deeply"
    else:  # read, compiled and sent on whole
        assert response.status_code == 200
        assert json.dumps(proxy_on.seen[0].body).count("[") >= depth


def test_it_says_the_body_is_empty(client, proxy_on):
    response = chat(client, "")
    assert response.status_code == 400
    assert response.json()["error"] == {
        "message": "the request body is empty: send a JSON object",
        "type": "invalid_request_error",
        "code": "empty_body",
    }


def test_it_asks_for_a_length_when_the_body_came_chunked(client, proxy_on):
    response = chat(client, "", HTTP_TRANSFER_ENCODING="chunked")
    assert response.status_code == 411
    assert response.json()["error"]["code"] == "length_required"
    assert response.json()["error"]["message"].startswith("Content-Length required")
    assert proxy_on.requests == []


def test_it_answers_a_json_array_with_400(client, proxy_on):
    response = chat(client, [{"role": "user", "content": "hi"}])
    assert response.status_code == 400
    assert response.json()["error"]["message"] == "the request body is not a JSON object"


@pytest.mark.parametrize("body", [{"model": "m"}, {"messages": []}, {"messages": "hi"}])
def test_it_answers_a_body_without_messages_with_422(client, proxy_on, body):
    response = chat(client, body)
    assert response.status_code == 422
    assert response.json() == {
        "error": {
            "message": "'messages' must be a non-empty array",
            "type": "invalid_request_error",
            "code": "no_messages",
        }
    }
    assert proxy_on.requests == []


def test_it_answers_messages_none_of_which_is_a_message_with_422(client, proxy_on):
    response = chat(client, {"messages": [1, "two"]})
    assert response.status_code == 422
    assert response.json()["error"] == {
        "message": "no item of 'messages' is a message object",
        "type": "invalid_request_error",
        "code": "no_messages",
    }


def test_it_names_an_unknown_compile_option(client, proxy_on):
    response = chat(client, {"messages": HISTORY, "contextgc": {"messages": [], "speed": 1}})
    assert response.status_code == 422
    assert response.json()["error"]["message"] == "unknown contextgc option(s): messages, speed"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"entity_schema": ["travel"]}, "entity_schema: Input should be a valid string"),
        ({"entity_schema": {}}, "entity_schema: Input should be a valid string"),
        ({"invariants": 5}, "invariants: Input should be a valid list"),
        ({"invariants": [1]}, "invariants.0: Input should be a valid string"),
        ({"recall_query": 5}, "recall_query: Input should be a valid string"),
        ({"teach_protocol": "maybe"}, "teach_protocol: Input should be a valid boolean"),
        ({"mode": "fast"}, "mode: Input should be 'compact' or 'cache_friendly'"),
        ({"cached_rate": 1.5}, "cached_rate: Input should be less than or equal to 1"),
        ({"cached_rate": "0.1"}, "cached_rate: Input should be a valid number"),
    ],
)
def test_it_validates_compile_options_as_the_api_does(client, proxy_on, options, message):
    response = chat(client, {"messages": HISTORY, "contextgc": options})
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "invalid_option"
    assert response.json()["error"]["message"].startswith(f"'contextgc' options: {message}")
    assert proxy_on.requests == []


@pytest.mark.parametrize("flag", ["false", 0, "true"])
def test_it_refuses_a_teach_protocol_that_is_not_a_json_boolean(client, proxy_on, flag):
    # never read as true: a boolean written as a string or a number is named and refused
    options = {"entity_schema": "logistics", "teach_protocol": flag}
    response = chat(client, {"messages": HISTORY, "contextgc": options})
    assert response.status_code == 422
    assert "teach_protocol: Input should be a valid boolean" in response.json()["error"]["message"]
    assert proxy_on.requests == []


def test_it_reads_a_false_teach_protocol_as_false(client, proxy_on):
    options = {"entity_schema": "logistics", "teach_protocol": False}
    chat(client, {"messages": HISTORY, "contextgc": options})
    forwarded = proxy_on.requests[0]["messages"]
    logistics = load_schema("logistics")
    assert forwarded == compile_messages(HISTORY, schema=logistics, mode="cache_friendly")[0]
    assert "[STATE_PROTOCOL]" not in json.dumps(forwarded)
    taught = compile_messages(HISTORY, schema=load_schema("logistics"), teach_protocol=True)[0]
    assert "[STATE_PROTOCOL]" in json.dumps(taught)


@pytest.mark.parametrize("options", [[], 0, "logistics"])
def test_it_refuses_contextgc_that_is_not_an_object(client, proxy_on, options):
    response = chat(client, {"messages": HISTORY, "contextgc": options})
    assert response.status_code == 422
    assert response.json()["error"]["message"] == "'contextgc' must be an object of options"


def test_it_names_an_unknown_schema(client, proxy_on):
    response = chat(client, {"messages": HISTORY, "contextgc": {"entity_schema": "nope"}})
    assert response.status_code == 422
    assert response.json()["error"] == {
        "message": "unknown schema 'nope'; shipped: coding, logistics, travel",
        "type": "invalid_request_error",
        "code": "unknown_schema",
    }


def test_it_answers_an_upstream_error_status_with_502(client, proxy_on):
    proxy_on.status = 500
    response = chat(client, {"messages": HISTORY})
    assert response.status_code == 502
    assert response.json() == {
        "error": {
            "message": "the upstream answered HTTP 500",
            "type": "upstream_error",
            "code": "upstream_error",
        }
    }


def test_it_answers_an_upstream_that_is_not_listening_with_502(client, settings):
    with ChatServer() as gone:
        base = gone.base_url
    settings.CONTEXTGC_UPSTREAM_KEY, settings.CONTEXTGC_UPSTREAM_BASE = "k", base
    response = chat(client, {"messages": HISTORY})
    assert response.status_code == 502
    assert response.json()["error"]["message"].startswith("the upstream could not be reached:")


def test_it_answers_an_upstream_answer_that_is_not_json_with_502(client, proxy_on):
    proxy_on.raw = b"<html>gateway</html>"
    response = chat(client, {"messages": HISTORY})
    assert response.status_code == 502
    assert response.json()["error"]["message"] == "the upstream's answer is not a JSON object"


def test_it_answers_a_failed_stream_with_502_before_streaming(client, proxy_on):
    proxy_on.status = 503
    response = chat(client, {"messages": HISTORY, "stream": True})
    assert response.status_code == 502
    assert response.json()["error"]["message"] == "the upstream answered HTTP 503"


def test_it_refuses_a_body_over_256_kib_with_413(client, proxy_on):
    body = json.dumps({"messages": [{"role": "user", "content": "x" * (256 * 1024)}]})
    response = chat(client, body)
    assert response.status_code == 413
    assert response.json() == {
        "error": {
            "message": f"the request body is {len(body)} bytes; the limit is 262144 bytes "
            "(256 KiB)",
            "type": "invalid_request_error",
            "code": "body_too_large",
        }
    }


def test_it_shares_the_callers_rate_limit(client, proxy_on, settings):
    settings.CONTEXTGC_RATE_LIMIT = 1
    chat(client, {"messages": HISTORY})
    response = chat(client, {"messages": HISTORY})
    assert response.status_code == 429
    assert response.json()["error"]["code"] == "rate_limited"
    assert int(response["Retry-After"]) >= 1
    assert len(proxy_on.requests) == 1


@pytest.mark.parametrize("method", ["get", "put", "delete"])
def test_it_refuses_another_method_in_openais_shape_with_allow(client, proxy_on, method):
    response = getattr(client, method)("/v1/chat/completions")
    assert response.status_code == 405
    assert response["Allow"] == "POST"
    assert response.json() == {
        "error": {
            "message": f"{method.upper()} is not allowed on /v1/chat/completions; use POST",
            "type": "invalid_request_error",
            "code": "method_not_allowed",
        }
    }
    assert proxy_on.requests == []


# --- CORS: only for the operator's allowlist ---------------------------------------------


def test_it_sends_no_cors_headers_without_an_allowlist(client, proxy_on, settings):
    settings.CORS_ALLOWED_ORIGINS = []
    response = chat(client, {"messages": HISTORY}, HTTP_ORIGIN="https://app.example")
    assert "Access-Control-Allow-Origin" not in response


def test_it_answers_a_preflight_from_an_allowed_origin(client, settings):
    settings.CORS_ALLOWED_ORIGINS = ["https://app.example"]
    response = client.options(
        "/v1/chat/completions",
        HTTP_ORIGIN="https://app.example",
        HTTP_ACCESS_CONTROL_REQUEST_METHOD="POST",
        HTTP_ACCESS_CONTROL_REQUEST_HEADERS="content-type",
    )
    assert response.status_code == 200
    assert response["Access-Control-Allow-Origin"] == "https://app.example"
    assert response["Access-Control-Allow-Headers"] == "accept, content-type"
    assert "Access-Control-Allow-Credentials" not in response


def test_it_allows_an_allowed_origin_and_exposes_the_telemetry_header(client, proxy_on, settings):
    settings.CORS_ALLOWED_ORIGINS = ["https://app.example"]
    response = chat(client, {"messages": HISTORY}, HTTP_ORIGIN="https://app.example")
    assert response["Access-Control-Allow-Origin"] == "https://app.example"
    assert "x-contextgc-telemetry" in response["Access-Control-Expose-Headers"].lower()


def test_it_allows_no_other_origin(client, proxy_on, settings):
    settings.CORS_ALLOWED_ORIGINS = ["https://app.example"]
    response = chat(client, {"messages": HISTORY}, HTTP_ORIGIN="https://evil.example")
    assert "Access-Control-Allow-Origin" not in response


def test_the_api_follows_the_same_allowlist(client, settings):
    settings.CORS_ALLOWED_ORIGINS = ["https://app.example"]
    allowed = client.get("/api/health", HTTP_ORIGIN="https://app.example")
    other = client.get("/api/health", HTTP_ORIGIN="https://evil.example")
    assert allowed["Access-Control-Allow-Origin"] == "https://app.example"
    assert "Access-Control-Allow-Origin" not in other


# --- the official OpenAI client, end to end ------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_the_openai_client_gets_an_answer_through_the_proxy(live_server, proxy_on):
    client = openai.OpenAI(base_url=f"{live_server.url}/v1", api_key="caller-key", max_retries=0)
    answer = client.chat.completions.create(model="m", messages=HISTORY)
    assert answer.choices[0].message.content == "Understood."
    assert proxy_on.seen[0].headers["authorization"] == "Bearer server-side-key"


@pytest.mark.django_db(transaction=True)
def test_the_openai_client_streams_through_the_proxy(live_server, proxy_on):
    proxy_on.script("Your total is 42.")
    client = openai.OpenAI(base_url=f"{live_server.url}/v1", api_key="caller-key", max_retries=0)
    stream = client.chat.completions.create(model="m", messages=HISTORY, stream=True)
    text = "".join(chunk.choices[0].delta.content or "" for chunk in stream)
    assert text == "Your total is 42."


@pytest.mark.django_db(transaction=True)
def test_the_openai_client_reads_the_503_as_an_error(live_server, settings):
    settings.CONTEXTGC_UPSTREAM_KEY = None
    client = openai.OpenAI(base_url=f"{live_server.url}/v1", api_key="caller-key", max_retries=0)
    with pytest.raises(openai.APIStatusError) as raised:
        client.chat.completions.create(model="m", messages=HISTORY)
    assert raised.value.status_code == 503
    assert raised.value.body["message"] == DISABLED

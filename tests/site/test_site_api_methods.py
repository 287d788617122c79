"""Methods and paths the site has no view for: JSON errors for API clients, HEAD for GETs."""

from __future__ import annotations

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("method", ["get", "options", "put", "delete", "patch"])
@pytest.mark.parametrize("path", ["/api/compile", "/api/protocol-instruction"])
def test_a_post_endpoint_refuses_another_method_in_json_with_allow(client, path, method):
    response = getattr(client, method)(path)
    assert response.status_code == 405
    assert response["Allow"] == "POST"
    assert response["Content-Type"].startswith("application/json")
    assert response["Cache-Control"] == "no-store"
    assert response.json() == {
        "error": "method_not_allowed",
        "message": f"{method.upper()} is not allowed on {path}; use POST",
        "allowed": ["POST"],
    }


@pytest.mark.parametrize("path", ["/api/health", "/api/schemas", "/api/example"])
def test_a_get_endpoint_refuses_post_in_json_with_allow(client, path):
    response = client.post(path, data="{}", content_type="application/json")
    assert response.status_code == 405
    assert response["Allow"] == "GET, HEAD"
    assert response.json()["error"] == "method_not_allowed"


@pytest.mark.parametrize("path", ["/api/health", "/api/schemas", "/api/example"])
def test_a_get_endpoint_answers_head_without_a_body(client, path):
    response = client.head(path)
    assert response.status_code == 200
    assert response.content == b""  # sent by the view, not only dropped by the server
    assert response["Content-Type"].startswith("application/json")
    assert response["Cache-Control"] == "no-store"
    assert int(response["Content-Length"]) == len(client.get(path).content)


@pytest.mark.parametrize("path", ["/", "/console"])
def test_a_page_answers_head_without_a_body(client, path):
    response = client.head(path)
    assert response.status_code == 200
    assert response.content == b""
    assert response["Content-Type"].startswith("text/html")
    assert int(response["Content-Length"]) == len(client.get(path).content)


def test_head_stays_out_of_the_openapi_document(client):
    paths = client.get("/api/openapi.json").json()["paths"]
    assert {path: sorted(ops) for path, ops in paths.items()} == {
        "/api/compile": ["post"],
        "/api/example": ["get"],
        "/api/health": ["get"],
        "/api/health/live": ["get"],
        "/api/protocol-instruction": ["post"],
        "/api/schemas": ["get"],
    }


@pytest.mark.parametrize("method", ["get", "post"])
def test_an_unknown_api_path_is_a_json_404(client, method):
    response = getattr(client, method)("/api/nope")
    assert response.status_code == 404
    assert response.json() == {
        "error": "not_found",
        "message": "nothing is at /api/nope; the endpoints are listed at /api/docs",
    }


@pytest.mark.parametrize(("path", "code"), [("/api/nope", "not_found"), ("/v1/models", None)])
def test_a_post_to_an_unknown_path_without_a_csrf_token_is_the_json_404(path, code):
    client = Client(enforce_csrf_checks=True)  # as an API client: no cookie, no token
    response = client.post(path, data="{}", content_type="application/json")
    assert response.status_code == 404 and response["Content-Type"] == "application/json"
    body = response.json()
    assert (body.get("error") if code else body["error"]["code"]) == "not_found"


def test_an_unknown_proxy_path_is_a_404_in_openais_shape(client):
    response = client.get("/v1/models")
    assert response.status_code == 404
    assert response.json() == {
        "error": {
            "message": "nothing is at /v1/models; the endpoints are listed at /api/docs",
            "type": "invalid_request_error",
            "code": "not_found",
        }
    }


def test_the_docs_still_load(client):
    assert client.get("/api/docs").status_code == 200
    assert client.get("/api/openapi.json").status_code == 200

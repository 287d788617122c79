"""The site's middleware: the API keeps every security header while pages keep their state."""

from __future__ import annotations

import json

import pytest
from csp.constants import HEADER, NONCE, SELF
from csp.utils import build_policy
from django.http import HttpResponse
from django.test import RequestFactory

from playground.middleware import ContentSecurityPolicyMiddleware

pytestmark = pytest.mark.django_db

SECURITY_HEADERS = (
    "Content-Security-Policy",
    "X-Frame-Options",
    "X-Content-Type-Options",
    "Referrer-Policy",
    "Cross-Origin-Opener-Policy",
)


def compile_hi(client):
    body = json.dumps({"transcript": "user: hi"})
    return client.post("/api/compile", data=body, content_type="application/json")


def test_an_api_answer_carries_the_same_security_headers_as_a_page(client):
    page, answer = client.get("/console"), compile_hi(client)
    assert answer.status_code == 200
    assert {name: answer[name] for name in SECURITY_HEADERS} == {
        name: page[name] for name in SECURITY_HEADERS
    }
    assert answer["Vary"] == "origin"


def test_an_api_request_has_no_user_and_no_messages(client):
    response = compile_hi(client)
    assert not hasattr(response.wsgi_request, "user")
    assert not hasattr(response.wsgi_request, "_messages")
    assert response.cookies == {}


def test_a_page_request_still_has_a_user_and_messages(client):
    request = client.get("/console").wsgi_request
    assert request.user.is_anonymous
    assert hasattr(request, "_messages")


def test_the_policy_is_django_csps_own(client):
    assert client.get("/console")[HEADER] == build_policy()


def test_a_changed_policy_setting_is_sent_at_once(client, settings):
    settings.CONTENT_SECURITY_POLICY = {"DIRECTIVES": {"default-src": ["'none'"]}}
    assert client.get("/console")[HEADER] == "default-src 'none'"


def test_a_view_that_sets_its_own_policy_goes_through_django_csp():
    request = RequestFactory().get("/console")
    response = HttpResponse()
    response._csp_update = {"img-src": ["https://images.example"]}
    middleware = ContentSecurityPolicyMiddleware(lambda request: response)
    middleware.process_request(request)
    sent = middleware.process_response(request, response)[HEADER]
    assert "img-src 'self' data: https://images.example" in sent


def test_a_page_that_used_a_nonce_gets_it_in_its_policy(settings):
    settings.CONTENT_SECURITY_POLICY = {"DIRECTIVES": {"script-src": [SELF, NONCE]}}
    request = RequestFactory().get("/console")
    middleware = ContentSecurityPolicyMiddleware(lambda request: HttpResponse())
    middleware.process_request(request)
    nonce = str(request.csp_nonce)
    sent = middleware.process_response(request, HttpResponse())[HEADER]
    assert f"script-src 'self' 'nonce-{nonce}'" in sent


# --- the body cap ---------------------------------------------------------------------------

OVER_CAP = 256 * 1024 + 1


class UnreadBody:
    """A request body that fails the test if anything reads it."""

    def read(self, *args):
        raise AssertionError("the body was read before the cap was checked")

    readline = read


@pytest.mark.parametrize("path", ["/api/compile", "/v1/chat/completions", "/console", "/"])
def test_an_oversized_body_is_refused_before_anything_reads_it(client, path):
    response = client.post(
        path,
        content_type="application/json",
        CONTENT_LENGTH=str(OVER_CAP),
        **{"wsgi.input": UnreadBody()},
    )
    assert response.status_code == 413


def post_over_cap(client, path="/api/compile", **extra):
    body = json.dumps({"transcript": "user: " + "x" * OVER_CAP})
    return client.post(path, data=body, content_type="application/json", **extra)


def test_a_413_to_an_allowed_origin_says_so_to_the_browser(client, settings):
    settings.CORS_ALLOWED_ORIGINS = ["https://good.example"]
    response = post_over_cap(client, HTTP_ORIGIN="https://good.example")
    assert response.status_code == 413
    assert response["Access-Control-Allow-Origin"] == "https://good.example"
    assert response.json()["error"] == "body_too_large"


@pytest.mark.parametrize("path", ["/api/compile", "/v1/chat/completions", "/console"])
def test_a_413_carries_the_same_security_headers_as_a_page(client, path):
    page, refused = client.get("/console"), post_over_cap(client, path)
    assert refused.status_code == 413
    assert {name: refused[name] for name in SECURITY_HEADERS} == {
        name: page[name] for name in SECURITY_HEADERS
    }

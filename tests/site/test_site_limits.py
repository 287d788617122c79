"""The rate limit's key: every client address, however odd, gets a budget and no 500."""

from __future__ import annotations

import json

import pytest
from django.test import RequestFactory

from playground.limits import UNKNOWN, budget_owner, client_ip

pytestmark = pytest.mark.django_db


def compile_from(client, **meta):
    body = json.dumps({"transcript": "user: hi"})
    return client.post("/api/compile", data=body, content_type="application/json", **meta)


def test_an_empty_remote_addr_spends_the_shared_unknown_budget(client, settings):
    settings.CONTEXTGC_RATE_LIMIT = 1
    first = compile_from(client, REMOTE_ADDR="")  # gunicorn on a unix socket
    second = compile_from(client, REMOTE_ADDR="not-an-address")
    assert [first.status_code, second.status_code] == [200, 429]
    assert budget_owner("") == budget_owner("not-an-address") == UNKNOWN


@pytest.mark.parametrize("forwarded", ["garbage", "unknown", "_hidden", "[2001:db8::1"])
def test_an_unparseable_forwarded_entry_falls_back_to_remote_addr(client, settings, forwarded):
    settings.CONTEXTGC_PROXY_HOPS = 1
    settings.CONTEXTGC_RATE_LIMIT = 1
    first = compile_from(client, REMOTE_ADDR="10.0.0.7", HTTP_X_FORWARDED_FOR=forwarded)
    again = compile_from(client, REMOTE_ADDR="10.0.0.7")
    assert [first.status_code, again.status_code] == [200, 429]


@pytest.mark.parametrize(
    ("forwarded", "client"),
    [
        ("203.0.113.9:4711", "203.0.113.9"),
        ("[2001:db8::1]", "2001:db8::1"),
        ("[2001:db8::1]:443", "2001:db8::1"),
        ("6.6.6.6, 203.0.113.9:80", "203.0.113.9"),
    ],
)
def test_a_port_or_brackets_around_a_forwarded_address_are_dropped(settings, forwarded, client):
    settings.CONTEXTGC_PROXY_HOPS = 1
    request = RequestFactory().get("/", REMOTE_ADDR="10.0.0.7", HTTP_X_FORWARDED_FOR=forwarded)
    assert client_ip(request) == client


def test_a_forwarded_address_with_a_port_is_counted_as_that_address(client, settings):
    settings.CONTEXTGC_PROXY_HOPS = 1
    settings.CONTEXTGC_RATE_LIMIT = 1
    first = compile_from(client, HTTP_X_FORWARDED_FOR="203.0.113.9:4711")
    again = compile_from(client, HTTP_X_FORWARDED_FOR="203.0.113.9:5000")
    other = compile_from(client, HTTP_X_FORWARDED_FOR="[2001:db8::1]")
    assert [first.status_code, again.status_code, other.status_code] == [200, 429, 200]


def test_a_missing_remote_addr_is_no_client_address(settings):
    settings.CONTEXTGC_PROXY_HOPS = 0
    request = RequestFactory().get("/")
    del request.META["REMOTE_ADDR"]
    assert budget_owner(client_ip(request)) == UNKNOWN

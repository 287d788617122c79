"""Sign-in attempts are limited per account and per client, on the reviewers' login and the
admin's; past the limit even the right password is refused, with a 429 and Retry-After.

The counts live in the rate limit's shared cache (here the database counter, as the
site runs by default); the limits are set low so the tests stay short.
"""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

pytestmark = pytest.mark.django_db

PASSWORD = "correct horse battery staple"
LOGINS = ["/accounts/login/", "/admin/login/"]


@pytest.fixture(autouse=True)
def low_limits(settings):
    settings.CONTEXTGC_LOGIN_RATE_ACCOUNT = "3/15m"
    settings.CONTEXTGC_LOGIN_RATE_CLIENT = "5/15m"


@pytest.fixture
def alice():
    return get_user_model().objects.create_user("alice", password=PASSWORD, is_staff=True)


def attempt(client: Client, path: str, username: str, password: str, address="192.0.2.1"):
    return client.post(path, {"username": username, "password": password}, REMOTE_ADDR=address)


def signed_in(client: Client) -> bool:
    return "_auth_user_id" in client.session


@pytest.mark.parametrize("path", LOGINS)
def test_after_three_wrong_passwords_the_right_one_is_refused_too(alice, path):
    client = Client()
    wrong = [attempt(client, path, "alice", "guess").status_code for _ in range(3)]
    right = attempt(client, path, "alice", PASSWORD)
    assert wrong == [200, 200, 200]
    assert right.status_code == 429
    assert not signed_in(client)
    assert "too many sign-in attempts" in right.content.decode().lower()


@pytest.mark.parametrize("path", LOGINS)
def test_a_refusal_says_when_to_try_again(alice, path):
    client = Client()
    for _ in range(3):
        attempt(client, path, "alice", "guess")
    refused = attempt(client, path, "alice", PASSWORD)
    assert 0 < int(refused["Retry-After"]) <= 15 * 60 + 1


def test_one_account_guessed_from_many_addresses_is_still_limited(alice):
    client = Client()
    for n in range(3):
        attempt(client, "/accounts/login/", "alice", "guess", address=f"198.51.100.{n}")
    refused = attempt(client, "/accounts/login/", "alice", PASSWORD, address="203.0.113.50")
    assert refused.status_code == 429 and not signed_in(client)


def test_one_client_guessing_many_accounts_is_limited(alice):
    client = Client()
    statuses = [
        attempt(client, "/accounts/login/", f"user{n}", "guess").status_code for n in range(5)
    ]
    refused = attempt(client, "/accounts/login/", "alice", PASSWORD)
    assert statuses == [200] * 5
    assert refused.status_code == 429 and not signed_in(client)


def test_another_account_from_another_client_still_signs_in(alice):
    get_user_model().objects.create_user("bob", password=PASSWORD)
    for _ in range(4):
        attempt(Client(), "/accounts/login/", "alice", "guess")
    bob = Client()
    response = attempt(bob, "/accounts/login/", "bob", PASSWORD, address="203.0.113.9")
    assert response.status_code == 302 and signed_in(bob)


def test_a_first_attempt_with_the_right_password_signs_in(alice):
    client = Client()
    response = attempt(client, "/accounts/login/", "alice", PASSWORD)
    assert response.status_code == 302 and signed_in(client)


def test_showing_the_login_page_counts_no_attempt(alice):
    client = Client()
    pages = [client.get("/accounts/login/").status_code for _ in range(10)]
    assert pages == [200] * 10
    assert attempt(client, "/accounts/login/", "alice", PASSWORD).status_code == 302

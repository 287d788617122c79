"""The first account from the browser, and the admin for maintainers."""

from __future__ import annotations

import io
import threading

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db import connection
from django.test import Client

from labelling import access

pytestmark = pytest.mark.django_db
FIRST = {"username": "maria", "password1": "a long passphrase", "password2": "a long passphrase"}


def test_the_sign_in_page_offers_the_first_account_while_none_exists(client):
    response = client.get("/accounts/login/")
    assert response.status_code == 200
    assert b"Create the first maintainer" in response.content


def test_the_sign_in_page_offers_nothing_once_an_account_exists(client, reviewer):
    assert b"Create the first maintainer" not in client.get("/accounts/login/").content


def test_the_first_account_is_a_maintainer_signed_in_who_may_use_the_admin(client):
    response = client.post("/labelling/first-run", FIRST)
    assert (response.status_code, response["Location"]) == (302, "/labelling/")
    user = get_user_model().objects.get()
    assert (user.username, user.is_staff, user.is_superuser) == ("maria", True, True)
    assert access.is_maintainer(user)
    assert client.get("/admin/").status_code == 200


def test_it_refuses_a_second_first_account(client, reviewer):
    response = client.post("/labelling/first-run", {**FIRST, "username": "mallory"})
    assert response.status_code == 409
    assert b"An account exists already" in response.content
    assert list(get_user_model().objects.values_list("username", flat=True)) == ["alice"]


def test_it_sends_a_visitor_to_sign_in_once_an_account_exists(client, reviewer):
    assert client.get("/labelling/first-run")["Location"] == "/accounts/login/"


def test_it_refuses_a_client_that_is_not_on_this_machine():
    response = Client(REMOTE_ADDR="203.0.113.9").post("/labelling/first-run", FIRST)
    assert response.status_code == 403
    assert not get_user_model().objects.exists()


def test_it_refuses_a_request_through_an_untrusted_proxy():
    client = Client(HTTP_X_FORWARDED_FOR="203.0.113.9")
    assert client.post("/labelling/first-run", FIRST).status_code == 403
    assert b"Create the first maintainer" not in client.get("/accounts/login/").content


def test_it_refuses_mismatched_passwords_and_makes_nothing(client):
    response = client.post("/labelling/first-run", {**FIRST, "password2": "something else"})
    assert response.status_code == 422
    assert not get_user_model().objects.exists()


@pytest.mark.django_db(transaction=True)
def test_concurrent_first_run_posts_make_exactly_one_account():
    attempts = 8
    ready = threading.Barrier(attempts)
    statuses = []

    def attempt(n):
        try:
            ready.wait()
            response = Client().post("/labelling/first-run", {**FIRST, "username": f"user{n}"})
            statuses.append(response.status_code)
        finally:
            connection.close()

    threads = [threading.Thread(target=attempt, args=(n,)) for n in range(attempts)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(statuses) == [302] + [409] * (attempts - 1)
    assert get_user_model().objects.count() == 1


def test_a_maintainer_made_from_the_shell_may_use_the_admin(monkeypatch):
    monkeypatch.setenv("REVIEWER_PASSWORD", "a long passphrase")
    call_command("create_reviewer", "mo", "--maintainer", "--password-env", "REVIEWER_PASSWORD",
                 stdout=io.StringIO())  # fmt: skip
    client = Client()
    client.login(username="mo", password="a long passphrase")
    response = client.get("/admin/")
    assert response.status_code == 200
    assert b"Corpora" in response.content


def test_a_reviewer_is_still_refused_the_admin(login, reviewer):
    assert login(reviewer).get("/admin/").status_code == 302

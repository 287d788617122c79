"""Reviewer accounts from the shell, CSRF on every form, and the admin."""

from __future__ import annotations

import io

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError

from labelling import access

pytestmark = pytest.mark.django_db


def test_create_reviewer_makes_an_account_that_can_sign_in(monkeypatch, client):
    monkeypatch.setenv("REVIEWER_PASSWORD", "a long passphrase")
    out = io.StringIO()
    call_command("create_reviewer", "dana", "--password-env", "REVIEWER_PASSWORD", stdout=out)
    assert out.getvalue() == "created reviewer dana\n"
    assert client.login(username="dana", password="a long passphrase")
    assert not access.is_maintainer(get_user_model().objects.get(username="dana"))


def test_create_reviewer_with_maintainer_grants_the_apps_permissions(monkeypatch):
    monkeypatch.setenv("REVIEWER_PASSWORD", "a long passphrase")
    call_command(
        "create_reviewer",
        "maria",
        "--maintainer",
        "--password-env",
        "REVIEWER_PASSWORD",
        stdout=io.StringIO(),
    )
    user = get_user_model().objects.get(username="maria")
    assert access.is_maintainer(user)
    assert user.has_perm(access.IMPORT_CORPUS) and user.has_perm(access.READ_LABELS)


def test_create_reviewer_refuses_an_empty_password_variable(monkeypatch):
    monkeypatch.delenv("REVIEWER_PASSWORD", raising=False)
    with pytest.raises(CommandError, match=r"\$REVIEWER_PASSWORD is empty or unset"):
        call_command("create_reviewer", "dana", "--password-env", "REVIEWER_PASSWORD")
    assert not get_user_model().objects.filter(username="dana").exists()


def post_urls(worksheet):
    base = f"/labelling/worksheets/{worksheet.pk}"
    return [
        f"{base}/rows/1/",
        f"{base}/rows/1/adjudicate",
        f"{base}/merge",
        "/labelling/corpora/import",
        "/labelling/worksheets/new",
        "/labelling/labels/import",
    ]


@pytest.mark.parametrize("index", range(6))
def test_every_form_refuses_a_post_without_a_csrf_token(login, worksheet, maintainer, index):
    # The maintainer is made every kind of member so that only CSRF can refuse.
    from labelling.models import Membership

    Membership.objects.create(worksheet=worksheet, user=maintainer, role="reviewer")
    url = post_urls(worksheet)[index]
    response = login(maintainer, enforce_csrf_checks=True).post(url, {"verdict": "correct"})
    assert response.status_code == 403
    assert b"CSRF" in response.content


def test_the_admin_lists_verdicts_read_only(admin_client, row, reviewer):
    from labelling.verdicts import record_verdict

    record_verdict(row, reviewer, "correct")
    assert admin_client.get("/admin/labelling/verdict/").status_code == 200
    assert admin_client.get("/admin/labelling/verdict/add/").status_code == 403

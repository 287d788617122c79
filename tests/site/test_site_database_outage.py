"""With PostgreSQL stopped, every path that needs it answers 503 with the reason.

The suite's real cluster is stopped by the test and started again after it. JSON under
``/api/`` (OpenAI's shape under ``/v1/``), the site's page elsewhere; no stack trace and
no database host in any answer. The compile API keeps serving when the rate counter
is in memcached; ``/api/health`` does a real round trip on each call, so a connection
kept open across the outage does not make it answer "ok".

The clients here do not re-raise what the site logs as an uncaught exception (the test
client's default): a server answers with ``handler500`` instead, and so do they.
"""

from __future__ import annotations

import json

import pytest
from django.contrib.auth import get_user_model
from django.db import OperationalError, connection
from django.test import Client, RequestFactory
from django.test.utils import CaptureQueriesContext

import compiler
from playground import outage
from tests.site.conftest import needs_pg_ctl

pytestmark = [pytest.mark.django_db(transaction=True), needs_pg_ctl]

COMPILE = json.dumps({"transcript": "user: deliver to Tower B\nassistant: ok"})
DOWN = {
    "error": "database_unavailable",
    "message": "the site's database cannot be reached; try again in a moment",
}


def server_like() -> Client:
    return Client(raise_request_exception=False)


def post_compile(client: Client):
    return client.post("/api/compile", data=COMPILE, content_type="application/json")


def reveals_the_database(text: str) -> bool:
    db = connection.settings_dict
    return any(word in text for word in (str(db["PORT"]), "psycopg", "Traceback", "connection"))


@pytest.fixture
def signed_in():
    user = get_user_model().objects.create_user("alice", password="correct horse battery")
    client = server_like()
    client.force_login(user)
    return client


def test_a_compile_counted_in_the_database_is_a_503_rate_limit_unavailable(postgres):
    postgres.stop()
    response = post_compile(server_like())
    assert response.status_code == 503
    assert response.json()["error"] == "rate_limit_unavailable"
    assert "cannot be reached" in response.json()["message"]
    assert not reveals_the_database(response.content.decode())


def test_a_compile_counted_in_memcached_is_served_while_the_database_is_down(
    postgres, settings, memcached
):
    settings.CACHES = {
        **settings.CACHES,
        "ratelimit": {
            "BACKEND": "django.core.cache.backends.memcached.PyMemcacheCache",
            "LOCATION": memcached,
            "OPTIONS": settings.CONTEXTGC_MEMCACHED_OPTIONS,
        },
    }
    postgres.stop()
    client = server_like()
    assert post_compile(client).status_code == 200
    assert client.get("/console?example=read_path").status_code == 200


def test_the_console_shows_the_reason_on_its_page_when_the_counter_is_down(postgres):
    postgres.stop()
    response = server_like().get("/console?example=read_path")
    assert response.status_code == 503
    page = response.content.decode()
    assert "cannot be reached" in page and "<main" in page
    assert not reveals_the_database(page)


def test_a_signed_in_page_is_a_styled_503_with_the_reason(postgres, signed_in):
    postgres.stop()
    response = signed_in.get("/labelling/")
    assert response.status_code == 503
    assert response["Retry-After"] == outage.RETRY_AFTER
    page = response.content.decode()
    assert "The site&#x27;s database cannot be reached" in page and "<main" in page
    assert not reveals_the_database(page)


def test_the_console_with_a_session_cookie_is_never_a_500(postgres, signed_in):
    postgres.stop()
    response = signed_in.get("/console")
    assert response.status_code in (200, 503)
    assert not reveals_the_database(response.content.decode())


def test_a_login_post_is_a_styled_503_with_the_reason(postgres):
    postgres.stop()
    response = server_like().post(
        "/accounts/login/", {"username": "alice", "password": "correct horse battery"}
    )
    assert response.status_code == 503
    assert "cannot be reached" in response.content.decode()


def test_the_admin_login_post_is_a_styled_503_with_the_reason(postgres):
    postgres.stop()
    response = server_like().post("/admin/login/", {"username": "alice", "password": "x"})
    assert response.status_code == 503
    assert "cannot be reached" in response.content.decode()


def test_the_proxy_answers_503_in_openai_shape(postgres, proxy_on):
    postgres.stop()
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]})
    response = server_like().post(
        "/v1/chat/completions", data=body, content_type="application/json"
    )
    assert response.status_code == 503
    assert response.json()["error"]["code"] == "rate_limit_unavailable"
    assert not reveals_the_database(response.content.decode())


def test_health_does_a_round_trip_on_every_call():
    client = server_like()
    with CaptureQueriesContext(connection) as queries:
        statuses = [client.get("/api/health").status_code for _ in range(3)]
    assert statuses == [200, 200, 200]
    assert [q["sql"] for q in queries.captured_queries].count("SELECT 1") == 3


def test_health_is_503_every_time_after_the_database_stops_under_a_kept_connection(postgres):
    client = server_like()
    assert client.get("/api/health").status_code == 200  # the connection is now kept open
    postgres.stop(close_connections=False)
    answers = [client.get("/api/health") for _ in range(5)]
    assert [a.status_code for a in answers] == [503] * 5
    unavailable = {"status": "unavailable", "compiler": compiler.__version__}
    assert answers[-1].json() == {**unavailable, "database": "unavailable"}


def test_liveness_answers_200_while_the_database_is_down(postgres):
    postgres.stop()
    response = server_like().get("/api/health/live")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "compiler": compiler.__version__}


def test_everything_serves_again_once_the_database_is_back(postgres, signed_in):
    postgres.stop(close_connections=False)
    assert signed_in.get("/labelling/").status_code == 503
    postgres.start()
    assert server_like().get("/api/health").status_code == 200
    assert signed_in.get("/labelling/").status_code == 200
    assert post_compile(server_like()).status_code == 200


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/api/anything", DOWN),
        ("/v1/chat/completions", {"error": {**dict(zip(("message", "code"), (
            DOWN["message"], DOWN["error"]), strict=True)), "type": DOWN["error"]}}),
    ],
)  # fmt: skip
def test_an_outage_outside_a_view_is_the_same_503_not_a_500(path, expected):
    request = RequestFactory().get(path)
    try:
        raise OperationalError("connection to server at 10.0.0.7, port 5432 failed")
    except OperationalError:
        response = outage.server_error(request)
    assert response.status_code == 503
    assert json.loads(response.content) == expected


def test_any_other_error_outside_a_view_stays_a_500():
    request = RequestFactory().get("/api/anything")
    try:
        raise ValueError("a bug")
    except ValueError:
        response = outage.server_error(request)
    assert response.status_code == 500

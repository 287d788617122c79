"""Settings that cannot work stop the start, naming the variable."""

from __future__ import annotations

import subprocess

import pytest
from django.core.exceptions import ImproperlyConfigured

from playground.env import env_float, env_url
from tests.site.test_site_helpers import settings_in_a_new_process


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "Infinity", "NaN"])
def test_env_float_refuses_a_number_that_is_not_finite(value):
    with pytest.raises(ImproperlyConfigured, match=f"X={value!r} is not a finite number"):
        env_float("X", 60.0, minimum=1.0, environ={"X": value})


@pytest.mark.parametrize(
    "value", ["notaurl", "api.openai.com/v1", "ftp://host/v1", "http://", "https://:443/v1",
              "http://host:port/v1", "http://[::1/v1"],
)  # fmt: skip
def test_env_url_requires_an_http_url_with_a_host(value):
    with pytest.raises(ImproperlyConfigured, match=r"X='.*' is not an http\(s\) URL with a host"):
        env_url("X", "https://api.openai.com/v1", environ={"X": value})


@pytest.mark.parametrize(
    "value", ["https://api.openai.com/v1", "http://127.0.0.1:8080/v1", "http://[::1]:9/v1"]
)
def test_env_url_reads_an_http_url(value):
    assert env_url("X", "https://default/v1", environ={"X": value}) == value
    assert env_url("X", "https://default/v1", environ={}) == "https://default/v1"


def _start(**env) -> subprocess.CompletedProcess:
    printed = ("settings.CONTEXTGC_UPSTREAM_BASE", "settings.CONTEXTGC_UPSTREAM_TIMEOUT")
    return settings_in_a_new_process(*printed, DJANGO_SECRET_KEY="k", **env)


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"CONTEXTGC_UPSTREAM_TIMEOUT": "nan"}, "CONTEXTGC_UPSTREAM_TIMEOUT='nan' is not a finite"),
        ({"CONTEXTGC_UPSTREAM_TIMEOUT": "inf"}, "CONTEXTGC_UPSTREAM_TIMEOUT='inf' is not a finite"),
        ({"CONTEXTGC_UPSTREAM_BASE": "notaurl"}, "CONTEXTGC_UPSTREAM_BASE='notaurl' is not an"),
    ],
)
def test_an_unusable_upstream_setting_stops_the_start(env, message):
    done = _start(**env)
    assert done.returncode != 0
    assert "ImproperlyConfigured" in done.stderr
    assert message in done.stderr


def test_a_usable_upstream_setting_starts():
    done = _start(CONTEXTGC_UPSTREAM_BASE="http://127.0.0.1:9/v1", CONTEXTGC_UPSTREAM_TIMEOUT="7")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["http://127.0.0.1:9/v1", "7.0"]

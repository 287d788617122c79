"""The plain helper modules behind the views: settings, figures, presentation, limits."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.test import RequestFactory

from compiler import compile_transcript, schema_summary
from playground import present
from playground.env import env_bool, env_float, env_int, env_list, env_str
from playground.examples import examples
from playground.figures import figures_of, shipped_figures
from playground.limits import client_ip
from playground.service import RequestError, Result, options, run_compile, telemetry_header

ROOT = Path(__file__).resolve().parents[2]


# --- settings from the environment ---------------------------------------------------------


def test_env_helpers_read_typed_values():
    env = {"A": "On", "B": " 42 ", "C": "1.5", "D": "x, ,y", "E": ""}
    assert env_bool("A", False, environ=env) is True
    assert env_int("B", 0, environ=env) == 42
    assert env_float("C", 0.0, environ=env) == 1.5
    assert env_list("D", environ=env) == ["x", "y"]
    assert env_str("E", "default", environ=env) == "default"


@pytest.mark.parametrize(
    ("read", "message"),
    [
        (lambda e: env_bool("X", False, environ=e), "X='maybe' is not a boolean"),
        (lambda e: env_int("X", 1, environ=e), "X='maybe' is not a whole number"),
        (lambda e: env_float("X", 1.0, environ=e), "X='maybe' is not a number"),
    ],
)
def test_env_helpers_fail_loudly_on_a_bad_value(read, message):
    with pytest.raises(ImproperlyConfigured, match=message):
        read({"X": "maybe"})


def test_env_int_refuses_a_value_below_its_minimum():
    with pytest.raises(ImproperlyConfigured, match="CONTEXTGC_RATE_LIMIT=0 is below its minimum"):
        env_int("CONTEXTGC_RATE_LIMIT", 60, minimum=1, environ={"CONTEXTGC_RATE_LIMIT": "0"})


DATABASE_SETTINGS = ("db['ENGINE']", "db['NAME']", "settings.DEBUG")


def settings_in_a_new_process(*printed: str, **env) -> subprocess.CompletedProcess:
    """Load the settings in a fresh interpreter under ``env`` (none of this process's
    DJANGO_, DATABASE_ or CONTEXTGC_UPSTREAM_ variables) and print ``printed``."""
    code = (
        "import django, os; os.environ['DJANGO_SETTINGS_MODULE'] = 'playground.settings'; "
        "from django.conf import settings; db = settings.DATABASES['default']; "
        f"print({', '.join(printed or DATABASE_SETTINGS)})"
    )
    prefixes = ("DJANGO_", "DATABASE_", "CONTEXTGC_UPSTREAM_")
    base = {k: v for k, v in os.environ.items() if not k.startswith(prefixes)}
    return subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env={**base, **env},
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip


def test_without_database_url_the_site_runs_on_an_embedded_sqlite_file(tmp_path):
    path = tmp_path / "site.sqlite3"
    done = settings_in_a_new_process(DJANGO_SECRET_KEY="k", CONTEXTGC_SQLITE_PATH=str(path))
    assert done.stdout.split() == ["django.db.backends.sqlite3", str(path), "False"]


def test_database_url_chooses_postgresql_through_psycopg():
    done = settings_in_a_new_process(
        DJANGO_SECRET_KEY="k", DATABASE_URL="postgres://u:p@127.0.0.1:5999/contextgc"
    )
    assert done.stdout.split() == ["django.db.backends.postgresql", "contextgc", "False"]


def test_outside_debug_a_missing_secret_key_stops_the_start():
    done = settings_in_a_new_process(DJANGO_DEBUG="0")
    assert done.returncode != 0
    assert "DJANGO_SECRET_KEY must be set when DJANGO_DEBUG is off" in done.stderr


def test_a_mistyped_setting_stops_the_start():
    done = settings_in_a_new_process(DJANGO_SECRET_KEY="k", CONTEXTGC_RATE_LIMIT="sixty")
    assert done.returncode != 0
    assert "CONTEXTGC_RATE_LIMIT='sixty' is not a whole number" in done.stderr


# --- the schemas' figures --------------------------------------------------------------------


def test_figures_come_from_the_measurement_blocks():
    for figures in shipped_figures():
        measurement = schema_summary(figures.name)["measurement"]
        assert figures.transcripts == measurement["transcripts"]
        assert figures.turns == measurement["turns"]
        for slot in figures.slots:
            assert slot.observations == measurement["slots"][slot.slot]["observations"]


def test_a_judged_slot_reads_as_correct_of_judged_with_its_interval():
    summary = {
        "name": "s",
        "slots": ["a"],
        "measurement": {
            "precision": {"a": {"judged": 30, "correct": 28, "wilson95": [0.787, 0.982]}}
        },
    }
    (slot,) = figures_of(summary).slots
    assert slot.precision_note == "28/30 judged correct (95% CI 78.7–98.2%)"


def test_a_slot_judged_by_units_reads_units_then_rows_and_the_interval_over_units():
    precision = {
        "judged": 18,
        "correct": 17,
        "units": 11,
        "units_correct": 10,
        "wilson95": [0.623, 0.984],
    }
    summary = {"name": "s", "slots": ["a"], "measurement": {"precision": {"a": precision}}}
    (slot,) = figures_of(summary).slots
    assert slot.precision_note == "10/11 units judged correct (18 rows; 95% CI 62.3–98.4%)"


def test_the_shipped_coding_schema_reads_its_interval_over_units():
    (slot,) = [s for s in figures_of(schema_summary("coding")).slots if s.slot == "current_file"]
    block = schema_summary("coding")["measurement"]["precision"]["current_file"]
    assert slot.precision_note.startswith(f"{block['units_correct']}/{block['units']} units")
    assert block["units"] < block["judged"]  # replays of one turn are one unit


def test_a_schema_without_a_measurement_block_is_unmeasured_not_zero():
    figures = figures_of({"name": "s", "slots": ["a"], "summary": "Custom."})
    (slot,) = figures.slots
    assert slot.observations is None
    assert slot.precision_note == "unmeasured: no judged sample recorded"
    assert figures.note == "s: no measurement block; its extractions are unmeasured"


# --- presentation ----------------------------------------------------------------------------


def test_the_report_numbers_turns_as_the_compiler_does(retail_text):
    result = run_compile(transcript=retail_text, entity_schema="logistics")
    shown = present.report(result, text=retail_text, source="pasted", schema="logistics")
    turns = [row for row in shown.rows if row.turn is not None]
    assert [row.turn for row in turns] == list(range(result.telemetry["messages_in"]))
    assert [row.turn for row in turns if row.change == "retired"] == [11]
    assert turns[11].retired["superseded"] == [{"slot": "payment_method", "turn": 12}]
    assert [row.turn for row in turns if row.compacted] == [
        c["turn"] for c in result.telemetry["compacted_payloads"]
    ]


def test_banners_put_errors_first_and_warn_without_a_schema():
    _, tel, _ = compile_transcript("user: hi")
    tel = {**tel, "retirement_violations": [{"turn": 0}], "context_grew": True, "token_growth": 3}
    banners = present.banners(tel, schema=None)
    assert [b.level for b in banners] == ["error", "warning", "warning"]
    assert banners[1] is present.NO_SCHEMA
    assert banners[2].title == "The compiled context is larger than the input by 3 tokens."


def test_a_revoked_slot_keeps_its_row_and_history():
    tel = {
        "state": {},
        "state_history": {"seat": [{"value": "4A", "turn": 1, "revoked_at": 3}]},
    }
    assert present.state_rows(tel) == (
        {"slot": "seat", "live": False, "history": [{"value": "4A", "turn": 1, "revoked_at": 3}]},
    )


# --- the service and the limit's client address -----------------------------------------------


def test_options_refuse_a_name_the_compiler_does_not_take():
    with pytest.raises(RequestError, match="unknown option"):
        options(speed="fast")


def test_the_telemetry_header_has_the_four_figures():
    tel = {"raw_token_count": 9, "compiled_token_count": 3, "compression_ratio_pct": 66.7}
    assert telemetry_header({**tel, "compile_time_ms": 0.5}) == (
        "raw=9; compiled=3; saved=66.7%; compile_ms=0.5"
    )


def test_a_result_is_the_apis_body():
    assert Result([], {}, ["w"], "o200k_base").as_dict() == {
        "compiled_messages": [],
        "telemetry": {},
        "parse_warnings": ["w"],
        "token_counter": "o200k_base",
    }


def test_the_client_is_remote_addr_unless_proxies_are_trusted(settings):
    request = RequestFactory().get(
        "/", REMOTE_ADDR="10.0.0.9", HTTP_X_FORWARDED_FOR="6.6.6.6, 203.0.113.7"
    )
    settings.CONTEXTGC_PROXY_HOPS = 0
    assert client_ip(request) == "10.0.0.9"
    settings.CONTEXTGC_PROXY_HOPS = 1
    assert client_ip(request) == "203.0.113.7"
    settings.CONTEXTGC_PROXY_HOPS = 3
    assert client_ip(request) == "10.0.0.9"  # a shorter chain than promised: trust nothing


def test_every_example_fills_the_console_form_and_names_a_schema():
    from playground.console import example_form

    for slug, example in examples().items():
        assert example_form(slug).is_valid()
        assert example.schema is not None
        assert example.source

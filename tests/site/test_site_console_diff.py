"""The console's aligned diff: one row per original turn, the compiled form beside it."""

from __future__ import annotations

import re

import pytest

from compiler import Message
from playground import diff
from tests.site.console_form import HTMX, form_data

pytestmark = pytest.mark.django_db


def row_html(part: str, turn: int | str) -> str:
    """The markup of one row of the diff, up to the next row or the end of the list."""
    start = part.index(f'id="row-{turn}"')
    ends = [part.find(mark, start) for mark in ('<li class="diff-', "</ol>")]
    return part[start : min(end for end in ends if end != -1)]


def test_each_original_turn_is_one_row_numbered_on_both_sides(client, airline_text):
    part = client.post("/console", form_data(airline_text), **HTMX).content.decode()
    turns = [int(n) for n in re.findall(r'<li class="diff-row diff-\w+" id="row-(\d+)"', part)]
    assert turns == list(range(62))
    for turn in (0, 7, 22, 61):
        assert row_html(part, turn).count(f'<a class="turn-no" href="#row-{turn}">#{turn}</a>') == 2


def test_a_retired_turn_sits_in_its_own_row_with_a_link_to_the_superseding_turn(
    client, airline_text
):
    part = client.post("/console", form_data(airline_text), **HTMX).content.decode()
    row = row_html(part, 22)
    assert 'data-change="retired"' in row
    assert 'Retired: flight_date superseded by <a href="#row-40">turn 40</a>' in row


def test_the_state_header_is_its_own_row_each_fact_linking_to_its_turn(client, airline_text):
    part = client.post("/console", form_data(airline_text), **HTMX).content.decode()
    header = row_html(part, "added")
    assert '<code>cabin_class = business</code> <a href="#row-58">turn 58</a>' in header
    assert '<code>passenger_id = sofia_kim_7287</code> <a href="#row-5">turn 5</a>' in header
    # the system prompt's own row shows the prompt, the header is not repeated in it
    assert "[ACTIVE_AGENT_STATE]" not in row_html(part, 0)


def test_a_compacted_payload_says_what_was_removed_in_an_expander(client, airline_text):
    part = client.post("/console", form_data(airline_text), **HTMX).content.decode()
    row = row_html(part, 7)
    assert 'data-change="compacted"' in row
    assert "Compacted (json_records): 1048 → 781 characters, 3 rows dropped</summary>" in row
    assert "What was removed: the original's lines that the compiled form does not hold" in row


def test_a_stale_read_links_to_the_turn_that_shows_it_again(client, airline_text):
    part = client.post("/console", form_data(airline_text), **HTMX).content.decode()
    assert 'shown again at <a href="#row-59">turn 59</a>' in row_html(part, 17)


def test_a_tool_call_reads_the_same_on_both_sides(client, airline_text):
    part = client.post("/console", form_data(airline_text), **HTMX).content.decode()
    row = row_html(part, 6)
    call = "→ get_user_details({&quot;user_id&quot;:&quot;sofia_kim_7287&quot;})"
    assert row.count(call) == 2
    assert "function" not in row  # no JSON of the call's envelope on the right


def test_banner_lines_link_to_the_turns_they_name(client, airline_text):
    part = client.post("/console", form_data(airline_text), **HTMX).content.decode()
    assert '(acted, <a href="#row-40">turn 40</a>) over' in part


def test_changed_turns_only_folds_each_unchanged_run_into_one_line(client, airline_text):
    data = form_data(airline_text, changed_only="on")
    part = client.post("/console", data, **HTMX).content.decode()
    rows = re.findall(r'<li class="diff-row diff-\w+" id="row-(\d+)"', part)
    assert rows == ["7", "9", "11", "13", "15", "17", "19", "21", "22", "23", "27", "37", "59"]
    assert '<li class="diff-gap" id="row-0">' in part
    assert "Turns 0–6 unchanged (7)" in part
    for turn in range(1, 7):  # a link to a folded turn still lands on its line
        assert f'<span class="anchor" id="row-{turn}"></span>' in part


def test_changed_turns_only_works_from_a_link_without_javascript(client):
    part = client.get("/console?example=read_path&changed_only=on").content.decode()
    assert 'class="diff diff-changed-only"' in part
    assert '<input type="checkbox" name="changed_only" id="id_changed_only" checked>' in part


def test_all_turns_are_rows_when_changed_only_is_off(client, airline_text):
    part = client.post("/console", form_data(airline_text), **HTMX).content.decode()
    assert "diff-gap" not in part


def test_a_cache_friendly_compile_shows_each_state_note_where_it_stands(client, airline_text):
    data = form_data(airline_text, mode="cache_friendly")
    part = client.post("/console", data, **HTMX).content.decode()
    assert all(f'id="row-{n}"' in part for n in range(62))  # every turn kept, in its row
    notes = part.count('data-change="added"')
    assert notes >= 2 and 'id="row-added"' in part and f'id="row-added-{notes - 1}"' in part
    # the first note stands before the first assistant turn that read it
    assert part.index('id="row-added"') < part.index('id="row-2"')
    assert "diff-retired" not in part


def test_alignment_is_read_from_the_telemetry_not_from_the_text():
    read = [(0, Message("user", "same")), (1, Message("user", "same")), (2, Message("user", "x"))]
    tel = {"mode": "compact", "retired_turn_indices": [0]}
    assert diff.alignment(read, tel, 2) == {"turns": {1: 0, 2: 1}, "added": None}


def test_alignment_refuses_a_count_the_telemetry_cannot_explain():
    read = [(0, Message("user", "a"))]
    with pytest.raises(ValueError, match="3 compiled messages for 1 kept turns"):
        diff.alignment(read, {"mode": "compact", "retired_turn_indices": []}, 3)

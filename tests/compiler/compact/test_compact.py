"""Tool-payload compaction: real payloads as golden files, behaviours, and properties.

Regenerate the golden files after a deliberate change of output, then read the diff:
    python tests/compiler/compact/test_compact.py --regen
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compiler.compact.compact import (
    HEAD_ROWS,
    Compacted,
    compact,
    has_safety_signal,
    safety_spans,
)
from compiler.compact.compact_json import compact_json
from compiler.compact.compact_text import PIECE_CHARS
from compiler.read.jsonio import dumps
from tests.safety_scan import full_scan

FIXTURES = Path(__file__).parents[2] / "fixtures" / "compact"
TOOL_NAMES = {
    "airline_search_direct_flight": "search_direct_flight",
    "airline_search_onestop_flight": "search_onestop_flight",
    "airline_get_reservation_details": "get_reservation_details",
    "airline_get_user_details": "get_user_details",
    "retail_get_product_details": "get_product_details",
    "retail_get_order_details": "get_order_details",
    "retail_list_all_product_types": "list_all_product_types",
}
GOLDEN_CASES = sorted(
    path.name.removesuffix(".txt")
    for path in FIXTURES.glob("*.txt")
    if not path.name.endswith(".expected.txt")
)


def read(name: str) -> str:
    """A fixture exactly as stored: some payloads end lines with CRLF."""
    return (FIXTURES / name).read_bytes().decode("utf-8")


def compact_case(case: str) -> Compacted:
    return compact(read(f"{case}.txt"), tool_name=TOOL_NAMES.get(case))


def catalogue(size: int, flagged: tuple[int, ...] = ()) -> str:
    rows = [{"sku": f"SKU-{i:04d}", "name": f"item {i}", "qty": i % 7} for i in range(size)]
    for index in flagged:
        rows[index]["note"] = "PEANUT_ALLERGEN warning"
    return json.dumps({"store": "north", "items": rows})


# ---------------------------------------------------------------------------------------
# Golden files: real payloads beside the expected output


@pytest.mark.parametrize("case", GOLDEN_CASES)
def test_it_compacts_each_real_payload_as_its_golden_file(case):
    assert compact_case(case).text == read(f"{case}.expected.txt")


def test_it_has_a_golden_file_for_every_shape():
    shapes = {compact_case(case).shape for case in GOLDEN_CASES}
    assert shapes == {
        "json_records",
        "json_object",
        "listing",
        "test_output",
        "stack_trace",
        "diff",
        "long_text",
        "none",
    }


# ---------------------------------------------------------------------------------------
# JSON records


def test_it_keeps_the_safety_row_of_a_25_item_catalogue():
    result = compact(catalogue(25, flagged=(14,)))
    assert "SKU-0014" in result.text
    assert "PEANUT_ALLERGEN warning" in result.text
    assert result.safety_rows_kept == 1


def test_it_discloses_how_many_rows_it_omitted():
    result = compact(catalogue(25, flagged=(14,)))
    assert "[items: 25 rows, showing 4 (first 3 + 1 safety-flagged); 21 omitted" in result.text
    assert "(truncated=true)" in result.text
    assert (result.rows_total, result.rows_kept, result.rows_dropped) == (25, 4, 21)


def test_it_keeps_every_safety_row_not_only_the_first():
    result = compact(catalogue(40, flagged=(5, 17, 39)))
    assert all(f"SKU-{i:04d}" in result.text for i in (0, 1, 2, 5, 17, 39))
    assert "SKU-0003" not in result.text
    assert result.safety_rows_kept == 3


def test_it_keeps_the_fields_around_the_collection():
    result = compact(catalogue(25))
    assert result.text.startswith('{"store":"north"}\n[items: 25 rows')


def test_it_writes_uniform_records_as_a_header_and_value_tuples():
    result = compact(catalogue(25))
    assert '\ncolumns=["sku","name","qty"]\n["SKU-0000","item 0",0]\n' in result.text


def test_it_writes_nested_fields_as_dotted_columns():
    rows = [{"id": i, "price": {"economy": i, "business": 2 * i}} for i in range(30)]
    result = compact(json.dumps(rows))
    expected = 'columns=["id","price.economy","price.business"]\n[0,0,0]\n[1,1,2]\n[2,2,4]'
    assert expected in result.text


def test_it_finds_records_under_any_key():
    rows = [{"code": f"R{i:03d}", "seat": "12A"} for i in range(30)]
    payload = json.dumps({"response": {"meta": {"page": 1}, "zz_unusual_name": rows}})
    result = compact(payload)
    assert result.shape == "json_records"
    assert result.text.startswith('{"response":{"meta":{"page":1}}}\n[response.zz_unusual_name: 30')


def test_it_picks_the_largest_collection():
    small = [{"a": i} for i in range(5)]
    large = [{"flight": f"HAT{i:03d}", "origin": "JFK", "status": "available"} for i in range(20)]
    result = compact(json.dumps({"small": small, "large": large}))
    assert "[large: 20 rows" in result.text
    assert '"small":[{"a":0},{"a":1},{"a":2},{"a":3},{"a":4}]' in result.text


def test_it_summarises_a_list_of_lists_of_records():
    trips = [[{"flight": f"A{i}", "leg": 1}, {"flight": f"B{i}", "leg": 2}] for i in range(10)]
    result = compact(json.dumps(trips), tool_name="search_onestop_flight")
    assert result.text.startswith("[search_onestop_flight: 10 rows, showing first 3; 7 omitted")
    assert '[["A0",1],["B0",2]]' in result.text


def test_it_summarises_a_map_of_records_keyed_by_their_id():
    variants = {f"{i:010d}": {"item_id": f"{i:010d}", "available": True} for i in range(12)}
    result = compact(json.dumps({"name": "Laptop", "variants": variants}))
    assert "[variants: 12 rows keyed by item_id, showing first 3; 9 omitted" in result.text
    assert '["0000000000",true]' in result.text


def test_it_labels_a_top_level_list_with_the_tool_name():
    result = compact(catalogue(25), tool_name="ignored_for_nested")
    assert "[items: 25 rows" in result.text
    top = json.dumps([{"sku": i, "name": "x"} for i in range(25)])
    assert compact(top, tool_name="list_items").text.startswith("[list_items: 25 rows")
    assert compact(top).text.startswith("[rows: 25 rows")


def test_it_leaves_tool_call_arguments_alone():
    calls = [{"function": {"name": "f", "arguments": "{}"}, "id": f"c{i}"} for i in range(30)]
    result = compact(json.dumps({"tool_calls": calls, "arguments": calls}))
    assert result.shape == "json_object"
    assert result.text.count('"id":"c29"') == 2


def test_it_leaves_every_entry_of_a_lookup_map_of_strings():
    airports = {f"A{i:02d}": f"City number {i}" for i in range(40)}
    result = compact(json.dumps(airports))
    assert result.shape == "json_object"
    assert json.loads(result.text) == airports


def test_it_keeps_only_safety_rows_when_asked_for_no_head_rows():
    result = compact(catalogue(25, flagged=(9,)), head_rows=0)
    assert "SKU-0009" in result.text
    assert "SKU-0000" not in result.text
    assert result.rows_kept == 1


def test_it_treats_json_with_a_duplicate_key_as_text():
    payload = '{"a": 1, "a": 2, "pad": "' + "x" * 500 + '"}'
    assert compact(payload).shape != "json_object"


def test_it_treats_json_with_a_duplicate_key_inside_a_row_as_text():
    rows = ", ".join(f'{{"id": {i}, "note": "a:b"}}' for i in range(30))
    payload = f'{{"rows": [{rows}, {{"id": 30, "id": 31}}]}}'
    assert compact(payload).shape not in ("json_object", "json_records")


def test_it_treats_json_with_a_duplicate_key_and_an_escape_as_text():
    payload = '{"a": "\\u00e9", "a": 2, "pad": "' + "x" * 500 + '"}'
    assert compact(payload).shape not in ("json_object", "json_records")


def test_it_survives_json_nested_too_deep_to_walk():
    payload = "[" * 100_000 + "]" * 100_000
    result = compact(payload)
    assert len(result.text) <= len(payload)


def test_it_keeps_a_lone_surrogate_escaped():
    payload = json.dumps({"note": "\ud800" + "y" * 500, "pad": " " * 50})
    result = compact(payload)
    result.text.encode("utf-8")  # would raise on an unescaped lone surrogate


def test_it_keeps_a_lone_surrogate_in_a_kept_row_escaped_and_other_characters_as_they_are():
    rows = [{"name": f"Café {i}", "note": "\ud800" if i == 1 else "ok"} for i in range(20)]
    result = compact(json.dumps({"rows": rows}, ensure_ascii=False))
    assert result.shape == "json_records"
    assert '["Café 1","\\ud800"]' in result.text


# ---------------------------------------------------------------------------------------
# Text shapes


def test_it_shrinks_a_listing_to_70_percent_or_less():
    result = compact_case("find_stdlib_modules")
    assert result.shape == "listing"
    assert result.compacted_chars <= 0.7 * result.original_chars


def test_it_keeps_a_safety_named_row_of_a_listing():
    # ``warnings.py`` matches ``warnings``, ``secrets.py`` ``secrets``: an extra row is the
    # cheap side of that choice
    result = compact_case("find_stdlib_modules")
    assert "./warnings.py\n" in result.text and "./secrets.py\n" in result.text
    assert result.safety_rows_kept == 2


def test_it_keeps_the_frame_lines_of_a_search_listing():
    rows = "\n".join(f"/repo/src/module_{i}.py ({i + 1} matches)" for i in range(30))
    head, end = 'Found 465 matches for "parse" in /repo:', 'End of matches for "parse" in /repo'
    payload = f"{head}\n{rows}\n{end}"
    result = compact(payload)
    assert result.shape == "listing"
    assert result.text.startswith('Found 465 matches for "parse" in /repo:\n')
    assert "[… 20 rows omitted (truncated=true) …]" in result.text
    assert result.text.endswith('End of matches for "parse" in /repo')


def test_it_cuts_big_failed_pytest_output_to_20_percent_or_less():
    result = compact_case("pytest_verbose_failed")
    assert result.shape == "test_output"
    assert result.compacted_chars <= 0.2 * result.original_chars


def test_it_keeps_every_failure_of_pytest_output():
    result = compact_case("pytest_verbose_failed")
    original = read("pytest_verbose_failed.txt")
    kept = [line for line in original.splitlines() if line.startswith(("FAILED", "E "))]
    assert kept and all(line in result.text for line in kept)
    assert "3 failed, 240 passed in" in result.text


def test_it_keeps_the_failures_and_verdict_of_unittest_output():
    result = compact_case("unittest_verbose_failed")
    for line in ("FAIL: test_total", "ERROR: test_lookup", "KeyError: 'b'", "FAILED (failures=1"):
        assert line in result.text
    assert "test_item_30" not in result.text


def test_it_keeps_every_frame_of_the_projects_own_code_in_a_stack_trace():
    # the four middle frames are the project's (cli.py, client.py, memset.py line 26,
    # base.py): they were omitted, and the agent went on to open memset.py at line 26
    result = compact_case("nebius_traceback")
    for frame in ("lexicon/bin/lexicon", "cli.py", "client.py", 'memset.py", line 26'):
        assert frame in result.text
    assert 'memset.py", line 144' in result.text
    assert 'requests/models.py", line 1024' in result.text
    assert "frames omitted" not in result.text
    assert result.text == read("nebius_traceback.txt")


def test_it_keeps_the_first_and_last_two_frames_and_omits_the_libraries_between():
    library = '  File "/srv/env/lib/python3.11/site-packages/django/{0}.py", line {1}, in f{1}\n'
    frames = '  File "/srv/app/manage.py", line 22, in <module>\n    main()\n'
    frames += "".join(library.format(name, n) + "    x()\n" for n, name in enumerate("abcd"))
    frames += '  File "/srv/app/shop/views.py", line 9, in cart\n    total = price / count\n'
    result = compact(
        f"Traceback (most recent call last):\n{frames}ZeroDivisionError: division by zero\n"
    )
    assert result.shape == "stack_trace"
    assert "manage.py" in result.text and "shop/views.py" in result.text
    assert "django/d.py" in result.text  # the last two frames, whatever their code
    assert "django/a.py" not in result.text and "django/c.py" not in result.text
    assert "[… 3 frames omitted (truncated=true) …]" in result.text


def test_it_keeps_at_most_twenty_frames_of_the_projects_code_nearest_the_error():
    frame = '  File "/app/rec.py", line {0}, in f{0}\n    f{1}()\n'
    frames = "".join(frame.format(i, i + 1) for i in range(60))
    result = compact(f"Traceback (most recent call last):\n{frames}RecursionError: too deep\n")
    kept = [n for n in range(60) if f"line {n}," in result.text]
    assert kept == [0, *range(38, 60)]  # the first, twenty, and the last two
    assert "[… 37 frames omitted (truncated=true) …]" in result.text


def test_it_keeps_a_warning_frame_in_the_middle_of_a_stack_trace():
    frame = '  File "/usr/lib/python3/m{0}.py", line {0}, in f{0}\n    f{1}()\n'
    frames = "".join(frame.format(i, i + 1) for i in range(9))
    frames = frames.replace("f4()", "warn_user()")
    result = compact(f"Traceback (most recent call last):\n{frames}ValueError: bad\n")
    assert "warn_user()" in result.text
    assert result.text.count("frames omitted") == 2


def test_it_falls_back_to_head_and_tail_when_a_shape_gains_nothing():
    payload = "Traceback (most recent call last):\n" + "  line\n" * 400
    result = compact(payload)
    assert result.shape == "long_text"
    assert result.text.startswith("Traceback (most recent call last):\n  line\n")
    assert "chars omitted (truncated=true)" in result.text


def test_it_keeps_diff_headers_and_changed_lines():
    result = compact_case("swe_agent_submit_diff")
    assert result.shape == "diff"
    assert "@@ -1472,7 +1472,8 @@" in result.text
    assert "+        # round to nearest int" in result.text
    assert "diff lines omitted: context lines" in result.text


def test_it_keeps_changed_lines_of_a_diff_only_up_to_a_budget():
    removed = "".join(f"-old line {i}\n" for i in range(300))
    payload = f"diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,300 +0,0 @@\n{removed}"
    result = compact(payload)
    assert "-old line 199\n" in result.text
    assert "-old line 200\n" not in result.text
    assert "[… 100 of 304 diff lines omitted" in result.text


def test_it_cuts_long_text_to_head_and_tail_on_line_boundaries():
    result = compact_case("swe_agent_pip_install")
    assert result.shape == "long_text"
    assert result.text.startswith("Obtaining file:///marshmallow-code__marshmallow\n")
    assert "Successfully installed marshmallow-3.13.0\n" in result.text
    assert "chars omitted (truncated=true) …]\nInstalling collected packages" in result.text


def test_it_keeps_a_safety_line_from_the_middle_of_long_text():
    lines = [f"log line {i}: nothing to see here" for i in range(200)]
    lines[100] = "recall notice: batch 7 of the pasta contains gluten"
    result = compact("\n".join(lines))
    assert "\nrecall notice: batch 7 of the pasta contains gluten\n" in result.text
    assert result.text.count("chars omitted (truncated=true)") == 2


PAD = "lorem ipsum dolor sit amet consectetur adipiscing elit\n" * 40
WRAPPED_PAYLOADS = {
    "long_text": (PAD + "Adults take one tablet daily. Do\nnot exceed the stated dose.\n" + PAD),
    "listing": "\n".join([*(f"./pkg/mod_{i}.py" for i in range(15)), "./labels/use", "by_date.txt"])
    + "\n"
    + "\n".join(f"./pkg/tail_{i}.py" for i in range(15)),
    "diff": "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,300 +1,300 @@\n"
    + "".join(f" context {i}\n" for i in range(150))
    + " Adults take one tablet daily. Do\n not exceed the stated dose.\n"
    + "".join(f" context {i}\n" for i in range(150)),
    "test_output": "============ test session starts ============\ncollected 60 items\n"
    + "".join(f"tests/test_a.py::test_{i} PASSED  [ 1%]\n" for i in range(30))
    + "note: the fixture date of\nbirth is fixed\n"
    + "".join(f"tests/test_b.py::test_{i} PASSED  [ 9%]\n" for i in range(30))
    + "============ 60 passed in 0.50s ============\n",
}


@pytest.mark.parametrize("shape", sorted(WRAPPED_PAYLOADS))
def test_it_keeps_every_line_a_safety_phrase_wrapped_across_a_line_break_touches(shape):
    payload = WRAPPED_PAYLOADS[shape]
    start, end = next((a, b) for a, b in safety_spans(payload) if "\n" in payload[a:b])
    first = payload.rfind("\n", 0, start) + 1
    last = payload.find("\n", end)
    result = compact(payload)
    assert result.shape == shape and result.changed
    for line in payload[first:last].split("\n"):
        assert line in result.text.split("\n")
    assert result.safety_rows_kept >= 2


def test_it_cuts_a_single_enormous_line():
    payload = "x" * 20_000 + " expired " + "y" * 20_000
    result = compact(payload)
    assert result.shape == "long_text"
    assert "expired" in result.text
    assert result.compacted_chars < 3 * PIECE_CHARS + 500


def test_it_passes_a_file_view_through_whole():
    original = read("swe_agent_file_view.txt")
    result = compact(original)
    assert result.text == original
    assert result.changed is False


def test_it_keeps_the_swe_agent_footer():
    result = compact_case("nebius_traceback")
    assert result.text.endswith("\n(Open file: n/a)\n(Current directory: /lexicon)\nbash-$")


def test_it_returns_short_payloads_unchanged():
    payload = json.dumps([{"a": i} for i in range(10)], indent=1)[:399]
    result = compact(payload)
    assert (result.text, result.changed, result.rows_total) == (payload, False, 0)


def test_it_never_makes_a_payload_larger():
    # two records with different fields: no table, and a header would only add
    payload = json.dumps([{"a": "x" * 300}, {"b": "y" * 300}], separators=(",", ":"))
    result = compact(payload)
    assert result.text == payload
    assert result.changed is False


def test_it_reports_consistent_counts():
    result = compact(catalogue(30, flagged=(20,)))
    assert result.rows_kept + result.rows_dropped == result.rows_total
    assert result.compacted_chars == len(result.text)
    assert result.original_chars == len(catalogue(30, flagged=(20,)))


# ---------------------------------------------------------------------------------------
# Safety signals


@pytest.mark.parametrize(
    "text",
    [
        "PEANUT_ALLERGEN",
        '"date_of_birth": "1990-01-01"',
        '"dob": "1990-01-01"',
        "Severe lactose intolerance",
        "Best before 2025-01-01",
        "contact jane.doe+x@example.co.uk",
        "card 4111 1111 1111 1111",
        "card 4111 1111 1111 1111 123",  # the CVV after it: the 19 digits fail the check
        "risk of anaphylaxis",
        '"birthday": "1990-01-01"',
        '"cvv": "123"',
        "card: 4111111111111111 123 exp",
        "ref 12 4111-1111-1111-1111",
        r"C:\data\recalls\2024.csv",  # a backslash before r, n or t is not an escape here
        r"D:\food\nuts.txt",
        r'{"file": "C:\\lab\\toxic\\x.txt"}',  # an escaped backslash in JSON
        "DO NOT re-run the same failed edit command",
        "product recalled",
        "Contraindicated with aspirin",
    ],
)
def test_it_recognises_a_safety_signal(text):
    assert has_safety_signal(text)


@pytest.mark.parametrize(
    "text",
    [
        "DeprecationWarning raised in adobe.py",
        "order 4111111111111112",  # fails the Luhn check: not a card number
        "order 4111111111111112 123",  # nor with a short group after it
        "1 2 3 4 5 6 7 8 9 1 2 3 4 5 6 7",  # groups shorter than a card's four digits
        "created 1700000000004",  # an epoch-millisecond timestamp: passes Luhn, no card network
        "item_id 8997785118, price 2674.4",
        "telephoned the unwarned criticality desk",
    ],
)
def test_it_ignores_words_that_only_contain_a_safety_term(text):
    assert not has_safety_signal(text)


# ---------------------------------------------------------------------------------------
# Properties

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=8) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=60,
)
SHAPED_LINES = st.sampled_from(
    [
        "Traceback (most recent call last):",
        '  File "/app/x.py", line 3, in f',
        "    call()",
        "ValueError: bad value",
        "diff --git a/x b/x",
        "--- a/x",
        "+++ b/x",
        "@@ -1,2 +1,2 @@",
        "+added line",
        "-removed line",
        " context line",
        "tests/test_x.py::test_a PASSED                [ 10%]",
        "FAILED tests/test_x.py::test_b - assert 0",
        "==== 1 failed, 2 passed in 0.12s ====",
        "./src/pkg/module.py",
        "src/a.py:12:def f():",
        "[File: /repo/a.py (20 lines total)]",
        "(Current directory: /repo)",
        "",
    ]
)
SAFETY_LINES = st.sampled_from(
    [
        "WARNING: contains peanuts",
        "expires 2024-01-01",
        "contact: jane@example.com",
        "  severity: critical",
        "+# do not remove this guard",
    ]
)
PLAIN = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PLAIN
@given(st.text(max_size=3000))
def test_it_never_raises_or_grows_on_any_text(text):
    result = compact(text)
    assert len(result.text) <= len(text)
    assert result.changed == (len(result.text) < len(text))
    assert result.changed or result.text == text
    assert compact(text) == result


@PLAIN
@given(JSON_VALUES, st.sampled_from([None, 1, 2]))
def test_it_never_raises_or_grows_on_any_json(value, indent):
    text = json.dumps(value, indent=indent)
    result = compact(text, tool_name="t")
    assert len(result.text) <= len(text)
    assert result.rows_kept + result.rows_dropped == result.rows_total


@PLAIN
@given(
    st.integers(min_value=20, max_value=40),
    st.data(),
    st.text(alphabet="bfkmqz_", min_size=1, max_size=12),
)
def test_it_always_keeps_the_safety_row_of_a_catalogue(size, data, key):
    flagged = data.draw(st.integers(min_value=0, max_value=size - 1))
    cells = st.integers(min_value=-10_000, max_value=10_000)
    extra = data.draw(st.dictionaries(st.sampled_from("tvxy"), cells, max_size=3))
    rows = [{"sku": f"SKU-{i:04d}", "qty": i, **extra} for i in range(size)]
    rows[flagged] = {**rows[flagged], "note": "PEANUT_ALLERGEN warning"}
    result = compact(json.dumps({key: rows}))
    assert f'"SKU-{flagged:04d}"' in result.text
    assert "truncated=true" in result.text
    assert result.safety_rows_kept == 1
    assert result.rows_kept == HEAD_ROWS + (flagged >= HEAD_ROWS)


@PLAIN
@given(st.lists(SHAPED_LINES | SAFETY_LINES | st.text(max_size=60), max_size=300))
def test_it_always_keeps_the_safety_lines_of_text(lines):
    text = "\n".join(lines)
    result = compact(text)
    if text.lstrip()[:1] in ("[", "{"):
        return  # JSON is re-serialised: its rows are checked by the catalogue property
    for line in text.split("\n"):
        if len(line) <= PIECE_CHARS and has_safety_signal(line):
            assert line in result.text


WRAPPED_PHRASES = st.sampled_from(
    ["Adults: Do\nnot exceed the dose", " best\n before 2025-01-01", "date of\nbirth: 1990"]
)


@PLAIN
@given(st.lists(SHAPED_LINES | WRAPPED_PHRASES, max_size=300), st.booleans())
def test_it_always_keeps_every_line_a_wrapped_safety_phrase_touches(lines, padded):
    text = "\n".join(lines)
    text = f"{PAD}{text}\n{PAD}" if padded else text
    if text.lstrip()[:1] in ("[", "{"):
        return  # JSON is re-serialised: its rows are checked by the catalogue property
    result = compact(text)
    for start, end in safety_spans(text):
        stop = text.find("\n", end)
        touched = text[text.rfind("\n", 0, start) + 1 : len(text) if stop < 0 else stop]
        for line in touched.split("\n"):
            assert len(line) > PIECE_CHARS or line in result.text


SCAN_PIECES = [
    "4111 1111 1111 1111",
    "4111111111111111 123",
    "Warning",
    "dob",
    "1990-01-01",
    " ",
    "x@y.io",
    "12345",
]
SCAN_PIECES += ["-", "peanut", "İ", "update", "do not", "555", "(", ") ", ".", "+1 ", "٤٥"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(SCAN_PIECES), max_size=20).map("".join))
def test_the_fast_safety_scan_finds_what_a_full_scan_finds(text):
    assert sorted(safety_spans(text)) == full_scan(text)


ASCII_PIECES = [
    *("WARNING", "warnings", "unwarned", "Use by", "use_by", "USE -_ by", "user by", "use", "by"),
    *("date of birth", "Date-Of_Birth", "date", "of", "birth", "dateof", "DOB", "adobe", "do"),
    *("not", "Do Not", "do\tnot", "donot", "best before", "Best", "before", "phone", "Phones"),
    *("smartphone", "pii", "social security", "a@b.co", "@", ".uk", "4111 1111 1111 1111"),
    *("4111-1111-1111-1112", "1700000000004", "12", "0", " ", "_", "-", ":", "\n", ".", "x"),
    *("555", "4567", "45", "(", ")", "+1", "123-45-6789", "(555) 123-4567", "555.123.4567"),
]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(ASCII_PIECES), max_size=24).map("".join))
def test_it_reads_ascii_text_for_safety_as_a_full_scan_does(text):
    full = full_scan(text)
    assert has_safety_signal(text) == bool(full)
    assert sorted(safety_spans(text)) == full


@PLAIN
@given(JSON_VALUES)
def test_it_writes_json_as_json_dumps_does(value):
    assert dumps(value) == json.dumps(value, ensure_ascii=False, separators=(",", ":"))


@PLAIN
@given(JSON_VALUES, st.sampled_from([None, 2]), st.booleans())
def test_it_reads_every_json_document_without_a_duplicate_key_as_json(value, indent, ascii):
    text = json.dumps(value, indent=indent, ensure_ascii=ascii)
    assert compact_json(text, tool_name=None, head_rows=3, signal=has_safety_signal) is not None


@PLAIN
@given(JSON_VALUES, JSON_VALUES, st.text(max_size=5), st.booleans(), st.booleans())
def test_it_reads_json_with_a_duplicate_key_anywhere_as_text(first, second, key, nested, ascii):
    name = json.dumps(key, ensure_ascii=ascii)
    pair = f"{name}: {json.dumps(first, ensure_ascii=ascii)}, {name}: "
    pair += json.dumps(second, ensure_ascii=ascii)
    pad = json.dumps("x: y" * 100)
    text = f'[{{"id": 1}}, {{{pair}}}, {pad}]' if nested else f'{{{pair}, "pad": {pad}}}'
    assert compact_json(text, tool_name=None, head_rows=3, signal=has_safety_signal) is None


def _regenerate() -> None:
    for case in GOLDEN_CASES:
        path = FIXTURES / f"{case}.expected.txt"
        path.write_bytes(compact_case(case).text.encode("utf-8"))
        print("wrote", path.name)


if __name__ == "__main__" and "--regen" in sys.argv:
    _regenerate()


def test_a_long_json_list_of_plain_values_is_summarised_with_its_safety_values():
    paths = [f"src/pkg/file{i}.py" for i in range(2000)]
    paths[1500] = "src/pkg/RECALLED_batch.py"
    compacted = compact(json.dumps({"root": "/repo", "files": paths}))
    assert compacted.text == "\n".join(
        [
            '{"root":"/repo"}',
            "[files: 2000 rows, showing 4 (first 3 + 1 safety-flagged); 1996 omitted"
            " (truncated=true)]",
            '"src/pkg/file0.py"',
            '"src/pkg/file1.py"',
            '"src/pkg/file2.py"',
            '"src/pkg/RECALLED_batch.py"',
        ]
    )
    assert (compacted.rows_dropped, compacted.safety_rows_kept) == (1996, 1)


def test_a_short_json_list_of_ids_and_any_list_beside_records_stays_whole():
    reservations = {"user_id": "mia_li_3668", "reservations": [f"R{i:05d}" for i in range(12)]}
    assert json.loads(compact(json.dumps(reservations)).text) == reservations
    rows = [{"id": i, "note": "in stock"} for i in range(25)]
    payload = {"items": rows, "ids": list(range(300))}
    assert json.dumps(list(range(300)), separators=(",", ":")) in compact(json.dumps(payload)).text


def test_a_json_row_whose_safety_phrase_is_wrapped_by_an_escaped_line_break_is_kept():
    rows = [{"id": i, "note": "take one daily"} for i in range(30)]
    rows[20]["note"] = "Take one daily. Do\nnot exceed two."  # "\n" in JSON: a backslash, n
    compacted = compact(json.dumps({"items": rows}))
    assert compacted.safety_rows_kept == 1
    assert "not exceed two" in compacted.text


def test_a_json_payload_whose_bulk_is_one_long_string_is_cut_inside_the_string():
    lines = [f"line {i} of the file" for i in range(2000)]
    lines[1200] = "WARNING: do not run as root"
    payload = json.dumps({"path": "src/a.py", "content": "\n".join(lines)})
    compacted = compact(payload)
    kept = json.loads(compacted.text)
    assert kept["path"] == "src/a.py"
    assert "WARNING: do not run as root" in kept["content"]
    assert "chars omitted (truncated=true)" in kept["content"]
    assert compacted.compacted_chars < len(payload) // 10
    assert (compacted.shape, compacted.safety_rows_kept) == ("json_object", 1)
    assert compacted.rows_dropped > 0


def test_a_number_a_float_would_change_keeps_the_payload_out_of_the_json_rewrite():
    # rewritten, 12345678901234567.89 would come back as 1.2345678901234568e+16 and 1e400
    # as Infinity, which is not even JSON
    rows = ",".join(
        f'{{"id":{i},"name":"item {i}","desc":"a long description"}}' for i in range(30)
    )
    for number in ("12345678901234567.89", "1e400", "9007199254740993.0"):
        doc = f'{{"account":"ACC-1","balance":{number},"rows":[{rows}]}}'
        result = compact(doc)
        assert f'"balance":{number}' in result.text
        assert not result.shape.startswith("json")
    exact = f'{{"account":"ACC-1","balance":10.50,"rows":[{rows}]}}'
    assert compact(exact).shape == "json_records"  # the control: a float that survives


def _passing(name: str, count: int) -> str:
    return "".join(f"=== RUN   {name}{i}\n--- PASS: {name}{i} (0.00s)\n" for i in range(count))


@pytest.mark.parametrize(
    ("output", "kept"),
    [
        (  # go test: the failing test and its message, mid-run
            _passing("TestA", 30)
            + "=== RUN   TestBroken\n    broken_test.go:17: expected 3, got 4\n"
            + "--- FAIL: TestBroken (0.00s)\n"
            + _passing("TestB", 40)
            + "FAIL\nFAIL\tgithub.com/x/y\t0.012s\n",
            ["    broken_test.go:17: expected 3, got 4", "--- FAIL: TestBroken (0.00s)"],
        ),
        (  # Java: the root cause between two runs of frames
            'Exception in thread "main" java.lang.RuntimeException: boom\n'
            + "".join(f"\tat com.x.C{i}.m(C{i}.java:{i})\n" for i in range(40))
            + "Caused by: java.sql.SQLException: Connection refused: db.internal:5432\n"
            + "".join(f"\tat com.y.D{i}.m(D{i}.java:{i})\n" for i in range(40)),
            ["Caused by: java.sql.SQLException: Connection refused: db.internal:5432"],
        ),
        (  # cargo test: the one failing test among passing ones
            "".join(f"test tests::ok{i} ... ok\n" for i in range(60))
            + "test tests::boom ... FAILED\n"
            + "".join(f"test tests::more{i} ... ok\n" for i in range(60)),
            ["test tests::boom ... FAILED"],
        ),
        (  # jest: the failing suite and what it expected
            "".join(f"PASS src/ok{i}.test.js\n  ✓ works ({i} ms)\n" for i in range(40))
            + "FAIL src/bad.test.js\n  ● sums › adds\n    Expected: 3\n    Received: 4\n"
            + "".join(f"PASS src/more{i}.test.js\n  ✓ works ({i} ms)\n" for i in range(40)),
            ["FAIL src/bad.test.js", "  ● sums › adds", "    Expected: 3", "    Received: 4"],
        ),
    ],
    ids=["go", "java", "cargo", "jest"],
)
def test_long_output_keeps_the_failure_lines_it_cuts_around(output, kept):
    # keeping only the head and tail would lose a failure in the middle
    result = compact(output)
    assert result.changed and result.compacted_chars < result.original_chars
    lines = result.text.split("\n")
    assert all(line in lines for line in kept)


def test_long_output_keeps_at_most_twenty_failure_lines_beyond_head_and_tail(monkeypatch):
    import compiler.compact.compact_text

    output = "".join(f"ERROR: row {i} rejected by the upstream validator\n" for i in range(200))

    def kept() -> int:
        return sum(line.startswith("ERROR") for line in compact(output).text.split("\n"))

    with_failures = kept()
    monkeypatch.setattr(compiler.compact.compact_text, "FAILURE_LINES", 0)
    assert with_failures - kept() == 20


@pytest.mark.parametrize(
    "text",
    [
        "contains: shellfish",
        '{"allergens": ["tree nuts"]}',
        "TREE_NUTS",
        "may contain soy",
        "soybeans",
        "sesame oil",
        "milk",
        "eggs",
        "wheat flour",
        "telephone: 555 0100",
        "birthdate 1980-01-01",
        "birth date",
    ],
)
def test_the_major_allergens_and_more_personal_data_are_safety_signals(text):
    # only peanut, gluten and lactose were allergens; telephone and birthdate went unseen
    assert has_safety_signal(text)


@pytest.mark.parametrize(
    "text",
    [
        "Contains: fish",
        "contains dairy",
        "contains_nuts: true",
        "crustaceans",
        "sulphites added",
        '{"expire_date": "2024-06-01"}',
        "will expire soon",
        "best_by: 2024-06-01",
        "sell by 2024-06-01",
        "lot quarantined",
        "contaminated batch",
        "UNSAFE for children",
        "is_hazmat: true",
        "toxic if swallowed",
        "poisonous",
        "password: hunter2",
        "door passcode 4921",
        "contains sulfites",
        "walnuts and cashews",
        "client_secret: abc",
        "api_key: sk-1",
        "contaminants found",
    ],
)
def test_the_words_the_peer_keeps_and_more_expiry_spellings_are_safety_signals(text):
    # fish (the ninth major allergen) and these words are signals, and so are the words
    # the peer keeps: dairy, unsafe, quarantine, contamination and passwords
    assert has_safety_signal(text)
    rows = [{"id": i, "note": "in stock"} for i in range(25)]
    rows[14]["note"] = text
    assert "\n[14," in compact(json.dumps({"items": rows})).text  # the row is kept


@pytest.mark.parametrize(
    "text", ["eggshell white", "milky way", "soyuz", "sesamestreet", "selfish", "donuts"]
)
def test_a_word_that_only_holds_an_allergen_is_no_signal(text):
    assert not has_safety_signal(text)


@pytest.mark.parametrize(
    "text",
    [
        '{"id": 7, "contact": "(555) 123-4567"}',
        "call me on 555-123-4567 tonight",
        "+1 555.123.4567",
        "+1-555-123-4567",
        '{"ref": "123-45-6789"}',
        "customer, 555-867-5309",
    ],
)
def test_a_telephone_number_or_an_ssn_is_a_signal_by_its_value_alone(text):
    # only under a telling key ("phone", "ssn") was such a number kept
    assert has_safety_signal(text)
    assert list(safety_spans(text))


@pytest.mark.parametrize(
    "text",
    [
        "released 2024-05-12",  # a date
        "ORD-555-123-4567",  # part of an identifier
        "v1.555.123.4567",  # part of a version
        "order 5551234567",  # ten digits with no separator: any number
        "SKU 555-123-45678",  # a longer number
        "block 1234-567-8901",
    ],
)
def test_a_number_only_shaped_like_a_telephone_number_is_no_signal(text):
    assert not has_safety_signal(text)
    assert not list(safety_spans(text))


def test_a_row_holding_only_a_telephone_number_is_kept_by_a_compaction():
    rows = [{"id": i, "contact": "none"} for i in range(30)]
    rows[17]["contact"] = "(555) 123-4567"
    result = compact_json(
        json.dumps({"rows": rows}), tool_name=None, head_rows=3, signal=has_safety_signal
    )
    assert "(555) 123-4567" in result.text
    assert result.safety_rows_kept == 1


def test_the_standard_library_of_a_windows_install_is_no_project_code():
    # C:\Python311\Lib\asyncio frames are not the project's and must not crowd out its
    # own frames
    own = '  File "C:\\Users\\dev\\shop\\views.py", line {0}, in f{0}\n    g()\n'
    stdlib = '  File "C:\\Python311\\Lib\\asyncio\\events.py", line {0}, in run\n    h()\n'
    frames = "".join(own.format(n) for n in range(6))
    frames += "".join(stdlib.format(100 + n) for n in range(24))
    result = compact(f"Traceback (most recent call last):\n{frames}RuntimeError: loop closed\n")
    assert all(f'views.py", line {n},' in result.text for n in range(6))
    assert "[… 22 frames omitted (truncated=true) …]" in result.text


def _tools_json(n: int = 30) -> str:
    tools = [{"name": f"tool_{i}", "description": f"Does thing number {i}."} for i in range(n)]
    return json.dumps({"policy": "Never refund more than 500 without approval.", "tools": tools})


@pytest.mark.parametrize("role", ["system", "assistant"])
def test_the_operators_and_the_agents_own_json_is_never_compacted(role):
    # a system prompt written as JSON keeps all 30 of its tool definitions
    from compiler import compile_messages

    own = {"role": role, "content": _tools_json()}
    if role == "assistant":
        own["tool_calls"] = [
            {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
        ]
    answer = [{"role": "tool", "tool_call_id": "c1", "content": "done"}]
    messages = [
        own,
        *(answer if role == "assistant" else []),
        {"role": "user", "content": "Hello, can you help?"},
        {"role": "assistant", "content": "Sure."},
        {"role": "user", "content": "Thanks."},
        {"role": "assistant", "content": "Anything else?"},
    ]
    compiled, tel = compile_messages(messages)
    assert compiled[0]["content"] == own["content"]
    assert tel["tool_payloads_compacted"] == 0


def test_the_same_json_filed_under_user_is_still_a_payload():
    from compiler import compile_messages

    messages = [
        {"role": "user", "content": "List the tools."},
        {"role": "user", "content": _tools_json()},
        {"role": "assistant", "content": "Here they are."},
        {"role": "user", "content": "Thanks."},
        {"role": "assistant", "content": "Anything else?"},
    ]
    compiled, tel = compile_messages(messages)
    assert tel["tool_payloads_compacted"] == 1
    assert "27 omitted (truncated=true)" in compiled[1]["content"]


def test_an_agents_reply_shaped_like_tool_output_is_not_read_for_facts_either():
    # read as speech, the JSON would let a past order's address replace the one the
    # user gave
    from compiler import compile_messages, load_schema

    orders = [{"order_id": f"#W{i}", "shipping_address": f"{10 + i} Oak Street"} for i in range(25)]
    messages = [
        {"role": "user", "content": "Hi, please ship my new order to 45 Elm Road."},
        {"role": "assistant", "content": "Let me look up your past orders."},
        {"role": "user", "content": "Sure."},
        {"role": "assistant", "content": json.dumps({"orders": orders})},
        {"role": "user", "content": "Thanks."},
        {"role": "assistant", "content": "Anything else?"},
    ]
    compiled, tel = compile_messages(messages, schema=load_schema("logistics"))
    assert tel["active_state_slots"] == {"delivery_address": "45 Elm Road"}
    assert messages[3]["content"] in [m["content"] for m in compiled]  # not compacted


def test_a_listing_of_windows_paths_keeps_the_one_a_safety_term_names():
    lines = [f"C:\\repo\\src\\mod{i}.py" for i in range(40)]
    lines[30] = "C:\\repo\\recalls\\lot7_notice.txt"
    result = compact("\n".join(lines))
    assert "truncated=true" in result.text and lines[30] in result.text


def test_every_row_of_a_collection_named_for_a_safety_signal_is_kept():
    items = [{"sku": f"SKU-{i:03d}", "lot": f"L{i}"} for i in range(12)]
    named = compact(json.dumps({"order_id": "O1", "recalled_items": items}))
    plain = compact(json.dumps({"order_id": "O1", "items": items}))
    assert "[recalled_items: 12 rows]" in named.text and named.safety_rows_kept == 12
    assert "SKU-011" in named.text
    assert "omitted (truncated=true)" in plain.text and "SKU-011" not in plain.text

"""Lossless re-encoding of JSON payloads: shorter or left alone, never a value lost."""

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from compiler.compact.lossless import decode, lossless
from compiler.read.formats import formats_many
from compiler.read.jsonio import canonical_dumps
from tests.payload_strategies import payload_objects, payload_values, records

FIXTURES = Path(__file__).parents[2] / "fixtures"


def same_value(text: str, encoded: str) -> bool:
    """Equal JSON values, types and all (True is not 1, 1.0 is not 1)."""
    return canonical_dumps(decode(encoded)) == canonical_dumps(json.loads(text))


def every_payload():
    for path in sorted((FIXTURES / "compact").glob("*.txt")):
        if not path.name.endswith(".expected.txt"):
            yield path.name, path.read_text(encoding="utf-8")
    for path in sorted((FIXTURES / "formats").iterdir()):
        if path.suffix in (".md",) or path.name.endswith(".expected.json"):
            continue
        for _, parsed in formats_many(path.read_text(encoding="utf-8")):
            for message in parsed.messages:
                if message.role in ("tool", "user") and message.content:
                    yield path.name, message.content


def test_every_payload_of_the_fixtures_decodes_to_the_value_it_held_or_is_left_alone():
    encoded = 0
    for name, text in every_payload():
        found = lossless(text)
        if found is not None:
            assert len(found) < len(text), name
            assert same_value(text, found), name
            encoded += 1
    assert encoded >= 5


def test_a_list_of_records_sharing_their_fields_becomes_columns_and_rows():
    text = json.dumps([{"id": f"HAT{i:03}", "prices": {"economy": 100 + i}} for i in range(3)])
    assert lossless(text) == (
        'columns=["id","prices.economy"]\n["HAT000",100]\n["HAT001",101]\n["HAT002",102]'
    )


def test_an_object_holding_lists_of_records_keeps_its_fields_in_place():
    flights = [{"origin": "JFK", "destination": f"LA{i}"} for i in range(4)]
    value = {"id": "4WQ150", "flights": flights, "note": "x"}
    found = lossless(json.dumps(value))
    assert found.splitlines()[:2] == [
        '{"id":"4WQ150","flights":"[rows below]","note":"x"}',
        '"flights" columns=["origin","destination"]',
    ]
    assert decode(found) == value


def test_json_with_no_table_to_make_is_written_without_whitespace():
    text = json.dumps([[{"id": "HAT1", "n": 1}, {"id": "HAT2"}], {"note": None}], indent=2)
    assert lossless(text) == '[[{"id":"HAT1","n":1},{"id":"HAT2"}],{"note":null}]'


def test_a_payload_already_compact_or_not_json_is_left_alone():
    assert lossless('{"id":"A1"}') is None
    assert lossless("Error: reservation not found") is None
    assert lossless('{"a": 1, "a": 2}') is None  # a duplicate key: a value would be lost
    assert lossless('{"balance": 12345678901234567.89}') is None  # no double holds it


def test_a_value_that_reads_as_the_placeholder_still_comes_back():
    value = {"x": "[rows below]", "rows": [{"a": 1}, {"a": 2}]}
    found = lossless(json.dumps(value, indent=2))
    assert found is None or decode(found) == value


@settings(max_examples=300, deadline=None)
@given(payload_values(6) | payload_objects(6) | records(8), st.sampled_from([None, 1, 2]))
def test_any_payload_decodes_to_the_value_it_held(value, indent):
    text = json.dumps(value, indent=indent)
    found = lossless(text)
    if found is not None:
        assert len(found) < len(text)
        assert same_value(text, found)


def test_a_list_of_groups_of_records_becomes_columns_and_one_row_per_group():
    legs = [
        [{"flight": f"HAT{i}{j}", "seats": {"economy": i + j}} for j in range(2)] for i in range(3)
    ]
    found = lossless(json.dumps(legs))
    assert found.splitlines()[:2] == [
        'group columns=["flight","seats.economy"]',
        '[["HAT00",0],["HAT01",1]]',
    ]
    assert decode(found) == legs

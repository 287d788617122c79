"""Value contracts: derived from the patterns, stored in the schema, never circular."""

import json
from pathlib import Path

import pytest

from compiler import list_schemas, load_schema
from compiler.state.contracts import derive_contract, satisfies

VALUES = json.loads((Path(__file__).parents[2] / "fixtures" / "read_path_values.json").read_text())


@pytest.mark.parametrize("name", list_schemas())
def test_stored_contracts_equal_what_the_patterns_derive(name):
    for slot in load_schema(name).slots:
        assert slot.contract == derive_contract([p.pattern for p in slot.patterns]), (
            f"{name}.{slot.name}: patterns changed; "
            "run python tests/bench/derive_contracts.py --write"
        )


@pytest.mark.parametrize("name", list_schemas())
def test_no_contract_rejects_a_value_the_read_path_produced_on_the_corpora(name):
    schema = load_schema(name)
    for slot in schema.slots:
        rejected = [v for v in VALUES[name][slot.name] if not satisfies(slot.contract, v)]
        assert rejected == [], f"{name}.{slot.name} rejects read-path values {rejected[:5]}"


def test_the_read_path_values_fixture_covers_every_slot_that_fires():
    assert sum(len(v) for v in VALUES["travel"].values()) > 100
    assert VALUES["logistics"]["payment_method"]


@pytest.mark.parametrize(
    ("schema", "slot", "value"),
    [
        ("travel", "passenger_id", "None"),
        ("travel", "passenger_id", "Yusuf Jackson"),
        ("travel", "flight_number", "H0MVIE"),
        ("travel", "flight_date", "2024-05-07T13:04:42"),
        ("coding", "failing_test", "HTTPError: 403 Forbidden"),
        ("coding", "failing_test", "SyntaxError: '(' was never closed"),
        ("logistics", "payment_method", "1234567"),
        ("coding", "current_file", "None"),
    ],
)
def test_a_contract_rejects_the_wrong_shaped_values_real_models_declared(schema, slot, value):
    assert not satisfies(load_schema(schema).slot(slot).contract, value)


def test_a_contract_checks_shape_not_truth():
    # "basic economy" on the wrong booking is admissible: a contract cannot catch it.
    assert satisfies(load_schema("travel").slot("cabin_class").contract, "basic economy")

"""The authored schema form: fragments, a reason and examples per pattern, and the
measurement in a generated file beside the schema."""

import fnmatch
import json
import tomllib
from pathlib import Path

import pytest

from compiler import StateDAG, list_schemas, load_schema
from compiler.errors import SchemaError
from compiler.state.patterns import example_failures
from compiler.state.schema import PATTERN_FLAGS, SCHEMA_DIR, measurement_path

ROOT = Path(__file__).resolve().parents[3]
BEFORE = json.loads((ROOT / "tests" / "fixtures" / "schema_patterns.json").read_text())
NOTES = [(name, note) for name in list_schemas() for note in load_schema(name).notes]


def _schema(patterns, fragments=None, **slot):
    data = {"slots": {"ticket": {"patterns": patterns, **slot}}}
    if fragments is not None:
        data["fragments"] = fragments
    return data


def _refusal(data) -> str:
    with pytest.raises(SchemaError) as caught:
        load_schema(data)
    return str(caught.value)


@pytest.mark.parametrize(
    ("name", "note"), NOTES, ids=[f"{name}-{note.slot}-{note.index}" for name, note in NOTES]
)
def test_every_shipped_pattern_says_why_and_passes_its_examples(name, note):
    assert note.reason, f"{name} {note.label}: no reason"
    assert note.matches and note.rejects, f"{name} {note.label}: needs examples of both kinds"
    assert example_failures(note, PATTERN_FLAGS) == []


@pytest.mark.parametrize("name", list_schemas())
def test_the_shipped_schemas_compile_to_the_patterns_they_had_when_written_out_in_full(name):
    schema = load_schema(name)
    patterns = {slot.name: [p.pattern for p in slot.patterns] for slot in schema.slots}
    assert patterns == BEFORE[name]["slots"]
    assert schema.digest == BEFORE[name]["digest"]


@pytest.mark.parametrize("name", list_schemas())
def test_a_shipped_schema_keeps_its_measurement_beside_it_not_inside(name):
    authored = json.loads((SCHEMA_DIR / f"{name}.json").read_text(encoding="utf-8"))
    beside = json.loads(measurement_path(SCHEMA_DIR / f"{name}.json").read_text())
    assert "_measurement" not in authored
    assert load_schema(name).measurement == beside


def test_list_schemas_does_not_list_measurement_files():
    assert list_schemas() == sorted(
        p.name.removesuffix(".json") for p in SCHEMA_DIR.glob("*.json") if p.name.count(".") == 1
    )


def test_the_package_data_ships_every_schema_and_measurement_file():
    globs = tomllib.loads((ROOT / "packaging" / "library" / "pyproject.toml").read_text())["tool"][
        "setuptools"
    ]["package-data"]["compiler"]
    files = [p.relative_to(SCHEMA_DIR.parent).as_posix() for p in SCHEMA_DIR.iterdir()]
    assert [f for f in files if not any(fnmatch.fnmatch(f, g) for g in globs)] == []


def test_the_single_file_form_loads_to_the_same_schema_as_the_authored_one(tmp_path):
    shipped = load_schema("travel")
    old = {
        "name": "travel",
        "_comment": shipped.comment,
        "slots": {
            slot.name: {
                "patterns": slot.plain_patterns,
                "contract": slot.contract,
                "actions": [
                    {"tool": a.tool, "argument": a.argument, "effect": a.effect.value}
                    for a in slot.actions
                ],
                **({"scope": slot.scope} if slot.scope else {}),
            }
            for slot in shipped.slots
        },
        "_measurement": shipped.measurement,
    }
    path = tmp_path / "travel.json"
    path.write_text(json.dumps(old), encoding="utf-8")
    loaded = load_schema(path)
    assert (loaded.digest, loaded.measurement) == (shipped.digest, shipped.measurement)


def test_a_schema_file_given_by_path_reads_the_measurement_beside_it(tmp_path):
    (tmp_path / "tickets.json").write_text(json.dumps(_schema([r"ticket (T-\d+)"])))
    (tmp_path / "tickets.measurement.json").write_text(json.dumps({"transcripts": 3}))
    assert load_schema(tmp_path / "tickets.json").measurement == {"transcripts": 3}


def test_a_measurement_both_inside_and_beside_is_refused(tmp_path):
    (tmp_path / "t.json").write_text(json.dumps({**_schema([r"t (\d)"]), "_measurement": {}}))
    (tmp_path / "t.measurement.json").write_text("{}")
    assert "holds a _measurement and has one beside it" in _refusal(tmp_path / "t.json")


def test_a_measurement_file_is_not_loaded_as_a_schema():
    assert "a schema's measurement, not a schema" in _refusal("travel.measurement")


def test_a_fragment_is_expanded_where_it_is_referenced_and_may_use_another():
    data = _schema(["ticket (?&id)"], {"id": r"(?&prefix)(\d+)", "prefix": "T-"})
    assert load_schema(data).slots[0].patterns[0].pattern == r"ticket T-(\d+)"


@pytest.mark.parametrize(
    "regex", [r"ticket (\d{2,3})", r"ticket (\w+) \{id\}", r"ticket (\w+)\(?&x", r"([(?&y)]+)"]
)
def test_quantifiers_braces_escapes_and_character_classes_are_not_references(regex):
    assert load_schema(_schema([regex])).slots[0].patterns[0].pattern == regex


def test_a_fragment_cycle_is_refused_naming_the_chain():
    data = _schema(["t (?&a)"], {"a": "(?&b)", "b": "(x(?&c))", "c": "(?&b)"})
    assert _refusal(data) == "slot 'ticket' pattern 0: fragment cycle: b → c → b"


@pytest.mark.parametrize(
    ("fragments", "regex", "message"),
    [
        ({}, "t (?&id)", "slot 'ticket' pattern 0: unknown fragment 'id'"),
        ({"id": r"(\d+)", "old": "x"}, "t (?&id)", "fragments no pattern uses: old"),
        ({"id": r"a|(\d)"}, "t (?&id)", "has a '|' outside a group; wrap it in (?:...)"),
        ({"id": r"(\d+"}, "t (?&id)", "fragment 'id' does not compile on its own"),
        ({"Id": r"(\d+)"}, "t (?&Id)", "fragment 'Id': a snake_case name and a regex string"),
        ({}, "t (?&9)", "bad fragment reference at 2"),
    ],
)
def test_a_fragment_that_could_mean_something_else_where_it_is_put_is_refused(
    fragments, regex, message
):
    assert message in _refusal(_schema([regex], fragments))


@pytest.mark.parametrize(
    ("pattern", "message"),
    [
        ({"regex": r"t (\d)"}, "slot 'ticket' pattern 0: needs a 'regex' string and a 'reason'"),
        ({"regex": r"t (\d)", "reason": "r", "match": {}}, "pattern 0: unknown keys match"),
        ({"regex": r"t (\d)", "reason": "r", "matches": ["t 1"]}, "'matches' maps each text"),
        ({"regex": r"t (\d)", "reason": "r", "rejects": "t x"}, "'rejects' is a list of texts"),
    ],
)
def test_a_pattern_object_that_misnames_or_misshapes_a_field_is_refused(pattern, message):
    assert message in _refusal(_schema([pattern]))


def test_a_failing_example_is_reported_with_its_slot_and_pattern():
    pattern = {
        "regex": r"ticket (T-\d)",
        "reason": "a ticket named by its id",
        "matches": {"ticket T-12": "T-12", "see T-3": "T-3"},
        "rejects": ["ticket T-4 was closed"],
    }
    (note,) = load_schema(_schema([r"ticket (\d+)", pattern])).notes[1:]
    assert example_failures(note, PATTERN_FLAGS) == [
        "ticket pattern 1: in 'ticket T-12' it captures 'T-1', not 'T-12'",
        "ticket pattern 1: does not match 'see T-3'",
        "ticket pattern 1: matches 'ticket T-4 was closed', reading 'T-4'",
    ]


def test_plain_string_patterns_and_pattern_objects_mix_in_one_slot():
    pattern = {"regex": r"id (?&id)", "reason": "r"}
    schema = load_schema(_schema([r"ticket (T-\d+)", pattern], {"id": r"(T-\d+)"}))
    assert [p.pattern for p in schema.slots[0].patterns] == [r"ticket (T-\d+)", r"id (T-\d+)"]


def test_fit_schemas_writes_the_measurement_beside_the_schema_and_leaves_the_schema(
    tmp_path, monkeypatch
):
    from tests.bench import fit_schemas

    authored = json.dumps(_schema([r"ticket (T-\d+)"]))
    (tmp_path / "tickets.json").write_text(authored)
    monkeypatch.setattr(fit_schemas, "SCHEMA_DIR", tmp_path)
    fit_schemas.write_measurement("tickets", {"transcripts": 7})
    assert (tmp_path / "tickets.json").read_text() == authored
    assert load_schema(tmp_path / "tickets.json").measurement == {"transcripts": 7}


def test_the_readme_example_schema_loads_and_passes_its_examples():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    start = readme.index('```json\n{"name": "tickets"') + len("```json\n")
    schema = load_schema(json.loads(readme[start : readme.index("```", start)]))
    assert [example_failures(note, PATTERN_FLAGS) for note in schema.notes] == [[]]


GUARDED = {
    "regex": r"\bfor (?&id)",
    "reason": "the ticket a message is about",
    "not_after": r"\bclosed\b",
    "matches": {"Closed T-1. Writing for T-2.": "T-2"},
    "rejects": ["We closed the thread for T-3."],
}


def test_a_guard_voids_a_match_only_where_it_is_said_earlier_in_the_same_sentence():
    schema = load_schema(_schema([GUARDED], {"id": r"(T-\d+)"}))
    assert example_failures(schema.notes[0], PATTERN_FLAGS) == []
    dag = StateDAG(schema)
    assert dag.observe(0, "We closed the thread for T-3.") == []
    assert [o.value for o in dag.observe(1, "Closed T-1. Writing for T-2.")] == ["T-2"]


def test_a_guarded_pattern_keeps_its_guard_in_the_expanded_form_and_in_the_digest():
    authored = load_schema(_schema([GUARDED], {"id": r"(T-\d+)"}))
    plain = load_schema(_schema([{"regex": r"\bfor (T-\d+)", "not_after": r"\bclosed\b"}]))
    unguarded = load_schema(_schema([r"\bfor (T-\d+)"]))
    assert plain.digest == authored.digest != unguarded.digest
    assert [g.pattern for g in plain.slots[0].guards] == [r"\bclosed\b"]
    assert unguarded.slots[0].guards == (None,)


def test_a_state_dag_keeps_a_guard_when_it_adds_patterns_to_the_slot():
    dag = StateDAG(_schema([GUARDED], {"id": r"(T-\d+)"}))
    dag.register_entity_schema("ticket", [r"\bre (T-\d+)"])
    assert [g and g.pattern for g in dag.schema.slots[0].guards] == [r"\bclosed\b", None]
    assert dag.observe(0, "We closed the thread for T-3.") == []


@pytest.mark.parametrize(
    ("pattern", "message"),
    [
        ({"regex": r"for (T-\d+)", "not_after": 3}, "holds a 'regex' and a 'not_after' string"),
        ({"regex": r"for (T-\d+)", "not_after": 3, "reason": "r"}, "'not_after' is a regex"),
        ({"regex": r"for (T-\d+)", "not_after": "(", "reason": "r"}, "does not compile"),
        ({"regex": r"for (T-\d+)", "not_after": 3, "note": "x"}, "unknown keys note"),
    ],
)
def test_a_guard_that_is_not_a_regex_is_refused(pattern, message):
    assert message in _refusal(_schema([pattern]))

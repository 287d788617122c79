"""Shadow replay: the four real captures against the corpus they were made over, captures of
the loopback model, refusals of any other corpus, and declared values scored by records."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from compiler import compile_messages, load_schema, message_to_dict
from labelling.bench.__main__ import main
from labelling.bench.capture_files import corpus_transcripts
from labelling.bench.capture_files import load_capture as load
from labelling.bench.captures_summary import captures_summary
from labelling.bench.declarations import declaration_of, declared_keys, declared_values
from labelling.bench.shadow import Records, ShadowRefused, records_for, shadow
from tests.model_server import ModelServer

ROOT = Path(__file__).resolve().parents[2]
CAPTURES = ROOT / "tests" / "fixtures" / "captures"
NEBIUS = CAPTURES / "nebius-sample.txt"
SEED_CAPTURES = ("14b.json", "7b-after-vocab-fix.json", "7b-before-vocab-fix.json", "run1.json")
TWO_BLOCKS = ROOT / "tests" / "fixtures" / "formats" / "nebius-two-blocks.txt"
RECORDS = ROOT / "tests" / "fixtures" / "records"
AIRLINE = RECORDS / "airline" / "gpt-4o-trajectories-dev.json"
README = ROOT / "README.md"


def block(body: dict) -> str:
    return f"<contextgc-state>{json.dumps(body)}</contextgc-state>"


def shadow_cli(capsys, *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(["shadow", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def model(monkeypatch):
    """A loopback model server, named by the environment as a user names an endpoint."""
    with ModelServer() as server:
        monkeypatch.setenv("CONTEXTGC_CAPTURE_BASE_URL", server.base_url)
        monkeypatch.setenv("CONTEXTGC_CAPTURE_MODEL", "scripted")
        yield server


def capture(corpus: Path, schema: str, out: Path) -> Path:
    assert main(["capture", "--transcript", str(corpus), "--schema", schema, "--out", str(out),
                 "--limit", "1"]) == 0  # fmt: skip
    return out


# -- the four real captures -----------------------------------------------------------------


def readme_block(marker: str) -> str:
    """The fenced block that follows ``<!-- marker -->`` in the README."""
    found = re.search(rf"<!-- {marker} -->\n```[a-z]*\n(.*?)```", README.read_text(), re.S)
    assert found, f"README has no block after <!-- {marker} -->"
    return found.group(1)


def test_shadow_prints_for_the_four_real_captures_exactly_what_the_readme_shows(capsys):
    paths = [str(CAPTURES.relative_to(ROOT) / name) for name in SEED_CAPTURES]
    command = readme_block("shadow-command")
    assert " ".join(command.split()).replace(" \\", "") == " ".join(
        ["python -m labelling.bench shadow --corpus", str(NEBIUS.relative_to(ROOT)),
         "--captures", *paths]
    )  # fmt: skip
    code, out, _ = shadow_cli(capsys, "--corpus", str(NEBIUS), "--captures",
                              *(str(CAPTURES / n) for n in SEED_CAPTURES))  # fmt: skip
    assert code == 0
    assert out == readme_block("shadow-output")


@pytest.mark.parametrize("name", SEED_CAPTURES)
def test_shadow_counts_blocks_malformed_and_wrong_shapes_as_the_compiler_does(name):
    # the compiler's own telemetry, over each turn's raw answer: another path to the same counts
    figures = shadow(load(CAPTURES / name), NEBIUS.read_text())
    turns_by_transcript: dict[str, list] = {}
    for turn in json.loads((CAPTURES / name).read_text())["turns"]:
        turns_by_transcript.setdefault(turn["transcript"], []).append(turn["content"])
    blocks = malformed = rejected = 0
    for contents in turns_by_transcript.values():
        messages = []
        for content in contents:
            messages += [
                {"role": "user", "content": "next"},
                {"role": "assistant", "content": content},
            ]
        _, tel = compile_messages(messages, schema=load_schema("coding"))
        blocks += tel["declarations"]["blocks_stripped"]
        malformed += tel["declarations"]["malformed"]
        rejected += tel["declarations"]["value_shape_rejected"]
    assert (figures["blocks"], figures["malformed"], figures["values"]["wrong_shape"]) == (
        blocks, malformed, rejected
    )  # fmt: skip


@pytest.mark.parametrize("name", SEED_CAPTURES)
def test_the_final_state_split_accounts_once_for_every_key_a_transcript_named(name):
    capture = load(CAPTURES / name)
    figures = shadow(capture, NEBIUS.read_text())
    named = {
        (turn.transcript, key)
        for turn in capture.turns
        for key in declared_keys(declaration_of(turn.content))
    }
    assert sum(figures["final"].values()) == len(named)
    slots = set(load_schema("coding").slot_names)
    in_schema_values = [
        key
        for turn in capture.turns
        for key, _ in declared_values(declaration_of(turn.content))
        if key in slots
    ]
    at = figures["at_turn"]
    assert at["same"] + at["other"] + at["read_path_none"] == len(in_schema_values)
    for row in figures["final_changes"]:
        assert (row["read_path"] is None) == row["outcome"].startswith(("added", "no_value"))
        assert (row["declared"] is None) == (row["outcome"] in ("removed", "no_value"))


# -- refusals --------------------------------------------------------------------------------


def test_shadow_refuses_a_corpus_of_other_transcripts(capsys):
    code, out, err = shadow_cli(capsys, "--corpus", str(AIRLINE), "--captures",
                                str(CAPTURES / "14b.json"))  # fmt: skip
    assert (code, out) == (1, "")
    assert "14b.json was not made over this corpus (id scheme source:ordinal" in err
    assert "'swe-agent-trajectories (vendored slice):0' is not in the corpus" in err


def test_shadow_refuses_a_corpus_that_lacks_some_captured_transcripts(tmp_path, capsys):
    text = NEBIUS.read_text()
    cut = tmp_path / "first-two.txt"
    cut.write_text(text[: text.index("# AnalogJ__lexicon-336#2")])
    code, _, err = shadow_cli(
        capsys, "--corpus", str(cut), "--captures", str(CAPTURES / "14b.json")
    )
    assert code == 1
    assert "'swe-agent-trajectories (vendored slice):2' is not in the corpus" in err
    assert "(vendored slice):1'" not in err


def test_shadow_refuses_a_capture_whose_turns_are_not_assistant_turns_of_the_corpus(tmp_path):
    data = json.loads((CAPTURES / "14b.json").read_text())
    data["turns"][0]["index"] = 2  # a tool result of that transcript
    moved = tmp_path / "moved.json"
    moved.write_text(json.dumps(data))
    with pytest.raises(ShadowRefused, match="vendored slice\\):0 turn 2 is not an assistant turn"):
        shadow(load(moved), NEBIUS.read_text())


def test_shadow_refuses_a_capture_with_a_turn_before_its_transcripts_first_message(tmp_path):
    data = json.loads((CAPTURES / "14b.json").read_text())
    data["turns"][0]["index"] = -1
    moved = tmp_path / "moved.json"
    moved.write_text(json.dumps(data))
    with pytest.raises(ShadowRefused, match="vendored slice\\):0 turn -1 is not an assistant turn"):
        shadow(load(moved), NEBIUS.read_text())


def test_shadow_refuses_a_capture_whose_turn_names_a_transcript_it_does_not_list(model, tmp_path):
    model.reply_with(lambda body: "")
    made = capture(TWO_BLOCKS, "coding", tmp_path / "cap.json")
    data = json.loads(made.read_text())
    data["turns"][0]["transcript"] = "AnalogJ__lexicon-336#4"  # in the corpus, not captured
    made.write_text(json.dumps(data))
    with pytest.raises(ShadowRefused, match="#4 turn 1: a transcript it does not list"):
        shadow(load(made), TWO_BLOCKS.read_text())


def test_shadow_refuses_a_corpus_whose_transcript_changed_after_the_capture(model, tmp_path):
    model.reply_with(lambda body: "")
    made = capture(TWO_BLOCKS, "coding", tmp_path / "cap.json")
    edited = TWO_BLOCKS.read_text().replace("memset", "memcache", 1)
    with pytest.raises(ShadowRefused, match="'AnalogJ__lexicon-336#3' has other messages"):
        shadow(load(made), edited)
    assert shadow(load(made), TWO_BLOCKS.read_text())["turns"] == 7


# -- a capture of the loopback model, replayed ---------------------------------------------------


def test_shadow_splits_what_a_last_turn_declaration_adds_changes_and_agrees_with(model, tmp_path):
    messages = next(iter(corpus_transcripts(NEBIUS.read_text()).values()))
    dicts = [message_to_dict(m) for m in messages]
    read = compile_messages(dicts, schema=load_schema("coding"))[1]["active_state_slots"]
    assert "current_file" in read  # the read path found a file in this real trajectory
    last = {"current_file": read["current_file"], "failing_test": "tests/test_x.py",
            "auth_token": "abc"}  # fmt: skip
    model.script("", "", "", "", "", "", block({"assert": last}))
    figures = shadow(load(capture(NEBIUS, "coding", tmp_path / "c.json")), NEBIUS.read_text())
    failing = "changed" if "failing_test" in read else "added_in_schema"
    expected = {"added_in_schema": 0, "added_off_schema": 1, "changed": 0, "agreed": 1,
                "removed": 0, "no_value": 0}  # fmt: skip
    expected[failing] += 1
    assert figures["final"] == expected
    assert (figures["turns_with_block"], figures["declared"], figures["in_schema"]) == (1, 3, 2)
    failing_then = "other" if "failing_test" in read else "read_path_none"
    at_turn = {"same": 1, "other": 0, "read_path_none": 0, "recorded_read_path_differs": 0}
    at_turn[failing_then] += 1
    assert figures["at_turn"] == at_turn


def test_shadow_counts_turns_whose_recorded_read_path_is_not_what_the_compiler_gives_now(
    model, tmp_path
):
    model.reply_with(lambda body: "")
    made = capture(NEBIUS, "coding", tmp_path / "c.json")
    assert shadow(load(made), NEBIUS.read_text())["at_turn"]["recorded_read_path_differs"] == 0
    data = json.loads(made.read_text())
    data["turns"][3]["read_path"] = {"current_file": "elsewhere.py"}
    made.write_text(json.dumps(data))
    assert shadow(load(made), NEBIUS.read_text())["at_turn"]["recorded_read_path_differs"] == 1


def test_shadow_scores_declared_values_against_the_airline_records(model, tmp_path, capsys):
    # task0-trial0 books HATHAT (economy, HAT136 and a connection) at turn 28; the record
    # comes back at turn 29. Asks are the 15 assistant turns 2, 4, ..., 30 in order.
    replies = [""] * 15
    replies[9] = block({"assert": {"cabin_class": "economy"}})  # turn 20
    replies[13] = block({"assert": {"flight_number": "HAT999", "seat": "12A"}})  # turn 28
    model.script(*replies)
    made = capture(AIRLINE, "travel", tmp_path / "airline.json")
    args = ["--corpus", str(AIRLINE), "--captures", str(made), "--json"]
    code, out, _ = shadow_cli(capsys, *args, "--records", str(RECORDS), "--domain", "airline")
    assert code == 0
    (figures,) = json.loads(out)
    assert figures["records"] == {
        "domain": "airline",
        "corroborated": 1,
        "contradicted": 1,
        "unverifiable": 0,
        "unchecked": 1,
        "contradicted_values": [["task0-trial0", 28, "flight_number", "HAT999"]],
    }


def test_shadow_refuses_records_that_score_another_schema(model, tmp_path):
    model.reply_with(lambda body: "")
    made = capture(AIRLINE, "travel", tmp_path / "airline.json")
    code = main(["shadow", "--corpus", str(AIRLINE), "--captures", str(made),
                 "--records", str(RECORDS), "--domain", "retail"])  # fmt: skip
    assert code == 1


def test_shadow_takes_records_only_with_their_domain(capsys):
    code, _, err = shadow_cli(capsys, "--corpus", str(NEBIUS), "--captures",
                              str(CAPTURES / "14b.json"), "--records", str(RECORDS))  # fmt: skip
    assert code == 2
    assert "--records and --domain go together" in err


def test_the_summary_carries_each_captures_shadow_or_why_there_is_none(tmp_path):
    for name in ("14b.json", "run1.json"):
        (tmp_path / name).write_bytes((CAPTURES / name).read_bytes())
    rows = captures_summary(tmp_path, NEBIUS)
    assert [r["shadow"] for r in rows] == [
        shadow(load(tmp_path / name), NEBIUS.read_text()) for name in ("14b.json", "run1.json")
    ]
    refused = captures_summary(tmp_path, AIRLINE)
    assert all("was not made over this corpus" in r["shadow_refused"] for r in refused)


def test_the_summary_scores_declared_values_by_the_records_of_the_captures_schema(model, tmp_path):
    model.script(*[""] * 13, block({"assert": {"flight_number": "HAT999"}}), "")  # turn 28
    made = capture(AIRLINE, "travel", tmp_path / "airline.json")
    (tmp_path / "14b.json").write_bytes((CAPTURES / "14b.json").read_bytes())
    coding, airline = captures_summary(tmp_path, AIRLINE, RECORDS)  # sorted by name
    expected = shadow(load(made), AIRLINE.read_text(), Records(RECORDS, "airline"))
    assert (airline["shadow"], airline["records_note"]) == (expected, "")
    assert expected["records"]["contradicted_values"] == [
        ["task0-trial0", 28, "flight_number", "HAT999"]
    ]
    assert coding["records_note"] == "no environment has records for the coding schema"


def test_the_summary_says_which_records_files_are_missing(tmp_path):
    records, note = records_for("travel", tmp_path)
    assert records is None
    expected = "airline/db/reservations.json, airline/db/users.json, airline/db/flights.json"
    assert note == f"{tmp_path} has no {expected}"

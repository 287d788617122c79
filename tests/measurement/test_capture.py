"""Capture against a real chat-completions server on loopback that answers as a model would.

The corpus is two real SWE-agent trajectories (``tests/fixtures/formats/nebius-two-blocks.txt``,
7 assistant turns each); ``--limit 1`` keeps to the first, so a capture asks 7 turns.
Runs that must survive a kill run the command line in a subprocess, as a user would.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from compiler import compile_messages, load_schema, message_to_dict
from labelling.bench import capture_plan
from labelling.bench.__main__ import main
from labelling.bench.capture_bill import loop_bill, prompt_text
from labelling.bench.capture_files import FORMAT, corpus_transcripts
from labelling.bench.capture_plan import ASK
from labelling.bench.captures_summary import captures_summary
from tests.model_server import Drop, ModelServer, Slow

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "fixtures" / "formats" / "nebius-two-blocks.txt"
CAPTURES = ROOT / "tests" / "fixtures" / "captures"
README = ROOT / "README.md"
TURNS = 7  # assistant turns of the first transcript
KEY = "sk-test-never-written"


def block(body: dict | str) -> str:
    text = body if isinstance(body, str) else json.dumps(body)
    return f"<contextgc-state>{text}</contextgc-state>"


GOOD = block({"assert": {"current_file": "lexicon/providers/memset.py"}})
REPLIES = [
    GOOD,
    "The agent only read output. " + block({"unsure": {"failing_test": "tests/test_memset.py"}}),
    block("{not json"),  # a malformed block
    block({"assert": {"auth_token": "abc"}}),  # off the schema
    "",  # nothing changed
    GOOD,
    block({"revoke": ["failing_test"]}),
]


@pytest.fixture
def server():
    with ModelServer() as running:
        yield running


@pytest.fixture
def env(server, monkeypatch):
    """The endpoint in the environment, as a user sets it."""
    values = {
        "CONTEXTGC_CAPTURE_BASE_URL": server.base_url,
        "CONTEXTGC_CAPTURE_MODEL": "scripted-7b",
        "CONTEXTGC_CAPTURE_API_KEY": KEY,
    }
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    return values


def capture_args(out: Path, *extra: str) -> list[str]:
    return ["capture", "--transcript", str(CORPUS), "--schema", "coding", "--out", str(out)]


def run_cli(*args: str, env: dict, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "labelling.bench", *args],
        cwd=ROOT,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def cli_capture(out: Path, env: dict, *extra: str) -> subprocess.CompletedProcess:
    return run_cli(*capture_args(out), "--limit", "1", *extra, env=env)


def read(path: Path) -> dict:
    return json.loads(path.read_text())


def first_transcript() -> list[dict]:
    messages = next(iter(corpus_transcripts(CORPUS.read_text()).values()))
    return [message_to_dict(m) for m in messages]


# -- what a capture records ---------------------------------------------------------------


def test_a_capture_records_each_answer_its_declaration_and_the_read_path_at_that_turn(
    server, env, tmp_path
):
    server.script(*REPLIES)
    out = tmp_path / "cap.json"
    assert main([*capture_args(out), "--limit", "1"]) == 0
    data = read(out)
    turns = data["turns"]
    assert (data["format"], data["complete"], data["planned_turns"]) == (2, True, TURNS)
    assert [t["content"] for t in turns] == REPLIES
    assert [t["index"] for t in turns] == [1, 3, 5, 7, 9, 11, 13]
    assert turns[1]["declaration"]["unsure"] == {"failing_test": "tests/test_memset.py"}
    assert (turns[2]["declaration"]["blocks"], turns[2]["declaration"]["malformed"]) == (1, 1)
    assert turns[6]["declaration"]["revoke"] == ["failing_test"]
    messages = first_transcript()
    for turn in turns:
        _, tel = compile_messages(messages[: turn["index"] + 1], schema=load_schema("coding"))
        assert turn["read_path"] == tel["active_state_slots"]


def test_a_capture_sends_the_compiled_prefix_the_protocol_and_the_ask_and_keeps_the_key_out(
    server, env, tmp_path
):
    server.script(*REPLIES)
    out = tmp_path / "cap.json"
    main([*capture_args(out), "--limit", "1"])
    first = server.requests[0]
    assert (first["model"], first["temperature"]) == ("scripted-7b", 0)
    assert "[STATE_PROTOCOL]" in first["messages"][0]["content"]
    assert "current_file, failing_test" in first["messages"][0]["content"]
    assert first["messages"][-1] == {"role": "user", "content": ASK}
    assert server.seen[0].headers["authorization"] == f"Bearer {KEY}"
    assert KEY not in out.read_text()
    assert read(out)["endpoints"] == [server.base_url]


def test_a_capture_records_usage_per_call_and_sums_it(server, env, tmp_path):
    server.script(*REPLIES)
    out = tmp_path / "cap.json"
    main([*capture_args(out), "--limit", "1"])
    data = read(out)
    usages = [t["usage"] for t in data["turns"]]
    assert all(u and u["prompt_tokens"] > 0 for u in usages)
    assert data["usage"]["prompt_tokens"] == sum(u["prompt_tokens"] for u in usages)
    assert data["usage"]["calls_without_usage"] == 0


def test_the_bill_describes_the_prompts_that_went_over_the_wire(server, env, tmp_path):
    server.script(*REPLIES)
    out = tmp_path / "cap.json"
    main([*capture_args(out), "--limit", "1"])
    data = read(out)
    sent = loop_bill([prompt_text(messages) for messages in server.received])
    assert [[t["sent_tokens"], t["cached_tokens"]] for t in data["turns"]] == sent["per_call"]
    assert data["bill"]["compiled"]["billed_tokens"] == sent["billed_tokens"]
    raw = data["bill"]["raw"]
    assert data["bill"]["billed_vs_raw"] == round(sent["billed_tokens"] / raw["billed_tokens"], 3)


def test_the_loop_bill_reads_a_repeated_prefix_at_the_cached_rate():
    bill = loop_bill(["x" * 4000, "x" * 4000 + "y" * 400, "z" * 400], cached_rate=0.5)
    assert bill["per_call"] == [[1000, 0], [1100, 1000], [100, 0]]
    assert bill["billed_tokens"] == 1000 + 100 + 0.5 * 1000 + 100


# -- resuming ------------------------------------------------------------------------------


def test_a_capture_killed_mid_run_resumes_and_asks_only_what_it_lost(server, env, tmp_path):
    out = tmp_path / "cap.json"
    server.script(*REPLIES[:3], Slow("never read", 120), *REPLIES[3:])
    first = subprocess.Popen(
        [sys.executable, "-m", "labelling.bench", *capture_args(out), "--limit", "1"],
        cwd=ROOT,
        env={**os.environ, **env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while len(server.requests) < 4 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(server.requests) == 4
    finally:
        first.kill()
        first.wait(timeout=30)
    assert len(read(out)["turns"]) == 3
    second = cli_capture(out, env)
    assert second.returncode == 0, second.stderr
    assert len(server.requests) == TURNS + 1
    assert [t["content"] for t in read(out)["turns"]] == REPLIES


def test_a_dropped_connection_stops_the_capture_and_a_rerun_costs_one_call(server, env, tmp_path):
    out = tmp_path / "cap.json"
    server.script(*REPLIES[:5], Drop(), *REPLIES[5:])
    stopped = cli_capture(out, env)
    assert stopped.returncode == 1
    assert "run the same command again to resume" in stopped.stderr
    assert (len(read(out)["turns"]), read(out)["complete"]) == (5, False)
    resumed = cli_capture(out, env)
    assert resumed.returncode == 0, resumed.stderr
    assert len(server.requests) == TURNS + 1
    assert read(out)["complete"] is True
    assert [t["content"] for t in read(out)["turns"]] == REPLIES


def test_an_endpoint_answering_with_an_error_stops_the_capture_and_says_so(
    server, env, tmp_path, capsys
):
    server.reply_with(lambda body: GOOD)
    server.status = 503
    out = tmp_path / "cap.json"
    assert main([*capture_args(out), "--limit", "1"]) == 1
    said = capsys.readouterr().err
    assert "the endpoint answered HTTP 503" in said
    assert "0 of 7 turns are saved" in said
    server.status = 200
    assert main([*capture_args(out), "--limit", "1"]) == 0
    assert len(server.requests) == TURNS + 1


def test_a_slow_reply_is_waited_for(server, env, tmp_path):
    out = tmp_path / "cap.json"
    server.script(REPLIES[0], Slow(REPLIES[1], 1.0), *REPLIES[2:])
    assert main([*capture_args(out), "--limit", "1"]) == 0
    assert [t["content"] for t in read(out)["turns"]] == REPLIES


def test_a_reply_slower_than_the_timeout_stops_the_capture_and_is_asked_again(
    server, env, tmp_path, monkeypatch
):
    out = tmp_path / "cap.json"
    server.script(Slow("too late", 30), *REPLIES)
    monkeypatch.setenv("CONTEXTGC_CAPTURE_TIMEOUT", "1")
    assert main([*capture_args(out), "--limit", "1"]) == 1
    assert len(read(out)["turns"]) == 0
    monkeypatch.delenv("CONTEXTGC_CAPTURE_TIMEOUT")
    assert main([*capture_args(out), "--limit", "1"]) == 0
    assert len(server.requests) == TURNS + 1


# -- the fingerprint -----------------------------------------------------------------------


def test_another_model_starts_a_new_file_instead_of_mixing(server, env, tmp_path, monkeypatch):
    server.reply_with(lambda body: GOOD)
    out = tmp_path / "cap.json"
    assert main([*capture_args(out), "--limit", "1"]) == 0
    before = out.read_text()
    monkeypatch.setenv("CONTEXTGC_CAPTURE_MODEL", "scripted-14b")
    assert main([*capture_args(out), "--limit", "1"]) == 0
    assert out.read_text() == before
    (other,) = [p for p in tmp_path.glob("cap-*.json")]
    assert read(other)["model"] == "scripted-14b"
    assert read(other)["fingerprint"] != read(out)["fingerprint"]
    assert len(server.requests) == 2 * TURNS


def test_other_transcripts_start_a_new_file_and_a_rerun_resumes_that_file(server, env, tmp_path):
    server.reply_with(lambda body: GOOD)
    out = tmp_path / "cap.json"
    assert main([*capture_args(out), "--limit", "1"]) == 0
    assert main([*capture_args(out)]) == 0  # both transcripts: another prompt set
    (other,) = [p for p in tmp_path.glob("cap-*.json")]
    assert (read(out)["planned_turns"], read(other)["planned_turns"]) == (TURNS, 2 * TURNS)
    assert main([*capture_args(out)]) == 0  # nothing left to ask
    assert len(server.requests) == 3 * TURNS


def test_a_changed_instruction_changes_the_fingerprint(monkeypatch):
    the_plan = capture_plan.plan(CORPUS.read_text(), "coding", 1)
    before = capture_plan.fingerprint(the_plan, "m")
    monkeypatch.setattr(capture_plan, "ASK", ASK + " Be brief.")
    assert capture_plan.fingerprint(the_plan, "m") != before


# -- the endpoint comes from the environment ----------------------------------------------


def test_a_capture_without_an_endpoint_in_the_environment_is_refused(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("CONTEXTGC_CAPTURE_")}
    result = subprocess.run(
        [sys.executable, "-m", "labelling.bench", *capture_args(tmp_path / "c.json")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1
    assert "set CONTEXTGC_CAPTURE_BASE_URL" in result.stderr
    assert not (tmp_path / "c.json").exists()


def test_a_limit_below_one_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as stopped:
        main([*capture_args(Path("c.json")), "--limit", "0"])
    assert stopped.value.code == 2


def test_the_endpoint_is_not_an_argument(capsys):
    with pytest.raises(SystemExit) as stopped:
        main([*capture_args(Path("c.json")), "--base-url", "http://127.0.0.1:9/v1"])
    assert stopped.value.code == 2


# -- verify --------------------------------------------------------------------------------


def verify_cli(path: Path, capsys) -> tuple[int, str]:
    capsys.readouterr()  # what the capture before it printed
    code = main(["capture", "--verify", "--out", str(path)])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def test_verify_accepts_a_complete_attributed_in_schema_capture(server, env, tmp_path, capsys):
    server.script(*REPLIES)
    out = tmp_path / "cap.json"
    main([*capture_args(out), "--limit", "1"])
    assert verify_cli(out, capsys) == (0, f"{out}: verified (scripted-7b at {server.base_url})\n")


def test_verify_refuses_a_capture_with_no_declarations(server, env, tmp_path, capsys):
    server.reply_with(lambda body: "Nothing changed here.")
    out = tmp_path / "cap.json"
    main([*capture_args(out), "--limit", "1"])
    code, said = verify_cli(out, capsys)
    assert code == 1
    assert "recorded no declarations (7 turns asked)" in said


def test_verify_refuses_a_capture_that_names_no_endpoint_or_model(server, env, tmp_path, capsys):
    server.script(*REPLIES)
    out = tmp_path / "cap.json"
    main([*capture_args(out), "--limit", "1"])
    for field, blank in (("endpoints", []), ("model", "")):
        data = read(out)
        data[field] = blank
        changed = tmp_path / f"no-{field}.json"
        changed.write_text(json.dumps(data))
        code, said = verify_cli(changed, capsys)
        assert code == 1
        assert "does not say which endpoint and model produced it" in said


def test_verify_refuses_a_seed_capture_without_its_endpoint(tmp_path, capsys):
    data = json.loads((CAPTURES / "14b.json").read_text())
    del data["endpoint"]
    path = tmp_path / "14b.json"
    path.write_text(json.dumps(data))
    code, said = verify_cli(path, capsys)
    assert code == 1
    assert "does not say which endpoint and model produced it" in said


def test_verify_refuses_a_capture_whose_keys_name_a_slot_less_than_half_the_time(
    server, env, tmp_path, capsys
):
    off = block({"assert": {"auth_token": "abc", "line_144": "raise"}})
    server.script(GOOD, off, off, "", "", "", "")
    out = tmp_path / "cap.json"
    main([*capture_args(out), "--limit", "1"])
    code, said = verify_cli(out, capsys)
    assert code == 1
    assert "name a schema slot 1 of 5 times (20%), under 50%" in said


def test_verify_refuses_an_unfinished_capture(server, env, tmp_path, capsys):
    server.script(GOOD, GOOD, Drop())
    out = tmp_path / "cap.json"
    assert main([*capture_args(out), "--limit", "1"]) == 1
    code, said = verify_cli(out, capsys)
    assert code == 1
    assert "incomplete: 2 of 7 turns" in said


def test_verify_refuses_the_seed_capture_the_seed_refused(capsys):
    code, said = verify_cli(CAPTURES / "run1.json", capsys)
    assert code == 1
    assert "name a schema slot 11 of 35 times (31%), under 50%" in said


def test_verify_says_a_capture_with_a_damaged_turn_cannot_be_read(tmp_path, capsys):
    data = json.loads((CAPTURES / "14b.json").read_text())
    data["version"], data["format"] = None, FORMAT
    data["turns"] = [{"index": 1, "content": ""}]  # no transcript
    path = tmp_path / "damaged.json"
    path.write_text(json.dumps(data))
    code, said = verify_cli(path, capsys)
    assert code == 1
    assert "a damaged capture (KeyError: 'transcript')" in said


def test_verify_says_a_capture_whose_schema_is_unknown_here_cannot_be_read(tmp_path, capsys):
    data = json.loads((CAPTURES / "14b.json").read_text())
    data["schema"] = "no-such-schema"
    path = tmp_path / "elsewhere.json"
    path.write_text(json.dumps(data))
    code, said = verify_cli(path, capsys)
    assert code == 1
    assert "elsewhere.json: its schema cannot be loaded (unknown schema 'no-such-schema'" in said


# -- the reports page's listing ------------------------------------------------------------


def test_the_summary_lists_every_capture_with_its_verdict_and_names_what_is_not_one(tmp_path):
    for name in ("14b.json", "run1.json"):
        (tmp_path / name).write_bytes((CAPTURES / name).read_bytes())
    (tmp_path / "notes.json").write_text("[]")
    rows = captures_summary(tmp_path)
    assert [r["name"] for r in rows] == ["14b.json", "notes.json", "run1.json"]
    assert (rows[0]["fingerprint"], rows[0]["id_scheme"]) == ("eadcfd7daf89e32b", "source:ordinal")
    assert (rows[0]["refused"], rows[0]["declared"], rows[0]["in_schema"]) == ([], 47, 45)
    assert "error" in rows[1]
    assert rows[2]["refused"] == [
        "its declared keys name a schema slot 11 of 35 times (31%), under 50%"
    ]


def readme_block(marker: str) -> str:
    """The fenced block that follows ``<!-- marker -->`` in the README."""
    found = re.search(rf"<!-- {marker} -->\n```[a-z]*\n(.*?)```", README.read_text(), re.S)
    assert found, f"README has no block after <!-- {marker} -->"
    return found.group(1)


def test_a_dry_run_prints_the_bill_the_readme_shows_and_calls_nothing(capsys, tmp_path):
    args = readme_block("bill-command").replace("\\\n", " ").split()
    assert args[:3] == ["python", "-m", "labelling.bench"]
    capsys.readouterr()
    assert main(args[3:]) == 0
    assert capsys.readouterr().out == readme_block("bill-output")
    assert not (ROOT / "unused.json").exists()


def test_capture_and_shadow_run_without_django():
    # the bench is shared by the site's apps and must never need the site's settings
    code = (
        "import sys, labelling.bench.__main__, labelling.bench.shadow, labelling.bench.records, "
        "labelling.bench.captures_summary; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'django'))"
    )
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert (result.returncode, result.stdout) == (0, "[]\n"), result.stderr

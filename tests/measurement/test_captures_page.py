"""The captures page: the four real captures with the figures the bench's commands print,
the captures that cannot be read or replayed, the empty folder, and who may read it."""

from __future__ import annotations

import html
import json
import re
import shutil
from pathlib import Path

import pytest

from labelling.bench.__main__ import main
from labelling.bench.capture_files import key_figures, load_capture, verify
from labelling.bench.shadow import Records, shadow
from tests.model_server import ModelServer

ROOT = Path(__file__).resolve().parents[2]
CAPTURES = ROOT / "tests" / "fixtures" / "captures"
NEBIUS = CAPTURES / "nebius-sample.txt"
RECORDS = ROOT / "tests" / "fixtures" / "records"
AIRLINE = RECORDS / "airline" / "gpt-4o-trajectories-dev.json"
SEED_CAPTURES = ("14b.json", "7b-after-vocab-fix.json", "7b-before-vocab-fix.json", "run1.json")
PAGE = "/labelling/reports/captures/"


@pytest.fixture
def folder(tmp_path, settings) -> Path:
    """A copy of the four seed captures, named by the settings with their corpus."""
    copied = tmp_path / "captures"
    copied.mkdir()
    for name in SEED_CAPTURES:
        shutil.copy(CAPTURES / name, copied / name)
    settings.CONTEXTGC_CAPTURES_DIR = copied
    settings.CONTEXTGC_CAPTURES_CORPUS = str(NEBIUS)
    settings.CONTEXTGC_CAPTURES_RECORDS = None
    return copied


def section(body: str, name: str) -> str:
    """The page's article for the capture file ``name``."""
    found = re.search(
        rf'<article class="card capture" data-capture="{re.escape(name)}">(.*?)</article>',
        body,
        re.S,
    )
    assert found, f"no section for {name}"
    return found.group(1)


def figure(part: str, key: str) -> tuple[str, str, str]:
    """A figure line's count, N and share, as the page shows them."""
    found = re.search(
        rf'<tr data-figure="{key}"><th scope="row">[^<]*</th><td class="number">([^<]*)</td>'
        r'<td class="number">([^<]*)</td><td>([^<]*)</td></tr>',
        part,
    )
    assert found, f"no figure {key}"
    return found.groups()


def shown(part: str, key: str) -> tuple[int, int | None]:
    count, whole, _ = figure(part, key)
    return int(count), int(whole) if whole else None


def page(login, maintainer) -> str:
    response = login(maintainer).get(PAGE)
    assert response.status_code == 200
    return response.content.decode()


# -- who may read it ----------------------------------------------------------------------


def test_it_requires_signing_in(db, login, folder):
    response = login(None).get(PAGE)
    assert (response.status_code, response["Location"]) == (302, f"/accounts/login/?next={PAGE}")


def test_it_refuses_someone_who_is_not_a_maintainer(outsider, login, folder):
    assert login(outsider).get(PAGE).status_code == 403


def test_it_refuses_a_reviewer_as_the_other_reports_do(reviewer, login, folder):
    assert login(reviewer).get(PAGE).status_code == 403


def test_the_reports_index_links_to_it(maintainer, login):
    body = login(maintainer).get("/labelling/reports/").content.decode()
    assert f'href="{PAGE}"' in body


# -- the four real captures ---------------------------------------------------------------


def test_it_lists_every_capture_in_the_folder_by_name(maintainer, login, folder):
    body = page(login, maintainer)
    assert re.findall(r'data-capture="([^"]+)"', body) == sorted(SEED_CAPTURES)
    assert 'id="corpus-note"' not in body


@pytest.mark.parametrize("name", SEED_CAPTURES)
def test_each_capture_shows_the_figures_the_shadow_functions_give(maintainer, login, folder, name):
    part = section(page(login, maintainer), name)
    capture = load_capture(folder / name)
    keys = key_figures(capture)
    replay = shadow(capture, NEBIUS.read_text())
    assert shown(part, "turns_with_block") == (keys["turns_with_block"], keys["turns"])
    assert shown(part, "malformed") == (keys["malformed"], keys["blocks"])
    assert shown(part, "in_schema") == (keys["in_schema"], keys["declared"])
    assert shown(part, "off_schema") == (replay["off_schema"], replay["declared"])
    named = sum(replay["final"].values())
    for outcome, count in replay["final"].items():
        assert shown(part, outcome) == (count, named)
    at_turn = {k: replay["at_turn"][k] for k in ("same", "other", "read_path_none")}
    for outcome, count in at_turn.items():
        assert shown(part, outcome) == (count, sum(at_turn.values()))
    values = replay["values"]
    assert shown(part, "wrong_shape") == (values["wrong_shape"], values["with_contract"])
    assert f"{len(capture.turns)} of {capture.planned} planned" in part
    assert f"<code>{capture.fingerprint}</code>" in part
    assert html.escape(capture.model) in part and capture.endpoints[0] in part


def test_the_14b_capture_shows_its_known_figures(maintainer, login, folder):
    part = section(page(login, maintainer), "14b.json")
    assert figure(part, "turns_with_block") == ("42", "42", "100%")
    assert figure(part, "malformed") == ("1", "42", "2%")
    assert figure(part, "in_schema") == ("45", "47", "96%")
    assert figure(part, "wrong_shape") == ("19", "45", "42%")
    assert [figure(part, k) for k in ("added_in_schema", "changed", "agreed")] == [
        ("7", "14", "50%"),
        ("2", "14", "14%"),
        ("3", "14", "21%"),
    ]
    assert figure(part, "read_path_none") == ("20", "45", "44%")
    assert "<code>auth_token</code>, <code>credentials</code>" in part
    assert "qwen2.5:14b" in part and "<code>eadcfd7daf89e32b</code>" in part


def test_format_1_captures_say_they_recorded_no_bill_or_usage(maintainer, login, folder):
    part = section(page(login, maintainer), "14b.json")
    assert "Tokens billed: not recorded. Endpoint usage: not recorded." in part


@pytest.mark.parametrize("name", SEED_CAPTURES)
def test_each_capture_carries_the_verdict_verify_gives(maintainer, login, folder, name):
    part = section(page(login, maintainer), name)
    problems = verify(load_capture(folder / name))
    assert ('data-verify="refused"' in part) == bool(problems)
    assert ('data-verify="accepted"' in part) == (not problems)
    assert all(html.escape(why) in part for why in problems)


def test_the_captures_whose_keys_rarely_name_a_slot_are_refused(maintainer, login, folder):
    body = page(login, maintainer)
    why = "its declared keys name a schema slot 11 of 35 times (31%), under 50%"
    for name in ("run1.json", "7b-before-vocab-fix.json"):
        assert 'data-verify="refused"' in section(body, name)
        assert why in section(body, name)
    for name in ("14b.json", "7b-after-vocab-fix.json"):
        assert 'data-verify="accepted"' in section(body, name)


def test_a_coding_capture_says_no_records_score_its_schema(maintainer, login, folder, settings):
    settings.CONTEXTGC_CAPTURES_RECORDS = str(RECORDS)
    part = section(page(login, maintainer), "14b.json")
    assert "Records: no environment has records for the coding schema." in part


@pytest.fixture
def airline_capture(tmp_path, monkeypatch, settings) -> Path:
    """A format-2 capture of the airline slice by a loopback model, alone in the folder,
    with the records named: task0-trial0's record contradicts HAT999 at turn 28 and
    corroborates economy at turn 20."""
    replies = [""] * 15  # the assistant turns 2, 4, ..., 30
    replies[9] = '<contextgc-state>{"assert":{"cabin_class":"economy"}}</contextgc-state>'
    replies[13] = '<contextgc-state>{"assert":{"flight_number":"HAT999"}}</contextgc-state>'
    out = tmp_path / "airline" / "airline.json"
    with ModelServer() as server:
        server.script(*replies)
        monkeypatch.setenv("CONTEXTGC_CAPTURE_BASE_URL", server.base_url)
        monkeypatch.setenv("CONTEXTGC_CAPTURE_MODEL", "scripted")
        args = ["--transcript", str(AIRLINE), "--schema", "travel", "--out", str(out)]
        assert main(["capture", *args, "--limit", "1"]) == 0
    settings.CONTEXTGC_CAPTURES_DIR = out.parent
    settings.CONTEXTGC_CAPTURES_CORPUS = str(AIRLINE)
    settings.CONTEXTGC_CAPTURES_RECORDS = str(RECORDS)
    return out


def test_a_capture_scored_by_records_shows_what_they_corroborate_and_contradict(
    maintainer, login, airline_capture
):
    part = section(page(login, maintainer), "airline.json")
    expected = shadow(
        load_capture(airline_capture), AIRLINE.read_text(), Records(RECORDS, "airline")
    )
    records = expected["records"]
    decided = records["corroborated"] + records["contradicted"]
    assert shown(part, "corroborated") == (records["corroborated"], decided)
    assert [shown(part, k)[0] for k in ("contradicted", "unverifiable", "unchecked")] == [
        records["contradicted"],
        records["unverifiable"],
        records["unchecked"],
    ]
    assert figure(part, "corroborated") == ("1", "2", "50%")
    assert "task0-trial0 turn 28 <code>flight_number</code> = “HAT999”" in part


def test_a_format_2_capture_shows_its_bill_and_the_endpoints_usage(
    maintainer, login, airline_capture
):
    part = section(page(login, maintainer), "airline.json")
    data = json.loads(airline_capture.read_text())
    compiled, usage = data["bill"]["compiled"], data["usage"]
    assert f"compiled {compiled['sent_tokens']} sent, {compiled['billed_tokens']} billed" in part
    assert f"prompt_tokens {usage['prompt_tokens']}" in part
    assert f"<code>{data['fingerprint']}</code>" in part
    assert "15 of 15 planned" in part and "ids formats_many" in part


# -- what cannot be read or replayed ------------------------------------------------------


def test_a_file_that_is_not_a_capture_is_listed_with_why(maintainer, login, folder):
    (folder / "notes.json").write_text("{not json")
    (folder / "list.json").write_text("[]")
    body = page(login, maintainer)
    assert "notes.json: not a readable capture (Expecting property name" in section(
        body, "notes.json"
    )
    assert "list.json: not a capture (a JSON object is expected)" in section(body, "list.json")
    assert len(re.findall(r"data-unreadable", body)) == 2
    assert shown(section(body, "14b.json"), "malformed") == (1, 42)


def test_a_damaged_capture_is_listed_with_why(maintainer, login, folder):
    data = json.loads((CAPTURES / "14b.json").read_text())
    del data["turns"][3]["transcript"]
    (folder / "damaged.json").write_text(json.dumps(data))
    part = section(page(login, maintainer), "damaged.json")
    assert "a damaged capture (KeyError: &#x27;transcript&#x27;)" in part


def test_a_capture_made_over_another_corpus_is_listed_with_shadows_refusal(
    maintainer, login, folder, settings
):
    settings.CONTEXTGC_CAPTURES_CORPUS = str(AIRLINE)
    body = page(login, maintainer)
    for name in SEED_CAPTURES:
        part = section(body, name)
        assert 'data-shadow="refused"' in part
        assert f"{name} was not made over this corpus (id scheme source:ordinal" in part
        assert shown(part, "in_schema")[1] == key_figures(load_capture(folder / name))["declared"]


def test_one_capture_over_another_corpus_beside_the_others(maintainer, login, folder, settings):
    data = json.loads((CAPTURES / "14b.json").read_text())
    for turn in data["turns"]:
        turn["transcript"] = turn["transcript"].replace("(vendored slice)", "(another slice)")
    (folder / "elsewhere.json").write_text(json.dumps(data))
    body = page(login, maintainer)
    assert "elsewhere.json was not made over this corpus" in section(body, "elsewhere.json")
    assert 'data-shadow="refused"' not in section(body, "14b.json")


def test_a_missing_corpus_lists_the_captures_without_a_replay(maintainer, login, folder, settings):
    settings.CONTEXTGC_CAPTURES_CORPUS = str(folder / "gone.txt")
    body = page(login, maintainer)
    assert f"the corpus {folder / 'gone.txt'} cannot be read, so no capture is replayed" in body
    assert shown(section(body, "14b.json"), "in_schema") == (45, 47)
    assert 'data-figure="agreed"' not in body


def test_an_unset_corpus_says_which_setting_to_set(maintainer, login, folder, settings):
    settings.CONTEXTGC_CAPTURES_CORPUS = None
    body = page(login, maintainer)
    assert "CONTEXTGC_CAPTURES_CORPUS is not set, so no capture is replayed" in body
    assert re.findall(r'data-capture="([^"]+)"', body) == sorted(SEED_CAPTURES)


# -- no capture ---------------------------------------------------------------------------


def test_an_empty_folder_says_how_to_make_a_capture(maintainer, login, tmp_path, settings):
    settings.CONTEXTGC_CAPTURES_DIR = tmp_path
    body = page(login, maintainer)
    assert 'id="no-captures"' in body
    assert f"No capture in <code>{tmp_path}</code>" in body
    assert "python -m labelling.bench capture --transcript" in body
    assert "data-capture=" not in body


def test_a_missing_folder_says_how_to_make_a_capture(maintainer, login, tmp_path, settings):
    settings.CONTEXTGC_CAPTURES_DIR = tmp_path / "never-made"
    body = page(login, maintainer)
    assert 'id="no-captures"' in body and "never-made" in body


def test_the_readme_command_the_empty_page_shows_is_the_readmes(
    maintainer, login, tmp_path, settings
):
    settings.CONTEXTGC_CAPTURES_DIR = tmp_path
    body = page(login, maintainer)
    shown_command = re.search(r"<pre><code>(.*?)</code></pre>", body, re.S).group(1)
    readme = (ROOT / "README.md").read_text().replace("\\\n    ", "")
    assert html.unescape(shown_command) in readme

"""The register: last write wins, reaffirmation, caps, precedence."""

import unicodedata

import pytest

from compiler import StateDAG, compile_messages, load_schema
from compiler.facts import Observation, Op, Provenance
from compiler.state.classify import Kind
from compiler.state.register import MAX_FACTS, MAX_VALUE_CHARS, register
from compiler.state.retire import retire, retirement_violations


def obs(slot, value, turn, provenance=Provenance.INFERRED, op=Op.ASSERT):
    return Observation(slot, value, turn, provenance, op=op)


def test_it_lets_the_last_write_win():
    reg = register((obs("f", "a.py", 0), obs("f", "b.py", 3)))
    assert [(e.value, e.superseded_by) for e in reg.history] == [("a.py", 3), ("b.py", None)]
    assert [e.value for e in reg.active] == ["b.py"]


def test_it_treats_a_case_only_repeat_as_a_reaffirmation():
    reg = register((obs("cabin", "Business", 0), obs("cabin", "business", 2)))
    assert len(reg.history) == 1
    assert reg.history[0].supports == (0, 2)
    assert reg.reaffirmations == 1


def test_a_reaffirmation_retires_nothing():
    reg = register((obs("cabin", "economy", 0), obs("cabin", "economy", 2)))
    assert retire(reg, (Kind.SPEECH,) * 6) == ()


def test_a_retirement_check_fires_when_a_live_fact_would_be_stranded():
    reg = register((obs("pay", "card", 0), obs("f", "a.py", 0), obs("f", "b.py", 2)))
    violations = retirement_violations(reg, {0})
    assert [(v.slot, v.value, v.supports) for v in violations] == [("pay", "card", (0,))]
    assert retirement_violations(reg, {1}) == []


def test_a_turn_still_supporting_a_live_fact_is_not_retired():
    reg = register((obs("pay", "card", 0), obs("f", "a.py", 0), obs("f", "b.py", 2)))
    assert retire(reg, (Kind.SPEECH,) * 6) == ()


def test_the_last_two_turns_are_never_retired():
    reg = register((obs("f", "a.py", 3), obs("f", "b.py", 4)))
    assert retire(reg, (Kind.SPEECH,) * 5) == ()


def test_an_inferred_value_never_overwrites_a_declared_one():
    reg = register((obs("f", "a.py", 0, Provenance.DECLARED), obs("f", "b.py", 2)))
    assert [e.value for e in reg.active] == ["a.py"]
    assert [(c.refused_value, c.refused_turn) for c in reg.conflicts] == [("b.py", 2)]


def test_a_declaration_equal_to_an_inferred_value_upgrades_its_provenance():
    # the header names the turn that declared it: turn 0 is the user's, and cannot declare
    reg = register((obs("f", "a.py", 0), obs("f", "a.py", 2, Provenance.DECLARED)))
    assert [(e.turn, e.provenance, e.supports) for e in reg.active] == [
        (2, Provenance.DECLARED, (0, 2))
    ]


def test_it_keeps_at_most_64_facts_and_reports_the_rest():
    many = tuple(obs(f"k{i:03d}", "v", i) for i in range(MAX_FACTS + 6))
    reg = register(many)
    assert len(reg.active) == MAX_FACTS
    assert reg.dropped_over_limit == ("k000", "k001", "k002", "k003", "k004", "k005")


def test_the_caps_apply_to_what_the_model_receives():
    text = " ".join(f"k{i:03d}=v{i}" for i in range(70))
    long_value = "x" * (MAX_VALUE_CHARS + 100)
    slots = {f"slot{i:03d}": [rf"\bk{i:03d}=(\w+)"] for i in range(70)}
    schema = load_schema({**slots, "note": [r"note=(\w+)"]})
    messages = [
        {"role": "user", "content": text + f" note={long_value}"},
        {"role": "assistant", "content": "ok"},
    ]
    compiled, telemetry = compile_messages(messages, schema=schema)
    header = compiled[0]["content"]
    assert header.count("\n  - ") == MAX_FACTS
    assert len(telemetry["state_keys_dropped_over_limit"]) == 71 - MAX_FACTS
    assert "note" in telemetry["active_state_slots"]
    assert "x" * MAX_VALUE_CHARS not in header
    assert all(len(v) <= MAX_VALUE_CHARS for v in telemetry["active_state_slots"].values())


def test_a_turn_that_speaks_and_calls_a_tool_is_never_retired():
    # its text names a file a later turn replaces, but its tool call has a result
    # after it: retiring it would leave that result answering no call
    messages = [
        {"role": "user", "content": "fix the bug"},
        {
            "role": "assistant",
            "content": "Now editing `a.py`.",
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "run", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "a.py"},
        {"role": "assistant", "content": "Now editing `b.py`."},
        {"role": "user", "content": "ok"},
        {"role": "assistant", "content": "done"},
    ]
    out, tel = compile_messages(messages, schema=load_schema("coding"))
    assert tel["retired_turn_indices"] == []
    assert tel["active_state_slots"]["current_file"] == "b.py"
    call_ids = {c["id"] for m in out for c in m.get("tool_calls") or ()}
    assert [m["tool_call_id"] for m in out if m["role"] == "tool"] == ["c1"]
    assert call_ids == {"c1"}


def test_the_users_opening_request_is_never_retired_when_its_one_fact_is_superseded():
    # a real airline opening (tau-bench gpt-4o trajectories, task0): the route and the
    # intent are not slots, so retiring the turn for its date would lose the task itself
    opening = "Hi! I'm looking to book a flight from New York to Seattle on May 20th."
    messages = [
        {"role": "system", "content": "You are an airline agent."},
        {"role": "user", "content": opening},
        {"role": "assistant", "content": "Sure. What is your user id?"},
        {"role": "user", "content": "mia_li_3668. Actually, make it May 21st."},
        {"role": "assistant", "content": "Searching flights for May 21st."},
        {"role": "user", "content": "thanks"},
        {"role": "assistant", "content": "Here they are."},
    ]
    out, tel = compile_messages(messages, schema=load_schema("travel"))
    first = tel["state_history"]["flight_date"][0]
    assert (first["value"], first["turn"]) == ("May 20th", 1)
    assert first["superseded_by"] is not None
    assert 1 not in tel["retired_turn_indices"]
    assert opening in [m["content"] for m in out]


@pytest.mark.parametrize(
    "lead", [{}, {"metadata": {"id": "abc"}}, {"role": "user", "content": " "}]
)
def test_an_empty_or_stray_item_first_does_not_take_the_tasks_protection(lead):
    # a leading {} is no user turn and not the task, so the real opening request keeps
    # the task's protection though its address was superseded
    base = [
        {"role": "user", "content": "Deliver to 402 Oak Street, Apt 5, Springfield, IL 62704."},
        {"role": "assistant", "content": "Sure."},
        {"role": "user", "content": "Actually reroute to 900 Pine Avenue, Suite 12, Chicago."},
        {"role": "assistant", "content": "Rerouted to 900 Pine Avenue, Suite 12, Chicago."},
        {"role": "user", "content": "ok"},
    ]
    out, tel = compile_messages([lead, *base], schema=load_schema("logistics"))
    assert tel["retired_turn_indices"] == []
    assert base[0]["content"] in [m["content"] for m in out]
    if "role" not in lead:  # says nothing and does nothing: skipped, and said so
        assert tel["parse_warnings"] == [
            "line 1: messages[0] has no role, content or tool call; skipped"
        ]


def test_a_user_reply_to_a_fenced_command_is_still_speech_and_its_correction_is_read():
    # an assistant turn ending in a one-line fenced command does not make the user's
    # answer that command's output: the reroute is read and replaces the old address
    messages = [
        {"role": "user", "content": "Deliver order ORD-1 to 402 Oak Street, Apt 5."},
        {"role": "assistant", "content": "Check your app version first:\n```\nshopcli -V\n```"},
        {"role": "user", "content": "It says 2.1. Actually reroute to 900 Pine Avenue, Suite 12."},
        {"role": "assistant", "content": "Got it."},
        {"role": "user", "content": "thanks"},
    ]
    _, tel = compile_messages(messages, schema=load_schema("logistics"))
    assert tel["active_state_slots"] == {"delivery_address": "900 Pine Avenue, Suite 12"}


def test_a_value_spelled_in_another_unicode_composition_is_a_reaffirmation():
    schema = load_schema({"dest": [r"fly to ([^.,]+)"]})
    decomposed = unicodedata.normalize("NFD", "Zürich")
    messages = [
        {"role": "user", "content": "Hi, I need a flight."},
        {"role": "user", "content": "I want to fly to Zürich."},
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": f"Yes, fly to {decomposed}."},
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": "thanks"},
    ]
    _, tel = compile_messages(messages, schema=schema)
    assert (tel["retired_turn_indices"], tel["reaffirmations"]) == ([], 1)
    assert tel["active_state_slots"] == {"dest": "Zürich"}


def test_a_decomposed_path_is_read_and_written_composed():
    said = unicodedata.normalize("NFD", "Now editing `src/café.py`.")
    messages = [{"role": "assistant", "content": said}, {"role": "user", "content": "ok"}]
    _, tel = compile_messages(messages, schema=load_schema("coding"))
    assert tel["active_state_slots"] == {"current_file": "src/café.py"}


def test_a_turn_that_carries_a_safety_signal_is_not_retired_with_its_superseded_fact():
    # the address was superseded, yet the allergy note keeps its turn in context
    note = "my son has a severe peanut allergy, do not substitute items."
    messages = [
        {"role": "user", "content": "Hi, I need help with my order."},
        {"role": "assistant", "content": "Sure."},
        {"role": "user", "content": f"Deliver it to 402 Oak Street, Apt 5. Note: {note}"},
        {"role": "assistant", "content": "Noted."},
        {"role": "user", "content": "Actually reroute to 900 Pine Avenue, Suite 12."},
        {"role": "assistant", "content": "Rerouted to 900 Pine Avenue, Suite 12."},
        {"role": "user", "content": "Thanks."},
        {"role": "assistant", "content": "Bye"},
    ]
    out, tel = compile_messages(messages, schema=load_schema("logistics"))
    assert 2 not in tel["retired_turn_indices"]
    assert any(note in (m["content"] or "") for m in out)
    plain = messages[2]["content"].replace(f" Note: {note}", "")
    calm, _ = compile_messages(
        [*messages[:2], {"role": "user", "content": plain}, *messages[3:]],
        schema=load_schema("logistics"),
    )
    assert plain not in [m["content"] for m in calm]  # the control: without it, it goes


@pytest.mark.parametrize(
    ("pattern", "text", "value"),
    [
        (r"ship to (\w+)|deliver to (\w+)", "please deliver to Boston", "Boston"),
        (r"ship to (\w+)|deliver to (\w+)", "ship to Denver today", "Denver"),
        (r"to ((\d+) \w+ street)", "send it to 12 Elm street", "12 Elm street"),
        (r"(\w+) to (\w+)", "send to Austin", "Austin"),
    ],
)
def test_a_pattern_with_more_than_one_group_reads_the_last_group_that_matched(pattern, text, value):
    # the rule the README states: each alternative may hold its own group, and the group
    # around the whole value wins over one inside it
    dag = StateDAG()
    dag.register_entity_schema("place", [pattern])
    assert [o.value for o in dag.observe(0, text)] == [value]


@pytest.mark.parametrize(
    ("text", "slot", "value"),
    [
        # an explicit correction, the new value right after it: the later statement wins
        (
            "Please ship it to 12 Oak Street. Sorry, my mistake: please ship it to 45 Elm Road.",
            "delivery_address",
            "45 Elm Road",
        ),
        (
            "Ship to 12 Oak Street. Scratch that, ship it to 45 Elm Road.",
            "delivery_address",
            "45 Elm Road",
        ),
        (
            "Pay with PayPal. Correction: pay with Visa. Correction: pay with gift card.",
            "payment_method",
            "gift card",
        ),
        # another address or payment told in passing, after words a correction may use:
        # the first statement stands
        (
            "Please ship it to 12 Oak Street. Actually, my old address was 45 Elm Road, "
            "make sure it doesn't go there.",
            "delivery_address",
            "12 Oak Street",
        ),
        (
            "Ship it to 12 Oak Street. I mean, I used to live at 45 Elm Road but I moved.",
            "delivery_address",
            "12 Oak Street",
        ),
        (
            "I'd like to pay with PayPal. Actually, last time I paid with Visa.",
            "payment_method",
            "PayPal",
        ),
        (
            "Ship it to 12 Oak Street. Make it express. My billing address is 45 Elm Road.",
            "delivery_address",
            "12 Oak Street",
        ),
        ("Charge it to my Visa. My wife paid with PayPal instead.", "payment_method", "Visa"),
        (
            "Deliver to 12 Oak Street. Correction: the gate code is 4921, and my neighbour is "
            "at 14 Oak Street.",
            "delivery_address",
            "12 Oak Street",
        ),
        (
            "Please ship it to 12 Oak Street. Sorry, my billing address is 45 Elm Road.",
            "delivery_address",
            "12 Oak Street",
        ),
    ],
)
def test_a_correction_within_one_turn_is_the_value_the_turn_settles_on(text, slot, value):
    messages = [{"role": "user", "content": text}, {"role": "assistant", "content": "OK."}]
    _, tel = compile_messages(messages, schema=load_schema("logistics"))
    assert tel["active_state_slots"][slot] == value


def test_a_date_written_another_way_is_a_reaffirmation_not_a_conflict():
    # (the airline corpus: said "May 13, 2024", acted 2024-05-13; counted as a conflict)
    said = Observation("flight_date", "May 13, 2024", 2, Provenance.INFERRED)
    acted = Observation("flight_date", "2024-05-13", 4, Provenance.ACTED)
    reg = register((said, acted))
    (entry,) = reg.active  # the acted spelling and turn, the said one still a support
    assert (entry.value, entry.turn, entry.provenance, entry.supports) == (
        "2024-05-13",
        4,
        "acted",
        (2, 4),
    )
    assert reg.conflicts == () and reg.reaffirmations == 1
    # the order the other way: the weaker spelling reaffirms the acted value
    reg = register((Observation("flight_date", "2024-05-13", 2, Provenance.ACTED), said))
    assert reg.conflicts == () and reg.active[0].value == "2024-05-13"


@pytest.mark.parametrize("other", ["May 13", "2025-05-13", "May 14, 2024"])
def test_a_date_without_its_year_or_on_another_day_is_another_value(other):
    acted = Observation("flight_date", "2024-05-13", 2, Provenance.ACTED)
    reg = register((acted, Observation("flight_date", other, 4, Provenance.INFERRED)))
    assert [c.refused_value for c in reg.conflicts] == [other]

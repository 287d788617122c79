"""The shipped schemas: how values are really said, and the readings they must refuse.

Each "reads" case is a sentence copied from the corpus the schema was fitted on,
with the transcript and turn it came from (corpus files under the project's
shared `corpora/` directory; the text is inlined so the suite runs from a fresh
clone). The pitfalls are the ones the peer library hit and this project's
measurement found: menu rows, policy framing, birthdates, "to the", the ordinal
"first", negation, a path in a grep listing.
"""

import pytest

from compiler.errors import SchemaError
from compiler.read.messages import Message
from compiler.state.classify import Kind, classify
from compiler.state.extract import extract, extract_turn
from compiler.state.schema import list_schemas, load_schema
from tests.bench.fit_schemas import precision_block, read_labels


def read(schema: str, text: str, role: str = "user") -> dict[str, str]:
    """What the read path takes from one turn, run through classify like any turn."""
    messages = (Message(role, text),)
    found = extract(messages, classify(messages), load_schema(schema))
    return {obs.slot: obs.value for obs in found}


def raw(schema: str, text: str) -> dict[str, str]:
    """What the patterns alone match, as if the turn were speech."""
    return {obs.slot: obs.value for obs in extract_turn(text, 0, load_schema(schema))}


# (schema, role, sentence, what it must read, source transcript and turn)
READS = [
    # coding: current_file
    (
        "coding",
        "assistant",
        "Let's try opening the `memset.py` file with a corrected path.\n\n"
        "```\nopen lexicon/providers/memset.py 26\n```",
        {"current_file": "lexicon/providers/memset.py"},
        "coding/nebius-sample.txt AnalogJ__lexicon-336#0 t11: the command wins over the prose",
    ),
    (
        "coding",
        "assistant",
        "We should navigate to that line in fields.py to see the relevant code.\n"
        "<command>\nopen src/marshmallow/fields.py 1474\n</command>",
        {"current_file": "src/marshmallow/fields.py"},
        "coding/swe-agent/marshmallow-1867__xml_sys-env_window100.traj t12",
    ),
    (
        "coding",
        "assistant",
        "We'll create a new file called `reproduce.py` and paste the example code into it.",
        {"current_file": "reproduce.py"},
        "coding/swe-agent/marshmallow-1867__function_calling__install-1.traj t2",
    ),
    (
        "coding",
        "assistant",
        "Let's update the `reproduce.py` script to mock the API response.",
        {"current_file": "reproduce.py"},
        "coding/nebius-sample.txt AnalogJ__lexicon-336#4 t9",
    ),
    # coding: failing_test. The corpora hold no such sentence in speech (the slot's
    # precision is unmeasured for that reason); these two are written for the test.
    (
        "coding",
        "assistant",
        "The failing test is tests/test_fields.py::test_timedelta_precision.",
        {"failing_test": "tests/test_fields.py::test_timedelta_precision"},
        "written for the test: no corpus sentence exists",
    ),
    (
        "coding",
        "assistant",
        "The test file tests/test_serialization.py checks the rounding.",
        {"failing_test": "tests/test_serialization.py"},
        "written for the test: no corpus sentence exists",
    ),
    # travel
    (
        "travel",
        "user",
        "Yes, please downgrade all of them to economy class. I just want to make sure I save "
        "some money.",
        {"cabin_class": "economy"},
        "airline/gpt-4o-trajectories-dev.json task2-trial0 t13",
    ),
    (
        "travel",
        "user",
        "Great! Let's go with the Basic Economy option. Can you book that for me, please?",
        {"cabin_class": "Basic Economy"},
        "airline/gpt-4o-trajectories-dev.json task10-trial0 t31",
    ),
    (
        "travel",
        "user",
        "I understand it's a basic economy ticket, but I really need to find a solution.",
        {"cabin_class": "basic economy"},
        "airline/gpt-4o-trajectories-dev.json task18-trial0 t9",
    ),
    (
        "travel",
        "assistant",
        "Here are the details of your current reservation:\n\n- **Trip Type:** One Way\n"
        "- **Cabin Class:** Economy",
        {"cabin_class": "Economy"},
        "airline/gpt-4o-trajectories-dev.json task11-trial0 t8",
    ),
    (
        "travel",
        "user",
        "Sure, my user ID is james_lee_6136, and my reservation ID is XEWRD9.",
        {"passenger_id": "james_lee_6136", "active_reservation": "XEWRD9"},
        "airline/gpt-4o-trajectories-dev.json task13-trial0 t3",
    ),
    (
        "travel",
        "user",
        "Sure, I want to change the reservation under DF89BM.",
        {"active_reservation": "DF89BM"},
        "airline/gpt-4o-trajectories-dev.json task21-trial0 t7",
    ),
    (
        "travel",
        "assistant",
        "Your current reservation (ID: OWZ4XL) is a basic economy one-way trip from Newark (EWR) "
        "to Los Angeles (LAX) with a layover in Miami (MIA) on May 21, 2024.",
        {
            "active_reservation": "OWZ4XL",
            "cabin_class": "basic economy",
            "origin_airport": "EWR",
            "destination_airport": "LAX",
            "flight_date": "May 21, 2024",
        },
        "airline/gpt-4o-trajectories-dev.json task22-trial0 t12",
    ),
    (
        "travel",
        "user",
        "Hi, I need to cancel my flights from MCO to CLT, please.",
        {"origin_airport": "MCO", "destination_airport": "CLT"},
        "airline/few_shot.jsonl line1 t0",
    ),
    (
        "travel",
        "user",
        "I'll go with the first option, Flight HAT136.",
        {"flight_number": "HAT136"},
        "airline/gpt-4o-trajectories-dev.json task0-trial0 t15: and no cabin from 'first'",
    ),
    (
        "travel",
        "user",
        "Could you please go ahead and book the HAT102 flight for me? Thanks!",
        {"flight_number": "HAT102"},
        "airline/gpt-4o-trajectories-dev.json task13-trial2 t23",
    ),
    (
        "travel",
        "user",
        "Sure, it's sofia_kim_7287.",
        {"passenger_id": "sofia_kim_7287"},
        "airline/gpt-4o-trajectories-dev.json task3-trial0 t5",
    ),
    (
        "travel",
        "user",
        "I don't remember the reservation ID, but my user profile should be under "
        "ivan_muller_7015.",
        {"passenger_id": "ivan_muller_7015"},
        "airline/gpt-4o-trajectories-dev.json task11-trial0 t3",
    ),
    (
        "travel",
        "user",
        "Hi! I'm looking to book a flight from New York to Seattle on May 20th.",
        {"flight_date": "May 20th"},
        "airline/gpt-4o-trajectories-dev.json task0-trial0 t1",
    ),
    (
        "travel",
        "user",
        "Hi, I need to reschedule my flight from IAH to SEA from May 23 to May 24, and I'd like "
        "to upgrade to business class for all passengers.",
        {
            "origin_airport": "IAH",
            "destination_airport": "SEA",
            "flight_date": "May 24",
            "cabin_class": "business",
        },
        "airline/gpt-4o-trajectories-dev.json task17-trial2 t1: the new date, not the old one",
    ),
    # logistics
    (
        "logistics",
        "user",
        "Please change it to 101 Highway, New York, 10001.",
        {"delivery_address": "101 Highway, New York, 10001"},
        "retail/few_shot-dev.jsonl line28 t8",
    ),
    (
        "logistics",
        "user",
        "Oops, I see a mistake. The address should be 445 Maple Drive, not 443.",
        {"delivery_address": "445 Maple Drive"},
        "retail/few_shot-dev.jsonl line30 t16",
    ),
    (
        "logistics",
        "assistant",
        'The address has been successfully updated to "445 Maple Drive, Suite 394, Fort Worth, '
        'TX, 76165, USA" for both of your pending orders and your user profile.',
        {"delivery_address": "445 Maple Drive, Suite 394, Fort Worth, TX, 76165"},
        "retail/few_shot-dev.jsonl line30 t25",
    ),
    (
        "logistics",
        "user",
        "Yes, please go ahead and change it to my visa card. Thank you!",
        {"payment_method": "visa"},
        "retail/few_shot-dev.jsonl line1 t14",
    ),
    (
        "logistics",
        "user",
        "Actually, I would prefer a refund through PayPal if possible. Can you arrange that?",
        {"payment_method": "PayPal"},
        "retail/few_shot-dev.jsonl line9 t14",
    ),
    (
        "logistics",
        "user",
        "Yes, please go ahead with the exchange. I'll stick with PayPal for the payment method.",
        {"payment_method": "PayPal"},
        "retail/few_shot-dev.jsonl line30 t34",
    ),
    (
        "logistics",
        "assistant",
        "The refund will be processed to your original payment method, which is your Visa credit "
        "card ending in 7285.",
        {"payment_method": "Visa"},
        "retail/few_shot-dev.jsonl line15 t19",
    ),
    (
        "travel",
        "assistant",
        "You would fly from SFO to DEN and then from DEN to BOS.",
        {"origin_airport": "SFO", "destination_airport": "BOS"},
        "a connection (DEN) is where the next leg starts; the trip ends at BOS",
    ),
    (
        "travel",
        "user",
        "I'd like to change my flight from BOS to MIA to a later date.",
        {"origin_airport": "BOS", "destination_airport": "MIA"},
        "a change of date names the booked trip",
    ),
]


@pytest.mark.parametrize(
    ("schema", "role", "text", "expected", "source"), READS, ids=[c[4] for c in READS]
)
def test_it_reads_a_value_the_way_the_corpus_says_it(schema, role, text, expected, source):
    assert read(schema, text, role) == expected


# (schema, slot, role, sentence, why it must yield nothing for the slot)
PITFALLS = [
    (
        "travel",
        "cabin_class",
        "assistant",
        "Please note that basic economy flights cannot be modified.",
        "policy framing (task5-trial0 t16)",
    ),
    (
        "travel",
        "cabin_class",
        "assistant",
        "Changes to basic economy flights cannot be made.",
        "policy framing right after a trigger word",
    ),
    (
        "travel",
        "cabin_class",
        "assistant",
        "2. Cabin class: Would you prefer basic economy, economy, or business?",
        "a question listing every cabin (task0-trial0 t4)",
    ),
    (
        "travel",
        "cabin_class",
        "user",
        "Would two separate bookings work, one in economy and one in business?",
        "alternatives in a hypothetical",
    ),
    (
        "travel",
        "cabin_class",
        "user",
        "I'm rescheduling my return flight to the first one-stop option.",
        "the ordinal 'first' is not a cabin",
    ),
    (
        "travel",
        "cabin_class",
        "user",
        "I do not want to fly in economy.",
        "negation: not in economy",
    ),
    (
        "travel",
        "cabin_class",
        "assistant",
        "The refund will reach you within 5 to 7 business days.",
        "'to 7 business days' is not a cabin",
    ),
    (
        "travel",
        "flight_date",
        "user",
        "My date of birth is April 5, 1990.",
        "a birthdate",
    ),
    (
        "travel",
        "flight_date",
        "user",
        "The second passenger was born on April 5, 1990.",
        "a birthdate after 'born on'",
    ),
    (
        "travel",
        "flight_date",
        "assistant",
        "Since your reservation was created on 2024-05-01, it is beyond the 24-hour "
        "cancellation window.",
        "the day the booking was made (task10-trial0 t12)",
    ),
    (
        "travel",
        "destination_airport",
        "user",
        "I want to fly from JFK to the west coast.",
        "'to the' is not an airport",
    ),
    (
        "travel",
        "destination_airport",
        "assistant",
        "- **Flights:**\n  - Flight HAT097 from DTW to PHX on 2024-05-17\n"
        "  - Flight HAT251 from PHX to SEA on 2024-05-17",
        "a leg of an itinerary: PHX is the connection (task11-trial0 t8)",
    ),
    (
        "travel",
        "destination_airport",
        "assistant",
        "I'll look for available one-stop flights from MSP to BOS on May 9.",
        "a search is for one leg, not the trip",
    ),
    (
        "travel",
        "destination_airport",
        "user",
        "Could you switch me to a nonstop from MSP to BOS on the same day?",
        "a change asked for names what is wanted, not what is booked",
    ),
    (
        "travel",
        "destination_airport",
        "assistant",
        "A reservation's destination from BOS to SEA cannot be changed.",
        "the new end of a destination change",
    ),
    (
        "travel",
        "passenger_id",
        "user",
        "My email address is yara_garcia_1905@gmail.com.",
        "an e-mail address is not a user id (task24-trial0 t7)",
    ),
    (
        "travel",
        "active_reservation",
        "assistant",
        "Could you please let me know which reservation you would like to change?\n\n"
        "1. Reservation ID: M05KNL\n2. Reservation ID: UHDAHF",
        "a numbered listing of reservations to choose from (task7-trial0 t8)",
    ),
    (
        "coding",
        "current_file",
        "user",
        'Found 1 matches for "memset.py" in /lexicon/lexicon:\n'
        "/lexicon/lexicon/providers/memset.py",
        "a path in a grep listing (nebius AnalogJ__lexicon-336#0 t8)",
    ),
    (
        "coding",
        "current_file",
        "assistant",
        'Let\'s use find_file to see where it is.\n```\nfind_file "fields.py" src\n```',
        "a search names a file it does not act on",
    ),
    (
        "coding",
        "current_file",
        "assistant",
        "Upon reviewing main.py again, dispatcher.py uses a helper.",
        "a file discussed, not acted on",
    ),
    (
        "coding",
        "current_file",
        "assistant",
        "Let's open example.com in a browser.",
        "a domain is not a C file",
    ),
    (
        "coding",
        "failing_test",
        "user",
        "FAILED tests/test_fields.py::test_timedelta - AssertionError",
        "pytest output",
    ),
    (
        "logistics",
        "payment_method",
        "assistant",
        "Confirmed: 402 Oak Street, Apt 5, on the credit card.",
        "a bare 'on the credit card' (the specification's turn 1)",
    ),
    (
        "logistics",
        "payment_method",
        "user",
        "Hi, I was wondering how I can check the balance on my gift card?",
        "a balance question (retail line1 t0)",
    ),
    (
        "logistics",
        "payment_method",
        "assistant",
        "Would you like to proceed with the refund to PayPal or a gift card?",
        "an offered choice",
    ),
    (
        "logistics",
        "payment_method",
        "assistant",
        "Since a refund to PayPal isn't possible in this case, I can only use the original method.",
        "a refusal",
    ),
    (
        "logistics",
        "delivery_address",
        "user",
        "Any price difference should be refunded to a gift card.",
        "money talk is not an address (retail line3 t10)",
    ),
]


@pytest.mark.parametrize(
    ("schema", "slot", "role", "text", "why"), PITFALLS, ids=[c[4] for c in PITFALLS]
)
def test_it_reads_nothing_from_a_pitfall(schema, slot, role, text, why):
    assert slot not in raw(schema, text)
    assert slot not in read(schema, text, role)


# An agent's options menu, as the airline corpus writes it (task0-trial0 t10).
MENU = (
    "Here are the available direct flights from New York (JFK) to Seattle (SEA) on May 20th:\n\n"
    "1. **Flight HAT069**\n   - Departure: 06:00 AM EST\n   - Economy Price: $121\n\n"
    "2. **Flight HAT083**\n   - Departure: 01:00 AM EST\n   - Economy Price: $100\n\n"
    "Please let me know which flight you would like to book."
)


def test_a_menu_row_never_becomes_state():
    messages = (Message("user", "I need a flight to Seattle."), Message("assistant", MENU))
    assert classify(messages)[1] is Kind.MENU
    assert extract(messages, classify(messages), load_schema("travel")) == ()


def test_the_patterns_would_have_read_the_menu_which_is_what_the_exclusion_costs():
    assert raw("travel", MENU)["origin_airport"] == "JFK"


def test_is_never_eats_the_start_of_a_user_id():
    assert read("travel", "My user ID is isabella_anderson_9682.") == {
        "passenger_id": "isabella_anderson_9682"
    }


def test_a_later_clause_after_a_negated_one_is_still_read():
    assert read("travel", "I'm not in economy, I'm in business.") == {"cabin_class": "business"}


@pytest.mark.parametrize("apostrophe", ["'", "\u2019"])
def test_a_negation_is_read_with_either_apostrophe(apostrophe):
    assert read("logistics", f"I don{apostrophe}t want to pay with PayPal.") == {}
    assert read("logistics", f"I won{apostrophe}t pay with Visa.") == {}
    assert read("logistics", "I want to pay with PayPal.") == {"payment_method": "PayPal"}


def test_the_specification_turns_give_different_address_strings():
    first = read("logistics", "Actually reroute to 900 Pine Avenue, Suite 12, Chicago, IL 60601.")
    second = read("logistics", "Rerouted to 900 Pine Avenue, Suite 12.", "assistant")
    assert first == {"delivery_address": "900 Pine Avenue, Suite 12, Chicago, IL 60601"}
    assert second == {"delivery_address": "900 Pine Avenue, Suite 12"}


@pytest.mark.parametrize("name", list_schemas())
def test_every_pattern_has_exactly_one_capture_group(name):
    for slot in load_schema(name).slots:
        for pattern in slot.patterns:
            assert pattern.groups == 1, (slot.name, pattern.pattern)


@pytest.mark.parametrize("name", list_schemas())
def test_every_schema_says_what_it_was_measured_on(name):
    schema = load_schema(name)
    measurement = schema.measurement
    assert measurement["corpus"] and all(isinstance(c, str) for c in measurement["corpus"])
    assert measurement["transcripts"] > 0
    assert measurement["turns"] >= measurement["transcripts"]
    assert set(measurement["slots"]) == set(schema.slot_names)
    for slot, figures in measurement["slots"].items():
        assert isinstance(figures["observations"], int), slot
        assert figures["of_transcripts"] == measurement["transcripts"], slot


@pytest.mark.parametrize("name", list_schemas())
def test_the_precision_figures_are_the_ones_the_label_file_computes(name):
    schema = load_schema(name)
    assert schema.measurement["precision"] == precision_block(schema, read_labels(name))


@pytest.mark.parametrize("name", list_schemas())
def test_every_judged_row_has_a_verdict_and_every_error_says_why(name):
    rows = read_labels(name)["rows"]
    assert rows
    for row in rows:
        assert row["verdict"] in ("correct", "incorrect"), row
        assert row["verdict"] == "correct" or row["note"], row


@pytest.mark.parametrize("name", list_schemas())
def test_a_slot_without_labels_says_why_it_is_unmeasured(name):
    schema = load_schema(name)
    for slot, block in schema.measurement["precision"].items():
        if isinstance(block, str):
            assert block.startswith("unmeasured: ") and len(block) > len("unmeasured: no"), slot


def test_adding_a_slot_to_a_state_dag_keeps_the_schemas_tool_call_mappings():
    from compiler import StateDAG, compile_messages

    call = {"name": "open", "arguments": '{"path": "src/fields.py"}'}
    messages = [
        {"role": "user", "content": "fix it"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c1", "type": "function", "function": call}],
        },
        {
            "role": "tool",
            "tool_call_id": "c1",
            "content": "[File: src/fields.py (1 lines total)]\n1:x",
        },
        {"role": "assistant", "content": "Looking."},
        {"role": "user", "content": "ok"},
    ]
    dag = StateDAG("coding")
    before = compile_messages(messages, schema=dag)[1]["active_state_slots"]
    dag.register_entity_schema("ticket_id", [r"ticket (T-\d+)"])
    after = compile_messages(messages, schema=dag)[1]["active_state_slots"]
    assert before == after == {"current_file": "src/fields.py"}
    assert "ticket_id" in dag.schema.slot_names


def test_the_plain_layout_reads_immutable_as_the_list_it_is_not_as_a_slot():
    schema = load_schema({"a": [r"a is (\w+)"], "immutable": ["a"]})
    assert (schema.slot_names, schema.immutable) == (("a",), frozenset({"a"}))


@pytest.mark.parametrize(
    "data, message",
    [
        ({"a": [r"a is (\w+)"], "immutable": ["b"]}, "'immutable' names no slot of this schema: b"),
        (
            {"slots": {"a": {"patterns": [r"a is (\w+)"], "actions": [
                {"tool": "t", "argument": "x", "commits": "false"}]}}},
            "slot 'a': an action's 'commits' must be true or false",
        ),
    ],
)  # fmt: skip
def test_a_schema_that_says_something_it_cannot_mean_is_refused(data, message):
    with pytest.raises(SchemaError) as caught:
        load_schema(data)
    assert str(caught.value) == message


@pytest.mark.parametrize("patterns", [r"ticket (T-\d+)", [], None])
def test_register_entity_schema_refuses_anything_but_a_list_of_patterns(patterns):
    # a lone string was read a character at a time ("pattern 'o' needs a capture group")
    from compiler import StateDAG

    with pytest.raises(SchemaError, match="patterns must be a non-empty list of strings"):
        StateDAG("coding").register_entity_schema("ticket_id", patterns)


def test_load_schema_names_what_it_was_given_when_that_is_no_schema():
    with pytest.raises(SchemaError, match="not int"):
        load_schema(42)


def test_a_shipped_schema_named_again_is_the_schema_compiled_before():
    """A loop that names its schema on every call compiles its patterns once, and the
    history cache, which knows a schema by identity, resumes its earlier compile."""
    assert load_schema("travel") is load_schema("travel")
    assert load_schema("travel") is not load_schema("logistics")

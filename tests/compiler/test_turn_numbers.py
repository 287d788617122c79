"""Turn numbers name places in the caller's list, even when the reader skipped an item.

``compile_messages`` skips an item that is not a message object (with a warning naming
it). Every turn number it reports afterwards, in telemetry and in the text it writes (the
state header, a recall, a stale-read notice), must still index the list the caller gave:
``messages[tel["retired_turn_indices"][0]]`` is the turn that went.
"""

import json
import re

import pytest

from compiler import compile_messages, compile_transcript, load_schema
from compiler.read.formats import formats

TRAVEL = load_schema("travel")
CODING = load_schema("coding")
LOGISTICS = load_schema("logistics")

# telemetry keys whose values (an int, a list of ints, or a mapping to ints) are turns
TURN_KEYS = {
    "turn",
    "supports",
    "superseded_by",
    "revoked_at",
    "kept_turn",
    "refused_turn",
    "declared_turn",
    "inferred_turn",
    "retired_turn_indices",
}
# telemetry keys that differ for reasons of their own
OWN_KEYS = {"compile_time_ms", "parse_warnings"}
TURN_IN_TEXT = re.compile(r"(\bturns? |\bturn=)(\d+)")


def _call(call_id, name, arguments):
    function = {"name": name, "arguments": json.dumps(arguments)}
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": call_id, "type": "function", "function": function}],
    }


def _declare(**ops):
    return f"<contextgc-state>{json.dumps(ops)}</contextgc-state>"


ORDER = {
    "order_id": "#W100",
    "address": {"address1": "1 Elm Street", "city": "Austin"},
    "items": [{"name": "Lamp", "item_id": "1234567890", "price": 10.5}],
    "status": "pending",
}

HISTORIES = {
    "supersession and stale read": (
        LOGISTICS,
        [
            {"role": "user", "content": "Please ship to 12 Oak Street."},
            {"role": "assistant", "content": "Sure."},
            {"role": "user", "content": "Ship to 900 Pine Avenue, Suite 12. Use my credit card."},
            _call("c1", "get_order_details", {"order_id": "#W100"}),
            {"role": "tool", "tool_call_id": "c1", "content": json.dumps(ORDER)},
            {"role": "assistant", "content": "Found it. Shall I cancel it?"},
            {"role": "user", "content": "yes"},
            _call("c2", "cancel_pending_order", {"order_id": "#W100", "reason": "not needed"}),
            {
                "role": "tool",
                "tool_call_id": "c2",
                "content": json.dumps({**ORDER, "status": "cancelled"}),
            },
            {"role": "assistant", "content": "Done."},
        ],
        {},
    ),
    "declaration conflict, pin and refusal": (
        TRAVEL,
        [
            {"role": "assistant", "content": "Booked." + _declare(pin={"cabin_class": "business"})},
            {"role": "user", "content": "Actually, please book it in economy."},
            {"role": "assistant", "content": _declare(**{"assert": {"cabin_class": "economy"}})},
            {"role": "user", "content": "ok"},
            {"role": "assistant", "content": "Noted." + _declare(frobnicate={"a": 1})},
            {"role": "assistant", "content": "Anything else?"},
        ],
        {},
    ),
    "recall of a retired turn": (
        CODING,
        [
            {"role": "assistant", "content": "Opening `src/a.py` for billing."},
            {"role": "user", "content": "ok"},
            {"role": "assistant", "content": "Now editing `src/b.py`."},
            {"role": "user", "content": "what was the billing file?"},
        ],
        {"recall_query": "billing file"},
    ),
}


def _shifted_text(text, at, by=1):
    """``text`` with every turn number from ``at`` on moved up by ``by``."""

    def move(match):
        turn = int(match.group(2))
        return f"{match.group(1)}{turn + by if turn >= at else turn}"

    return TURN_IN_TEXT.sub(move, text)


def _shifted(value, at, key=None):
    """The telemetry ``value`` as it must read when an item was skipped at ``at``."""
    if isinstance(value, dict):
        if key in TURN_KEYS:  # superseded_by: {slot: turn}
            return {k: _shifted(v, at, "turn") for k, v in value.items()}
        return {k: _shifted(v, at, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_shifted(v, at, key) for v in value]
    if isinstance(value, str):
        return _shifted_text(value, at) if key in ("reason", "problems") else value
    if key in TURN_KEYS and isinstance(value, int) and not isinstance(value, bool):
        return value + 1 if value >= at else value
    return value


def _without(tel):
    return {k: v for k, v in tel.items() if k not in OWN_KEYS}


@pytest.mark.parametrize("name", sorted(HISTORIES))
@pytest.mark.parametrize("cache", [False, True])
@pytest.mark.parametrize("at", [0, 2, "end"])
def test_every_turn_number_indexes_the_callers_list_when_an_item_is_skipped(name, cache, at):
    schema, messages, options = HISTORIES[name]
    at = len(messages) if at == "end" else at
    clean_out, clean_tel = compile_messages(messages, schema=schema, cache=False, **options)
    given = [*messages[:at], ["not", "a", "message"], *messages[at:]]
    out, tel = compile_messages(given, schema=schema, cache=cache, **options)

    assert tel["parse_warnings"] == [
        f"line {at + 1}: messages[{at}] is an array, not a message object; skipped"
    ]
    assert _without(tel) == _shifted(_without(clean_tel), at)
    assert [m.get("content") for m in out] == [
        _shifted_text(m["content"], at) if m.get("content") else m.get("content") for m in clean_out
    ]


def test_the_scenarios_exercise_every_kind_of_turn_number():
    """The comparison above proves nothing for a field none of the histories fills."""
    seen = set()
    for schema, messages, options in HISTORIES.values():
        out, tel = compile_messages(messages, schema=schema, cache=False, **options)
        seen |= {k for k in ("retired_turns", "conflicts", "rejected_writes", "recall") if tel[k]}
        seen |= {"problems"} if tel["declarations"]["problems"] else set()
        seen |= {"stale read"} if any("shown again at turn" in str(m) for m in out) else set()
        seen |= {"header"} if "(turn " in out[0]["content"] else set()
    kinds = {"retired_turns", "conflicts", "rejected_writes", "recall", "stale read", "header"}
    kinds |= {"problems"}
    assert seen == kinds


# a delivery address given, then replaced: the turn that gave it is retired
REROUTE = [
    {"role": "user", "content": "Hi, I need a delivery."},
    {"role": "assistant", "content": "Where to?"},
    {"role": "user", "content": "Please ship to 12 Oak Street."},
    {"role": "assistant", "content": "Sure."},
    {"role": "user", "content": "Ship to 900 Pine Avenue, Suite 12 instead."},
    {"role": "assistant", "content": "Done."},
]


def test_a_retired_index_names_the_turn_that_went_in_the_callers_list():
    messages = ["junk", *REROUTE, {"role": "user", "content": "thanks"}]
    out, tel = compile_messages(messages, schema=LOGISTICS)
    assert tel["retired_turn_indices"] == [3]
    assert messages[3]["content"] == "Please ship to 12 Oak Street."
    assert tel["state"]["delivery_address"]["turn"] == 5
    assert '"900 Pine Avenue, Suite 12" (turn 5 [inferred])' in out[0]["content"]


def test_a_compiled_header_the_caller_passes_back_is_counted_as_the_callers_item():
    once, _ = compile_messages(REROUTE, schema=LOGISTICS)
    assert once[0]["content"].startswith("[ACTIVE_AGENT_STATE]")
    again = [*once, {"role": "user", "content": "thanks"}]
    twice, tel = compile_messages(again, schema=LOGISTICS)
    turn = tel["state"]["delivery_address"]["turn"]
    assert again[turn]["content"] == "Ship to 900 Pine Avenue, Suite 12 instead."
    assert twice[0]["content"].count("[ACTIVE_AGENT_STATE]") == 1


def test_a_transcript_read_from_text_counts_its_turns_as_read():
    text = "user: Hi.\nassistant: Hello.\nuser: Please ship to 12 Oak Street.\n" + (
        "assistant: Sure.\nuser: Ship to 900 Pine Avenue, Suite 12 instead.\n"
        "assistant: Done.\nuser: thanks"
    )
    _, tel, warnings = compile_transcript(text, schema=LOGISTICS)
    assert (tel["retired_turn_indices"], warnings) == ([2], [])
    assert tel["state"]["delivery_address"]["turn"] == 4


def test_a_transcript_of_compiled_output_counts_the_header_it_sets_aside():
    once, _ = compile_messages(REROUTE, schema=LOGISTICS)
    later = [
        {"role": "user", "content": "Sorry, ship to 77 Elm Street after all."},
        {"role": "assistant", "content": "Changed."},
        {"role": "user", "content": "thanks"},
    ]
    text = json.dumps([*once, *later])
    _, tel, _ = compile_transcript(text, schema=LOGISTICS)
    read = formats(text).messages
    assert read[0].content.startswith("[ACTIVE_AGENT_STATE]")
    assert read[tel["state"]["delivery_address"]["turn"]].content == later[0]["content"]
    assert [read[i].content for i in tel["retired_turn_indices"]] == [REROUTE[4]["content"]]

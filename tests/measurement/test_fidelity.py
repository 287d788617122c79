"""The benchmark's fidelity figure: identifiers the agent used later, kept in context."""

import json

from labelling.bench.fidelity import identifier_recall, probes, used_by


def _tool_call(arguments: dict) -> dict:
    function = {"name": "exchange", "arguments": json.dumps(arguments)}
    return {"role": "assistant", "content": None, "tool_calls": [{"function": function}]}


HISTORY = [
    {"role": "user", "content": "I want to exchange the lamp in order #W1234."},
    {"role": "tool", "content": '{"order_id": "#W1234", "items": [{"item_id": "5550001"}]}'},
    {"role": "tool", "content": '{"variants": [{"item_id": "7770002"}, {"item_id": "7770003"}]}'},
    _tool_call({"order_id": "#W1234", "item_ids": ["5550001"], "new_item_ids": ["7770003"]}),
]


def test_a_tool_call_uses_what_its_arguments_name():
    assert used_by(HISTORY[3]) == {"#W1234", "5550001", "7770003"}
    assert used_by(HISTORY[0]) == set()  # only assistant turns use anything


def test_what_the_user_said_is_not_counted_as_learned_from_a_payload():
    (probe,) = probes(HISTORY)
    assert probe.turn == 3 and probe.wanted == {"5550001", "7770003"}
    assert probe.history == HISTORY[:3]


def test_recall_counts_what_the_compiled_history_still_shows():
    def first_rows_only(messages):  # a compactor that keeps only the first variant
        return [
            {**m, "content": m["content"].replace(', {"item_id": "7770003"}', "")} for m in messages
        ], {}

    got = identifier_recall(first_rows_only, [HISTORY])
    assert (got.turns, got.wanted, got.kept, got.rate) == (1, 2, 1, 0.5)


def test_no_probe_no_rate():
    got = identifier_recall(lambda m: (m, {}), [[{"role": "user", "content": "hi"}]])
    assert got.rate is None and got.turns == 0


def test_an_observation_filed_under_user_is_a_payload_not_something_the_user_said():
    # SWE-agent files every tool result under ``user``: a file view is a payload
    view = "[File: /repo/src/fields.py (1997 lines total)]\n1474:    def _format_num(self, value):"
    history = [
        {"role": "user", "content": "Fix the rounding in TimeDelta serialization."},
        {"role": "user", "content": view},
        _tool_call({"command": "edit 1474:1474"}),
    ]
    (probe,) = probes(history)
    assert probe.wanted == {"1474"}


def test_an_identifier_counts_as_kept_only_whole():
    history = [
        {"role": "user", "content": "Which card?"},
        {"role": "tool", "content": '{"card_ending": "4336"}'},
        {"role": "assistant", "content": "The card ending 4336."},
    ]

    def mangled(messages):  # the digits survive only inside a longer number
        return [{**m, "content": m["content"].replace("4336", "43360")} for m in messages], {}

    assert identifier_recall(mangled, [history]).kept == 0
    assert identifier_recall(lambda m: (m, {}), [history]).kept == 1

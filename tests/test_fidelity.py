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

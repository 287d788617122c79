"""Incremental compile: every prefix gives exactly what a full compile gives."""

import json
import threading
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compiler import compile_messages, load_schema
from compiler.incremental import HISTORIES, HistoryCache, item_key
from compiler.read.formats import formats_many
from compiler.read.messages import message_to_dict

FIXTURES = Path(__file__).parents[1] / "fixtures" / "formats"
REAL = [
    ("tau-airline-two-records.json", "travel"),
    ("nebius-two-blocks.txt", "coding"),
    ("swe-agent-function-calling.traj", "coding"),
    ("few-shot-airline.jsonl", "travel"),
]


def histories():
    for name, schema in REAL:
        for _, parsed in formats_many((FIXTURES / name).read_text(encoding="utf-8")):
            yield [message_to_dict(m) for m in parsed.messages], schema


def same(a, b):
    """Equal messages and telemetry bytes, the timing aside."""
    (ma, ta), (mb, tb) = a, b
    ta, tb = dict(ta), dict(tb)
    ta.pop("compile_time_ms"), tb.pop("compile_time_ms")
    return json.dumps(ma) == json.dumps(mb) and json.dumps(ta) == json.dumps(tb)


def test_every_prefix_of_real_transcripts_compiles_as_a_full_compile_would():
    for history, schema in histories():
        for mode in ("compact", "cache_friendly"):
            options = {"schema": load_schema(schema), "mode": mode, "teach_protocol": True}
            for end in range(1, len(history) + 1):
                prefix = history[:end]
                incremental = compile_messages(prefix, **options)
                full = compile_messages(prefix, cache=False, **options)
                assert same(incremental, full), (schema, mode, end)


ROLES = st.sampled_from(["system", "user", "assistant", "tool"])
TEXT = st.sampled_from(
    [
        "Now editing `src/a.py`.",
        "actually editing `src/b.py` instead",
        "[File: /repo/src/a.py (3 lines total)]\n1:x\n2:y\n3:z",
        "ok",
        '<contextgc-state>{"assert": {"current_file": "src/c.py"}}</contextgc-state>',
        'Traceback (most recent call last):\n  File "a.py", line 1\nValueError: no\n' * 30,
    ]
)
MESSAGE = st.fixed_dictionaries({"role": ROLES, "content": st.one_of(TEXT, st.none())})


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(MESSAGE, min_size=1, max_size=14), st.sampled_from(["compact", "cache_friendly"]))
def test_every_prefix_of_generated_histories_compiles_as_a_full_compile_would(history, mode):
    options = {"schema": load_schema("coding"), "mode": mode}
    HISTORIES.clear()
    hits = HISTORIES.stats()["hits"]
    for end in range(1, len(history) + 1):
        incremental = compile_messages(history[:end], **options)
        assert same(incremental, compile_messages(history[:end], cache=False, **options))
    assert HISTORIES.stats()["hits"] - hits == len(history) - 1


def test_an_edited_history_is_not_mistaken_for_the_cached_one():
    history = [
        {"role": "assistant", "content": "Now editing `src/a.py`."},
        {"role": "user", "content": "ok"},
    ]
    schema = load_schema("coding")
    compile_messages(history, schema=schema)
    edited = [{"role": "assistant", "content": "Now editing `src/z.py`."}, history[1]]
    _, telemetry = compile_messages(edited, schema=schema)
    assert telemetry["active_state_slots"] == {"current_file": "src/z.py"}


def test_the_cache_holds_no_more_than_its_bounds():
    cache = HistoryCache(max_histories=3, max_items=10)
    from compiler.types import Options

    options = Options.build(schema=load_schema("coding"))
    for n in range(6):
        cache.compile(
            [{"role": "user", "content": f"conversation {n}"}] * 3, options, options.cache_key
        )
    stats = cache.stats()
    assert stats["histories"] == 3 and stats["items"] <= 10


def test_threads_compiling_different_conversations_get_their_own_state():
    errors = []

    def loop(name):
        schema = load_schema("coding")
        history = []
        for turn in range(12):
            history.append({"role": "assistant", "content": f"Now editing `{name}/m{turn}.py`."})
            history.append({"role": "user", "content": "ok"})
            _, telemetry = compile_messages(history, schema=schema)
            if telemetry["active_state_slots"] != {"current_file": f"{name}/m{turn}.py"}:
                errors.append((name, turn, telemetry["active_state_slots"]))

    threads = [threading.Thread(target=loop, args=(f"t{i}",)) for i in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []


def test_item_keys_tell_apart_values_python_calls_equal():
    assert item_key({"content": True}) != item_key({"content": 1})
    assert item_key({"content": [True]}) != item_key({"content": [1]})
    assert item_key({"content": [1.0]}) != item_key({"content": [1]})
    assert item_key({"content": [0.0]}) != item_key({"content": [-0.0]})


def test_item_keys_tell_apart_the_same_calls_with_their_keys_in_another_order():
    call = {"id": "c1", "function": {"name": "f", "arguments": "{}"}}
    turned = {"function": {"arguments": "{}", "name": "f"}, "id": "c1"}
    assert item_key({"tool_calls": [call]}) != item_key({"tool_calls": [turned]})
    assert item_key({"tool_calls": [call]}) == item_key({"tool_calls": [dict(call)]})


def test_a_tool_call_changed_in_place_is_compiled_as_it_now_reads():
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    history = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": "ok"},
    ]
    compile_messages(history)
    call["function"]["arguments"] = '{"a": 1}'
    again = compile_messages([*history, {"role": "user", "content": "ok"}])[0]
    assert again[1]["tool_calls"][0]["function"]["arguments"] == '{"a": 1}'


class _Reply:
    """A message object as an SDK returns it: read through ``model_dump``."""

    def __init__(self, text):
        self.text = text

    def model_dump(self, *, exclude_none):
        return {"role": "assistant", "content": self.text}


def test_message_objects_freed_between_calls_never_resume_another_history():
    # keyed by address, a new object where a freed one had lived would resume its
    # history: "Charging Visa" would come back for a turn that said "gift card"
    schema = load_schema("logistics")

    def compiled(pay):  # the history, and its object, are freed on return
        history = [{"role": "user", "content": "hi"}, _Reply(f"Charging {pay}.")]
        history.append({"role": "user", "content": "ok"})
        return compile_messages(history, schema=schema)[0][1]["content"]

    for turn in range(60):
        pay = ("PayPal", "Visa", "my gift card", "my credit card")[turn % 4]
        assert compiled(pay) == f"Charging {pay}."


def test_a_message_object_changed_in_place_is_compiled_as_it_now_reads():
    reply = _Reply("Charging Visa.")
    history = [{"role": "user", "content": "hi"}, reply, {"role": "user", "content": "ok"}]
    compile_messages(history)
    reply.text = "Charging PayPal."
    assert compile_messages(history)[0][1]["content"] == "Charging PayPal."


def test_an_earlier_message_edited_in_place_is_compiled_as_it_now_reads():
    # the cache finds the last snapshot by the identity of the caller's items, then
    # checks each item still reads as it did (a shortcut for keying every item again)
    schema = load_schema("logistics")
    history = [
        {"role": "user", "content": "Pay with PayPal."},
        {"role": "assistant", "content": "ok"},
    ]
    compile_messages(history, schema=schema)
    history[0]["content"] = "Pay with my gift card."
    history.append({"role": "user", "content": "thanks"})
    cached = compile_messages(history, schema=schema)
    assert same(cached, compile_messages(history, schema=schema, cache=False))
    assert cached[1]["active_state_slots"]["payment_method"] == "gift card"

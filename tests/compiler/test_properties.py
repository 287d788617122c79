"""Properties of every compile: no crash, same bytes, no lost turn, no orphan, no socket."""

import contextlib
import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compiler import TranscriptError, compile_messages, compile_transcript, load_schema, run
from compiler.read.formats import read_message_list
from tests.invariants import assert_invariants

SCHEMAS = [None, "coding", "travel", "logistics"]
ROLES = st.sampled_from(["system", "user", "assistant", "tool", "function", "weird"])
SPEECH = st.sampled_from(
    [
        "Now editing `src/app.py`.",
        "open tests/test_app.py",
        "I want to fly business class.",
        "My reservation ID is ABC123.",
        "Please change the address to 12 Oak Street, Apt 3.",
        "Pay with my credit card.",
        "Actually use my paypal account.",
        "ok",
        'Traceback (most recent call last):\n  File "x.py", line 1\nValueError: no',
        json.dumps(
            {"items": [{"id": i, "note": "allergen warning" if i == 7 else ""} for i in range(20)]}
        ),
    ]
)
CONTENT = st.one_of(SPEECH, st.text(max_size=300), st.none())
MESSAGE = st.fixed_dictionaries({"role": ROLES, "content": CONTENT})
JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)
FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FAST
@given(
    st.lists(MESSAGE, max_size=25),
    st.sampled_from(SCHEMAS),
    st.sampled_from(["compact", "cache_friendly"]),
)
def test_every_turn_is_accounted_for_and_no_fact_is_orphaned(messages, schema, mode):
    parsed = read_message_list(messages)
    result = run(parsed.messages, schema=schema and load_schema(schema), mode=mode)
    assert_invariants(result)


@FAST
@given(st.lists(MESSAGE, max_size=25), st.sampled_from(SCHEMAS))
def test_the_output_is_byte_deterministic(messages, schema):
    first = compile_messages(messages, schema=schema)
    second = compile_messages(messages, schema=schema)
    strip = lambda tel: {k: v for k, v in tel.items() if k != "compile_time_ms"}  # noqa: E731
    assert json.dumps(first[0]) == json.dumps(second[0])
    assert json.dumps(strip(first[1])) == json.dumps(strip(second[1]))


@FAST
@given(st.text(max_size=2000), st.sampled_from(SCHEMAS))
def test_arbitrary_text_never_crashes_the_compiler(text, schema):
    try:
        compile_transcript(text, schema=schema)
    except TranscriptError as error:
        assert error.line >= 1 and error.column >= 1


@FAST
@given(JSONISH, st.sampled_from(SCHEMAS))
def test_arbitrary_json_never_crashes_the_compiler(value, schema):
    with contextlib.suppress(TranscriptError):
        compile_transcript(json.dumps(value), schema=schema)
    compile_messages(value if isinstance(value, list) else [value], schema=schema)


@FAST
@given(st.lists(MESSAGE, max_size=15), st.sampled_from(SCHEMAS))
def test_nothing_opens_a_socket(monkeypatch_socket, messages, schema):
    compile_messages(messages, schema=schema, recall_query="address")
    compile_messages(messages, schema=schema, mode="cache_friendly")
    assert monkeypatch_socket == []

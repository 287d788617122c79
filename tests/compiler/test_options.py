"""Options are checked before any stage runs: a wrong type is the library's own error."""

import pytest

from compiler import compile_messages, compile_transcript
from compiler.errors import OptionError, SchemaError

# a retired turn, so recall and the invariants block both have work to do
MESSAGES = [
    {"role": "user", "content": "Deliver to 402 Oak Street."},
    {"role": "assistant", "content": "ok"},
    {"role": "user", "content": "Actually deliver to 900 Pine Avenue."},
    {"role": "assistant", "content": "ok"},
    {"role": "user", "content": "thx"},
]


@pytest.mark.parametrize(
    ("given", "error", "words"),
    [
        ({"recall_query": 5}, OptionError, "recall_query must be a string"),
        ({"invariants": 5}, OptionError, "invariants must be a list"),
        ({"invariants": ["ok", 5]}, OptionError, "an invariant must be a string"),
        ({"teach_protocol": "false"}, OptionError, "teach_protocol must be true or false"),
        ({"cache_marks": "yes"}, OptionError, "cache_marks must be true or false"),
        ({"schema": 5}, SchemaError, "got int"),
        ({"schema": ["logistics"]}, SchemaError, "got list"),
    ],
)
def test_a_wrong_option_type_is_a_typed_error_naming_it(given, error, words):
    options = {"schema": "logistics", **given}
    with pytest.raises(error, match=words):
        compile_messages(MESSAGES, **options)


def test_a_generator_of_messages_is_compiled_as_the_list_it_yields():
    messages = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]
    out, tel = compile_messages(m for m in messages)
    assert (out, tel["parse_warnings"]) == (messages, [])


def test_compile_transcript_takes_the_cache_option_compile_messages_takes():
    out, _, warnings = compile_transcript("user: hi\nassistant: ok", cache=False)
    assert ([m["role"] for m in out], warnings) == (["user", "assistant"], [])

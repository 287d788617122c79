"""Token counters: the default estimate, exact BPE counts, and choosing between them."""

from __future__ import annotations

import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compiler.errors import CompilerError, OptionError
from compiler.layout import tokens
from compiler.layout.tokens import (
    CharEstimator,
    ExactCounter,
    TokenCounter,
    default_counter,
    resolve_counter,
)

# Known answers: each count was produced by OpenAI's tiktoken 0.14.0
# (``len(encode_ordinary(text))``, with vocabulary files whose sha256 matches
# tiktoken's published hashes) and agreed with by two independent
# implementations, bpe-openai 0.1.4 and rs-bpe 0.1.0.
KNOWN_COUNTS = [
    # text, o200k_base, cl100k_base
    ("hello world", 2, 2),
    ("Hello, World!", 4, 4),
    ("I'm can't we'll they've", 4, 8),
    ("😀", 1, 2),
    ("👨\u200d👩\u200d👧\u200d👦 family", 12, 19),
    ("🇯🇵🇫🇷", 8, 12),
    ("日本語のテキストです。", 8, 10),
    ("Ελληνικά κείμενο", 6, 16),
    ("e\u0301 café naïve", 5, 5),
    ("def f(x):\n    return x**2\n", 10, 10),
    ('{"role": "user", "content": "hi"}', 12, 12),
    ("<|endoftext|>", 7, 7),
    (" " * 100, 2, 2),
    ("x" * 2048, 256, 256),
]


class Bare:
    """A user-supplied counter: a name and a count, nothing else."""

    name = "words"

    def count(self, text: str) -> int:
        return len(text.split())


@pytest.fixture
def fresh_tokenizer_cache():
    tokens._load_tokenizer.cache_clear()
    yield
    tokens._load_tokenizer.cache_clear()


# --- the default estimate ---------------------------------------------------


def test_char_estimator_counts_the_empty_string_as_zero_tokens():
    assert CharEstimator().count("") == 0


@pytest.mark.parametrize(
    ("text", "expected"),
    [("a", 1), ("abc", 1), ("abcd", 1), ("abcdefg", 1), ("abcdefgh", 2), ("x" * 2048, 512)],
)
def test_char_estimator_counts_one_token_per_four_characters_rounding_down(text, expected):
    assert CharEstimator().count(text) == expected


@given(st.text(min_size=1))
def test_char_estimator_counts_any_non_empty_text_as_at_least_one_token(text):
    assert CharEstimator().count(text) == max(1, len(text) // 4)


def test_char_estimator_counts_code_points_not_utf8_bytes():
    assert CharEstimator().count("日本語の") == 1


@given(st.text())
def test_char_estimator_gives_the_same_count_every_time(text):
    assert CharEstimator().count(text) == CharEstimator().count(text)


def test_char_estimator_is_named_chars_per_4_and_is_a_token_counter():
    counter = CharEstimator()
    assert counter.name == "chars/4"
    assert isinstance(counter, TokenCounter)
    assert counter == CharEstimator()
    assert hash(counter) == hash(CharEstimator())


def test_default_counter_is_the_char_estimator():
    assert default_counter() == CharEstimator()


# --- choosing a counter -----------------------------------------------------


@pytest.mark.parametrize("spec", [None, "chars", "chars/4", " Chars "])
def test_resolve_counter_gives_the_char_estimator_for_none_and_chars(spec):
    assert resolve_counter(spec) == CharEstimator()


def test_resolve_counter_returns_a_user_counter_unchanged():
    counter = Bare()
    assert resolve_counter(counter) is counter
    assert resolve_counter(counter).count("two words") == 2


def test_resolve_counter_returns_a_counter_instance_unchanged():
    counter = CharEstimator()
    assert resolve_counter(counter) is counter


@pytest.mark.parametrize("spec", ["words", "", "o200k", 4, object(), len])
def test_resolve_counter_rejects_anything_it_cannot_count_with(spec):
    with pytest.raises(OptionError, match="unknown token counter"):
        resolve_counter(spec)


def test_resolve_counter_rejects_an_object_with_count_but_no_name():
    class Nameless:
        def count(self, text: str) -> int:
            return 1

    with pytest.raises(OptionError, match="name and count"):
        resolve_counter(Nameless())


def test_an_unknown_option_error_is_both_a_compiler_error_and_a_value_error():
    with pytest.raises(CompilerError):
        resolve_counter("words")
    with pytest.raises(ValueError):
        resolve_counter("words")


def test_exact_counter_rejects_an_encoding_it_does_not_know():
    with pytest.raises(OptionError, match="p50k_base"):
        ExactCounter("p50k_base")


@pytest.mark.parametrize("spec", ["exact", "o200k_base", "cl100k_base"])
def test_asking_for_exact_counts_without_the_extra_raises_and_names_the_extra(
    spec, monkeypatch, fresh_tokenizer_cache
):
    monkeypatch.setitem(sys.modules, "rs_bpe", None)
    monkeypatch.setitem(sys.modules, "rs_bpe.bpe", None)
    with pytest.raises(CompilerError, match=r"contextgc-workbench\[exact\]") as raised:
        resolve_counter(spec)
    assert "rs-bpe" in str(raised.value)
    assert not isinstance(raised.value, OptionError)


# --- exact counts (the "exact" extra) ---------------------------------------


try:
    import rs_bpe.bpe  # noqa: F401  (the exact extra)
except ImportError:
    HAS_EXACT = False
else:
    HAS_EXACT = True

needs_exact = pytest.mark.skipif(not HAS_EXACT, reason="needs the exact extra (rs-bpe)")


@pytest.mark.parametrize(("text", "o200k", "cl100k"), KNOWN_COUNTS)
@needs_exact
def test_exact_counter_matches_tiktoken_on_known_strings(text, o200k, cl100k):
    assert ExactCounter("o200k_base").count(text) == o200k
    assert ExactCounter("cl100k_base").count(text) == cl100k


@needs_exact
def test_exact_counter_counts_the_empty_string_as_zero_tokens():
    assert ExactCounter().count("") == 0


@needs_exact
def test_exact_counter_counts_lone_surrogates_as_replacement_characters():
    counter = ExactCounter()
    assert counter.count("ab\ud83dcd") == counter.count("ab\ufffdcd") == 3


@needs_exact
def test_exact_counter_counts_a_megabyte_of_one_letter_without_a_length_cap():
    assert ExactCounter().count("A" * 1_000_000) == 125_000


@needs_exact
def test_exact_counter_names_its_encoding_and_package_version():
    from importlib.metadata import version

    counter = ExactCounter("cl100k_base")
    assert counter.name == f"cl100k_base (rs-bpe {version('rs-bpe')})"
    assert counter.encoding == "cl100k_base"
    assert isinstance(counter, TokenCounter)


@needs_exact
def test_exact_is_o200k_base():
    assert resolve_counter("exact") == ExactCounter("o200k_base")
    assert resolve_counter("EXACT").name.startswith("o200k_base (rs-bpe ")


@pytest.mark.parametrize("spec", ["o200k_base", "cl100k_base"])
@needs_exact
def test_resolve_counter_gives_an_exact_counter_for_an_encoding_name(spec):
    counter = resolve_counter(spec)
    assert isinstance(counter, ExactCounter)
    assert counter.encoding == spec


@needs_exact
def test_exact_counters_of_one_encoding_share_one_tokenizer():
    assert ExactCounter()._tokenizer is ExactCounter()._tokenizer
    assert ExactCounter("cl100k_base")._tokenizer is not ExactCounter()._tokenizer


@needs_exact
@given(st.text(max_size=200))
def test_exact_counter_gives_the_same_count_every_time(text):
    counter = ExactCounter()
    assert counter.count(text) == counter.count(text)
    assert (counter.count(text) == 0) == (text == "")

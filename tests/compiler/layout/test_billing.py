"""The bill of an agent loop's calls: the providers' caching rules, call by call."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler import OptionError, PriceModel, bill, price_model, render_message, replay
from compiler.layout import Account, Meter

OPENAI = PriceModel.openai(cached_rate=0.5)


def system(tokens: int) -> dict:
    """A system message of exactly ``tokens`` chars/4 tokens ("system\\n" is 7 chars)."""
    return {"role": "system", "content": "x" * (tokens * 4 - 7)}


def user(tokens: int, letter: str = "u") -> dict:
    """A user message of exactly ``tokens`` chars/4 tokens ("user\\n" is 5 chars)."""
    return {"role": "user", "content": letter * (tokens * 4 - 5)}


def test_the_helpers_make_messages_of_the_tokens_asked_for():
    assert Meter().measure([system(1023), user(10)]).ends == (1023, 1033)


def test_openai_caches_nothing_of_a_repeated_prompt_of_1023_tokens():
    prompt = [system(1023)]
    calls = bill([prompt, prompt], OPENAI).calls
    assert (calls[1].shared, calls[1].cached, calls[1].cost) == (1023, 0, 1023)


def test_openai_caches_a_repeated_prompt_of_1024_tokens_whole():
    prompt = [system(1024)]
    calls = bill([prompt, prompt], OPENAI).calls
    assert (calls[1].cached, calls[1].cost) == (1024, 512)


def test_openai_counts_the_cached_prefix_in_whole_steps_of_128_after_1024():
    head = system(1024)
    cached = []
    for extra in (127, 128, 255, 256):
        first = [head, user(extra, "a"), user(5, "b")]
        second = [head, user(extra, "a"), {"role": "assistant", "content": "c" * 20}]
        cached.append(bill([first, second], OPENAI).calls[1].cached)
    assert cached == [1024, 1152, 1152, 1280]


def test_openai_caches_nothing_on_the_first_call():
    assert bill([[system(4000)]], OPENAI).calls[0].cached == 0


def test_a_prefix_broken_at_message_k_is_shared_up_to_there_and_within_it():
    before = [system(2000), user(300, "a"), user(300, "b"), user(300, "c")]
    after = [system(2000), user(300, "a"), {"role": "user", "content": "b" * 400 + "!"}, user(5)]
    calls = bill([before, after], OPENAI).calls
    # message 2 shares "user\n" and 400 b's: 405 characters, 101 tokens
    assert calls[1].shared == 2000 + 300 + 101
    assert calls[1].cached == 1024 + (2401 - 1024) // 128 * 128


def test_a_rewrite_of_the_first_message_leaves_nothing_cached():
    before = [system(3000), user(50)]
    after = [{"role": "system", "content": "[STATE] " + before[0]["content"]}, user(50)]
    calls = bill([before, after], OPENAI).calls
    assert calls[1].cached == 0 and calls[1].cost == calls[1].tokens


def test_anthropic_writes_the_first_prompt_at_the_write_premium():
    call = bill([[system(2000)]], PriceModel.anthropic()).calls[0]
    assert (call.cached, call.written, call.cost) == (0, 2000, 2500)


def test_anthropic_reads_what_the_previous_call_wrote_and_writes_only_the_new_tail():
    first = [system(2000)]
    second = [*first, user(100)]
    call = bill([first, second], PriceModel.anthropic()).calls[1]
    assert (call.cached, call.written) == (2000, 100)
    assert call.cost == pytest.approx(2000 * 0.1 + 100 * 1.25)


def test_anthropic_pays_the_premium_on_everything_again_when_the_head_is_rewritten():
    first = [system(2000), user(100)]
    second = [{"role": "system", "content": "y" * 7993}, user(100), user(100, "v")]
    call = bill([first, second], PriceModel.anthropic()).calls[1]
    assert (call.cached, call.written, call.cost) == (0, 2200, 2750)


def test_anthropic_caches_nothing_below_its_minimum():
    prompt = [system(1000)]
    calls = bill([prompt, prompt], PriceModel.anthropic()).calls
    assert [(c.cached, c.written, c.cost) for c in calls] == [(0, 0, 1000), (0, 0, 1000)]


def test_anthropic_finds_no_entry_further_back_than_its_lookback():
    head = [system(2000)]
    tail = [user(1, str(i % 10)) for i in range(21)]
    calls = bill([head, head + tail], PriceModel.anthropic()).calls
    assert calls[1].cached == 0
    calls = bill([head, head + tail[:19]], PriceModel.anthropic()).calls
    assert calls[1].cached == 2000


def test_anthropic_with_marked_breakpoints_caches_only_up_to_the_marked_message():
    marked = {**system(2000), "cache_control": {"type": "ephemeral"}}
    first = [marked, user(500, "a")]
    second = [marked, user(500, "b"), user(500, "c")]
    model = PriceModel.anthropic(breakpoints="marked")
    calls = bill([first, second], model).calls
    assert [(c.cached, c.written) for c in calls] == [(0, 2000), (2000, 0)]
    assert calls[1].cost == pytest.approx(2000 * 0.1 + 1000)


def test_a_mark_on_a_content_part_is_a_breakpoint_and_no_mark_means_no_cache():
    part = {"type": "text", "text": "x" * 8000, "cache_control": {"type": "ephemeral"}}
    model = PriceModel.anthropic(breakpoints="marked")
    assert bill([[{"role": "system", "content": [part]}]], model).calls[0].written == 2001
    assert bill([[system(2000)]], model).calls[0].written == 0


def test_anthropic_auto_follows_the_marks_where_a_prompt_has_any_else_the_last_message():
    model = PriceModel.anthropic(breakpoints="auto")
    marked = {**system(2000), "cache_control": {"type": "ephemeral"}}
    assert bill([[marked, user(500)]], model).calls[0].written == 2000
    assert bill([[system(2000), user(500)]], model).calls[0].written == 2500


def test_no_caching_bills_every_token_at_the_full_rate():
    prompt = [system(3000)]
    calls = bill([prompt, prompt], PriceModel.none()).calls
    assert [(c.cached, c.written, c.cost) for c in calls] == [(0, 0, 3000), (0, 0, 3000)]


def test_the_bill_names_the_chars_counter_by_default():
    assert bill([[user(3)]], OPENAI).counter == "chars/4"


def test_the_bill_names_the_exact_counter_and_counts_bpe_tokens():
    pytest.importorskip("rs_bpe")
    prompt = [{"role": "user", "content": "hello world " * 50}]
    exact, chars = bill([prompt], OPENAI, "exact"), bill([prompt], OPENAI, "chars")
    assert exact.counter.startswith("o200k_base (rs-bpe ")
    assert exact.tokens != chars.tokens


def test_an_unknown_price_model_breakpoint_rule_or_an_out_of_range_rate_is_refused():
    with pytest.raises(OptionError):
        PriceModel.openai(cached_rate=-0.1)
    with pytest.raises(OptionError):
        PriceModel.anthropic(write_rate=0.9)
    with pytest.raises(OptionError):
        PriceModel.anthropic(breakpoints="first")
    with pytest.raises(OptionError):
        price_model("gemini")


def test_the_rendering_ignores_key_order_and_holds_tool_calls():
    call = {"id": "c9", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    one = {"role": "assistant", "content": "ok", "tool_calls": [call]}
    other = {"tool_calls": [call], "content": "ok", "role": "assistant"}
    assert render_message(one) == render_message(other) == "assistant\nok\nf {}"


def test_replay_gives_the_history_before_each_assistant_turn_to_a_fresh_copy():
    history = [
        {"role": "system", "content": "s"},
        {"role": "user", "content": "u"},
        {"role": "assistant", "content": "a1"},
        {"role": "tool", "content": "t"},
        {"role": "assistant", "content": "a2"},
    ]

    def scribble(messages):
        messages[0]["content"] = "rewritten"
        return messages

    prompts = list(replay(history, scribble))
    assert [len(p) for p in prompts] == [2, 4]
    assert history[0]["content"] == "s"


messages = st.lists(
    st.builds(
        lambda role, text: {"role": role, "content": text},
        st.sampled_from(["system", "user", "assistant", "tool"]),
        st.text(alphabet="ab \n", max_size=3000),
    ),
    min_size=1,
    max_size=6,
)


@settings(max_examples=60, deadline=None)
@given(st.lists(messages, min_size=1, max_size=5), st.sampled_from([0.0, 0.1, 0.25, 0.5, 1.0]))
def test_the_openai_bill_never_exceeds_the_uncached_one(prompts, rate):
    model = PriceModel.openai(cached_rate=rate)
    calls = bill(prompts, model).calls
    assert all(c.cost <= c.tokens and c.cached <= c.shared for c in calls)


@settings(max_examples=60, deadline=None)
@given(messages)
def test_an_identical_prompt_sent_again_is_cached_whole_above_the_minimum(prompt):
    _, again = bill([prompt, prompt], OPENAI).calls
    if again.tokens < 1024:
        assert again.cached == 0
    else:
        assert again.cached == 1024 + (again.tokens - 1024) // 128 * 128
        assert again.tokens - again.cached < 128


def test_an_account_keeps_its_entries_between_calls():
    account, meter = Account(PriceModel.anthropic()), Meter()
    prompt = [system(2000)]
    assert account.charge(meter.measure(prompt)).written == 2000
    assert account.charge(meter.measure(prompt)).cached == 2000

"""patch_openai through the official ``openai`` client and a real HTTP server on loopback.

Nothing is mocked between the wrapper and the wire: each test asserts on the
request bodies the server actually received.
"""

from __future__ import annotations

import asyncio
import copy
import inspect
import json
import threading

import pytest

from compiler import CompilerError, OptionError, SchemaError, compile_messages, load_schema
from compiler.incremental import HISTORIES
from compiler.openai import compile_options, patch_openai
from tests.chat_server import ChatServer

openai = pytest.importorskip("openai")

CODING = load_schema("coding")
WRONG = "Editing `wrong.py` to add the retry."


def history():
    return [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": "Add a retry to the fetcher."},
        {"role": "assistant", "content": WRONG},
        {"role": "user", "content": "ok"},
        {"role": "assistant", "content": "Actually editing `right.py` instead."},
        {"role": "user", "content": "go on"},
    ]


@pytest.fixture
def server():
    with ChatServer() as running:
        yield running


def sync_client(server, **options):
    """A patched client in ``compact`` mode unless told otherwise, whose retirements
    these tests follow through the wire."""
    client = openai.OpenAI(base_url=server.base_url, api_key="test", max_retries=0)
    return patch_openai(client, schema=CODING, **{"mode": "compact", **options})


def async_client(server, **options):
    client = openai.AsyncOpenAI(base_url=server.base_url, api_key="test", max_retries=0)
    return patch_openai(client, schema=CODING, **{"mode": "compact", **options})


def test_a_client_patched_without_a_mode_compiles_for_a_loop(server):
    # a patched client is called by a loop, whose bill cache_friendly keeps lowest
    client = openai.OpenAI(base_url=server.base_url, api_key="test", max_retries=0)
    patch_openai(client, schema=CODING).chat.completions.create(model="m", messages=history())
    assert (
        server.received[0] == compile_messages(history(), schema=CODING, mode="cache_friendly")[0]
    )


def without_timing(telemetry: dict) -> dict:
    return {k: v for k, v in telemetry.items() if k != "compile_time_ms"}


def test_a_sync_call_sends_the_compiled_messages(server):
    sync_client(server).chat.completions.create(model="m", messages=history())
    sent = server.received[0]
    assert sent == compile_messages(history(), schema=CODING)[0]
    assert sent[0]["content"].startswith(
        '[ACTIVE_AGENT_STATE]\n  - current_file = "right.py" (turn 4 [inferred])'
    )
    assert WRONG not in json.dumps(sent)


def test_an_async_call_sends_the_compiled_messages(server):
    client = async_client(server)
    asyncio.run(client.chat.completions.create(model="m", messages=history()))
    sent = server.received[0]
    assert sent == compile_messages(history(), schema=CODING)[0]
    assert WRONG not in json.dumps(sent)


def test_the_response_carries_the_compile_telemetry(server):
    response = sync_client(server).chat.completions.create(model="m", messages=history())
    expected = compile_messages(history(), schema=CODING)[1]
    assert without_timing(response.context_gc) == without_timing(expected)
    assert response.context_gc["retired_turn_indices"] == [2]
    assert response.context_gc["compile_time_ms"] > 0
    assert response.choices[0].message.content == "ok"


def test_an_async_response_carries_the_compile_telemetry(server):
    client = async_client(server)
    response = asyncio.run(client.chat.completions.create(model="m", messages=history()))
    assert response.context_gc["active_state_slots"] == {"current_file": "right.py"}


def test_the_telemetry_stays_out_of_the_serialised_response(server):
    response = sync_client(server).chat.completions.create(model="m", messages=history())
    assert "context_gc" not in response.model_dump()
    assert "context_gc" not in response.to_json()


def test_empty_messages_pass_through_uncompiled(server):
    response = sync_client(server).chat.completions.create(model="m", messages=[])
    assert server.requests == [{"model": "m", "messages": []}]
    assert response.context_gc is None


def test_missing_messages_reach_the_clients_own_check(server):
    with pytest.raises(TypeError, match="messages"):
        sync_client(server).chat.completions.create(model="m")
    assert server.requests == []


def test_a_sync_stream_passes_every_chunk_through_and_carries_telemetry(server):
    server.script("Editing right.py now.")
    stream = sync_client(server).chat.completions.create(model="m", messages=history(), stream=True)
    assert isinstance(stream, openai.Stream)
    assert stream.context_gc["retired_turn_indices"] == [2]
    pieces = [chunk.choices[0].delta.content for chunk in stream]
    assert "".join(p for p in pieces if p) == "Editing right.py now."
    assert (pieces[0], pieces[-1]) == ("", None)
    assert server.received[0] == compile_messages(history(), schema=CODING)[0]


def test_an_async_stream_passes_every_chunk_through_and_carries_telemetry(server):
    server.script("Editing right.py now.")
    client = async_client(server)

    async def consume():
        stream = await client.chat.completions.create(model="m", messages=history(), stream=True)
        assert isinstance(stream, openai.AsyncStream)
        return stream.context_gc, [chunk.choices[0].delta.content async for chunk in stream]

    telemetry, pieces = asyncio.run(consume())
    assert telemetry["retired_turn_indices"] == [2]
    assert "".join(p for p in pieces if p) == "Editing right.py now."


def test_other_arguments_reach_the_server_unchanged(server):
    tools = [
        {
            "type": "function",
            "function": {
                "name": "open_file",
                "description": "Open a file.",
                "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
            },
        }
    ]
    sync_client(server).chat.completions.create(
        model="gpt-test",
        messages=history(),
        temperature=0.25,
        max_tokens=64,
        tools=tools,
        tool_choice="auto",
        extra_body={"seed_note": "kept"},
    )
    body = dict(server.requests[0])
    assert body.pop("messages") == compile_messages(history(), schema=CODING)[0]
    assert body == {
        "model": "gpt-test",
        "temperature": 0.25,
        "max_tokens": 64,
        "tools": tools,
        "tool_choice": "auto",
        "seed_note": "kept",
    }


@pytest.mark.parametrize(
    ("options", "error"),
    [({"mode": "bogus"}, OptionError), ({"schema": "no-such-schema"}, SchemaError)],
)
def test_a_bad_option_is_refused_when_patching_and_the_client_stays_as_it_was(
    server, options, error
):
    client = openai.OpenAI(base_url=server.base_url, api_key="test", max_retries=0)
    before = client.chat.completions.create
    with pytest.raises(error) as raised:
        patch_openai(client, **options)
    assert isinstance(raised.value, CompilerError)
    assert client.chat.completions.create == before
    assert server.requests == []


def test_an_async_client_with_a_bad_option_is_refused_when_patching(server):
    with pytest.raises(OptionError):
        async_client(server, mode="bogus")
    assert server.requests == []


def test_the_options_are_frozen_when_patching(server):
    rules = ["Never refund"]
    client = openai.OpenAI(base_url=server.base_url, api_key="test", max_retries=0)
    client = patch_openai(client, invariants=rules)
    rules.append("Always upsell")
    client.chat.completions.create(model="m", messages=history())
    sent = json.dumps(server.requests[0]["messages"])
    assert "Never refund" in sent and "Always upsell" not in sent


class CountingCounter:
    """A token counter that counts how often it is asked: once per message per compile."""

    name = "counting"

    def __init__(self):
        self.calls = 0

    def count(self, text: str) -> int:
        self.calls += 1
        return max(1, len(text) // 4)


def test_patching_twice_compiles_once_with_the_latest_options(server):
    # the shared history cache would remember the first compile's token counts
    HISTORIES.clear()
    direct = CountingCounter()
    expected, _ = compile_messages(
        history(), schema=CODING, mode="cache_friendly", token_counter=direct
    )
    HISTORIES.clear()
    counter = CountingCounter()
    client = sync_client(server)
    patch_openai(client, schema=CODING, mode="cache_friendly", token_counter=counter)
    client.chat.completions.create(model="m", messages=history())
    assert server.received[0] == expected
    assert counter.calls == direct.calls


def test_patching_twice_keeps_the_unpatched_create_underneath(server):
    raw = openai.OpenAI(base_url=server.base_url, api_key="test", max_retries=0)
    original = raw.chat.completions.create
    client = patch_openai(patch_openai(raw, schema=CODING), schema=CODING)
    assert client is raw
    assert client.chat.completions.create.__wrapped__ == original


def test_only_the_patched_instance_compiles(server):
    sync_client(server)
    other = openai.OpenAI(base_url=server.base_url, api_key="test", max_retries=0)
    response = other.chat.completions.create(model="m", messages=history())
    assert server.received[0] == history()
    assert not hasattr(response, "context_gc")


def test_the_async_wrapper_is_a_coroutine_function(server):
    client = async_client(server)
    assert inspect.iscoroutinefunction(client.chat.completions.create)
    assert not inspect.iscoroutinefunction(sync_client(server).chat.completions.create)


def test_the_callers_history_is_not_modified(server):
    messages = history()
    before = copy.deepcopy(messages)
    sync_client(server).chat.completions.create(model="m", messages=messages)
    assert messages == before


def test_calls_from_many_threads_each_get_their_own_compile(server):
    client = sync_client(server)
    results: dict[int, dict] = {}

    def call(n: int) -> None:
        messages = [
            {"role": "assistant", "content": f"Editing `src/mod{n}.py`."},
            {"role": "user", "content": f"thread {n}"},
        ]
        results[n] = client.chat.completions.create(model="m", messages=messages).context_gc

    threads = [threading.Thread(target=call, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert {n: t["active_state_slots"] for n, t in results.items()} == {
        n: {"current_file": f"src/mod{n}.py"} for n in range(8)
    }
    for sent in server.received:
        n = int(sent[-1]["content"].split()[-1])
        assert f'current_file = "src/mod{n}.py"' in sent[0]["content"]


def test_a_client_that_takes_messages_positionally_gets_them_compiled():
    sent = []

    class Completions:
        def create(self, messages, model):
            sent.append(messages)
            return {"model": model}

    class Client:
        class chat:  # the official client's shape: client.chat.completions
            completions = Completions()

    client = patch_openai(Client(), schema=CODING, mode="compact")
    response = client.chat.completions.create(history(), "m")
    assert sent == [compile_messages(history(), schema=CODING)[0]]
    assert response["model"] == "m"
    assert response.context_gc["retired_turn_indices"] == [2]


def explicit(messages, *, schema=None, mode="compact", token_counter=None):
    """A compiler whose options are all in its signature, without the write path."""
    return list(messages), {}


def behind_kwargs(messages, *, token_counter=None, **options):
    """A compiler whose options hide behind ``**options`` and are checked by name."""
    unknown = set(options) - {"schema", "mode"}
    if unknown:
        raise OptionError(f"unknown option(s): {', '.join(sorted(unknown))}")
    return list(messages), {}


@pytest.mark.parametrize("compiler", [explicit, behind_kwargs])
def test_an_option_the_compiler_lacks_is_dropped_while_it_asks_for_the_default(
    monkeypatch, compiler
):
    monkeypatch.setattr("compiler.openai.compile_messages", compiler)
    assert compile_options(mode="compact", teach_protocol=False, value_policy="flag") == {
        "mode": "compact"
    }


@pytest.mark.parametrize("compiler", [explicit, behind_kwargs])
def test_an_option_the_compiler_lacks_is_refused_when_it_asks_for_more(monkeypatch, compiler):
    monkeypatch.setattr("compiler.openai.compile_messages", compiler)
    with pytest.raises(OptionError, match="teach_protocol"):
        patch_openai(openai.OpenAI(api_key="test"), teach_protocol=True)


def test_an_image_part_in_a_user_turn_reaches_the_server(server):
    parts = [
        {"type": "text", "text": "What is in this screenshot?"},
        {"type": "image_url", "image_url": {"url": "https://example.invalid/shot.png"}},
    ]
    messages = [*history(), {"role": "user", "content": parts}]
    sync_client(server).chat.completions.create(model="m", messages=messages)
    assert server.received[0][-1]["content"] == parts


def test_a_compacted_multi_part_message_keeps_its_image_part():
    trace = "Traceback (most recent call last):\n" + "".join(
        f'  File "/app/m{i}.py", line {i}, in f\n    g{i}()\n' for i in range(30)
    )
    trace += "ValueError: boom\n"
    image = {"type": "image_url", "image_url": {"url": "https://example.test/shot.png"}}
    messages = [
        {"role": "user", "content": "It crashes."},
        {"role": "assistant", "content": "Paste the error."},
        {"role": "user", "content": [{"type": "text", "text": trace}, image]},
        {"role": "assistant", "content": "Thanks."},
        {"role": "user", "content": "ok"},
        {"role": "assistant", "content": "fixed"},
    ]
    out, tel = compile_messages(messages)
    assert tel["tool_payloads_compacted"] == 1
    text, kept = out[2]["content"]
    assert kept == image and "ValueError: boom" in text["text"]
    assert len(text["text"]) < len(trace) and json.dumps(out).count("shot.png") == 1


def test_the_message_a_response_returns_is_sent_back_as_its_tool_call_turn(server):
    # the SDK's documented loop appends response.choices[0].message to the history:
    # that object used to be skipped, leaving the tool result answering no call
    from openai.types.chat import ChatCompletionMessageToolCall as Call
    from openai.types.chat.chat_completion_message_tool_call import Function

    client = sync_client(server)
    reply = client.chat.completions.create(model="m", messages=history())
    function = Function(name="run", arguments='{"cmd": "ls"}')
    call = Call(id="call_1", type="function", function=function)
    returned = reply.choices[0].message.model_copy(update={"content": None, "tool_calls": [call]})
    later = [*history(), returned, {"role": "tool", "tool_call_id": "call_1", "content": "a.py"}]
    again = client.chat.completions.create(model="m", messages=later)
    sent = server.requests[-1]["messages"]
    assert sent[-2] == {
        "role": "assistant",
        "tool_calls": [
            {"id": "call_1", "function": {"arguments": '{"cmd": "ls"}', "name": "run"},
             "type": "function"}
        ],
    }  # fmt: skip
    assert sent[-1] == {"role": "tool", "tool_call_id": "call_1", "content": "a.py"}
    assert again.context_gc["parse_warnings"] == []


def test_a_client_that_returns_a_dict_gets_a_dict_back_with_the_telemetry():
    # a dict was wrapped in a proxy: json.dumps, len and isinstance(dict) all broke
    from types import SimpleNamespace

    reply = {"id": "r1", "choices": [{"message": {"role": "assistant", "content": "ok"}}]}
    sent = []

    def create(**kwargs):
        sent.append(kwargs["messages"])
        return reply

    client = SimpleNamespace(chat=SimpleNamespace(completions=SimpleNamespace(create=create)))
    patch_openai(client)
    response = client.chat.completions.create(model="m", messages=history())
    assert isinstance(response, dict) and response == reply and len(response) == 2
    assert json.loads(json.dumps(response)) == reply
    assert response.context_gc["messages_in"] == len(history()) and sent

"""Compiled messages are what a chat-completions API accepts, whatever reader read them.

Each message is checked against the ``openai`` package's request type for its role (its
types and its keys), when the package is installed; without it, against the keys those
types name (``CHAT_KEYS``). One exception is kept on purpose: a tool result's ``name``
(tau-bench writes the function's name there, and the API takes it), which OpenAI's
``ChatCompletionToolMessageParam`` does not declare.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from compiler import compile_messages, load_schema
from compiler.read.formats import formats_many
from compiler.read.messages import CHAT_KEYS, message_to_dict

FIXTURES = Path(__file__).parents[1] / "fixtures" / "formats"
SCHEMA_OF = {"swe-agent": "coding", "nebius": "coding", "airline": "travel"}
# shared/corpora beside the checkout (or a folder above it), when it is there
CORPORA = next(
    (
        p / "shared" / "corpora"
        for p in Path(__file__).parents
        if (p / "shared" / "corpora").is_dir()
    ),
    None,
)

try:
    from openai.types import chat
    from pydantic import TypeAdapter
except ImportError:  # the strict key list below still holds
    chat = None


def role_types() -> dict:
    names = {
        "system": "ChatCompletionSystemMessageParam",
        "developer": "ChatCompletionDeveloperMessageParam",
        "user": "ChatCompletionUserMessageParam",
        "assistant": "ChatCompletionAssistantMessageParam",
        "tool": "ChatCompletionToolMessageParam",
        "function": "ChatCompletionFunctionMessageParam",
    }
    return {role: getattr(chat, name) for role, name in names.items()}


ROLE_TYPES = role_types() if chat is not None else {}
ADAPTERS = {role: TypeAdapter(typed) for role, typed in ROLE_TYPES.items()}
KEPT_BEYOND_THE_TYPES = {"tool": {"name"}}


def assert_accepted(message: dict) -> None:
    assert message.keys() <= CHAT_KEYS, sorted(message.keys() - CHAT_KEYS)
    if chat is None:
        return
    role = message["role"]
    declared = set(ROLE_TYPES[role].__annotations__) | KEPT_BEYOND_THE_TYPES.get(role, set())
    assert message.keys() <= declared, (role, sorted(message.keys() - declared))
    ADAPTERS[role].validate_python(message)


def fixture_histories():
    for path in sorted(FIXTURES.iterdir()):
        if path.suffix in (".md",) or path.name.endswith(".expected.json"):
            continue
        schema = next((s for key, s in SCHEMA_OF.items() if key in path.name), "travel")
        for ident, parsed in formats_many(path.read_text(encoding="utf-8")):
            yield f"{path.name}#{ident}", schema, [message_to_dict(m) for m in parsed.messages]


def corpus_histories():
    if CORPORA is None:
        return
    from labelling.bench.corpus import read_corpus
    from tests.bench.digest import CORPORA as NAMED

    for corpus, schema in NAMED.items():
        if (CORPORA / corpus).exists():
            for transcript in read_corpus(CORPORA / corpus):
                yield f"{corpus}#{transcript.ident}", schema, transcript.messages


@pytest.mark.parametrize("mode", ["compact", "cache_friendly"])
def test_every_compiled_fixture_message_is_one_a_chat_api_accepts(mode):
    histories = list(fixture_histories())
    assert any("swe-agent" in name for name, _, _ in histories)
    for _name, schema, messages in histories:
        out, _ = compile_messages(messages, schema=load_schema(schema), mode=mode, cache=False)
        for message in out:
            assert_accepted(message)


@pytest.mark.skipif(CORPORA is None, reason="no shared/corpora beside this checkout")
@pytest.mark.parametrize("mode", ["compact", "cache_friendly"])
def test_every_compiled_corpus_message_is_one_a_chat_api_accepts(mode):
    count = 0
    for _name, schema, messages in corpus_histories():
        out, _ = compile_messages(messages, schema=schema, mode=mode, cache=False)
        for message in out:
            assert_accepted(message)
        count += 1
    assert count > 0


def test_a_swe_agent_message_loses_the_readers_own_keys():
    traj = (FIXTURES / "swe-agent-function-calling.traj").read_text(encoding="utf-8")
    (_, parsed), *_ = formats_many(traj)
    out, _ = compile_messages(
        list(map(message_to_dict, parsed.messages)), schema=load_schema("coding")
    )
    assert {key for message in out for key in message} <= {
        "role",
        "content",
        "tool_calls",
        "tool_call_id",
    }

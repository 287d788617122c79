"""The caller's history, the compiled output and the history cache share no list or dict:
a change made in place to one after a compile reaches neither of the others."""

import copy
import json

import pytest

from compiler import compile_messages


def _history():
    call = {"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}
    return [
        {"role": "system", "content": [{"type": "text", "text": "You are helpful."}]},
        {"role": "user", "content": "list the files", "name": "ann"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": "a.py"},
        {"role": "assistant", "content": "one file"},
    ]


def _change_every_container(value):
    """Append to every list and add a key to every dict, anywhere inside ``value``."""
    if isinstance(value, list):
        for item in value:
            _change_every_container(item)
        value.append("changed")
    elif isinstance(value, dict):
        for item in list(value.values()):
            _change_every_container(item)
        value["changed"] = True


@pytest.mark.parametrize("mode", ["compact", "cache_friendly"])
@pytest.mark.parametrize("cache", [False, True])
def test_changing_the_output_changes_neither_the_input_nor_a_later_compile(mode, cache):
    history = _history()
    out, _ = compile_messages(history, mode=mode, cache=cache)
    expected = json.dumps(compile_messages(_history(), mode=mode, cache=False)[0])
    _change_every_container(out)
    assert history == _history()
    assert json.dumps(compile_messages(_history(), mode=mode, cache=cache)[0]) == expected


@pytest.mark.parametrize("mode", ["compact", "cache_friendly"])
def test_changing_the_input_after_a_compile_does_not_reach_the_cached_history(mode):
    history = _history()
    compile_messages(history, mode=mode)  # cached: a longer history resumes it
    _change_every_container(history)
    longer = [*_history(), {"role": "user", "content": "thanks"}]
    cached, _ = compile_messages(copy.deepcopy(longer), mode=mode)
    fresh, _ = compile_messages(copy.deepcopy(longer), mode=mode, cache=False)
    assert json.dumps(cached) == json.dumps(fresh)
    assert "changed" not in json.dumps(cached)

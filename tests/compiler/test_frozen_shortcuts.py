"""Shortcut tests for generated constructors: a made instance is the one the frozen
dataclass builds, and stays frozen."""

from __future__ import annotations

from dataclasses import fields

import pytest

from compiler.frozen import build, maker
from compiler.read.messages import (
    Message,
    ToolCall,
    make_message,
)

pytestmark = pytest.mark.shortcut


@pytest.mark.parametrize("cls", [Message, ToolCall])
def test_a_made_instance_is_the_one_the_dataclass_builds(cls):
    names = [spec.name for spec in fields(cls)]
    values = [f"v{index}" for index in range(len(names))]
    made = maker(cls)(*values)
    built = cls(*values)
    assert type(made) is cls and made == built and repr(made) == repr(built)
    kept = build(cls, **dict(zip(names, values, strict=True)))
    for name in names:  # (compare=False fields too: ``==`` does not read them)
        assert getattr(made, name) == getattr(built, name) == getattr(kept, name)


def test_a_message_keeps_its_fields_in_slots_not_a_dict():
    # a compile holds every message read until it ends: no instance dict per message
    message = make_message("user", "hi", None, None, (), (), 1)
    assert not hasattr(message, "__dict__")
    assert not hasattr(build(ToolCall, name="f", arguments="{}", id=None), "__dict__")


def test_a_made_instance_is_still_frozen():
    message = make_message("user", "hi", None, None, (), (), 1)
    with pytest.raises(AttributeError):
        message.content = "changed"

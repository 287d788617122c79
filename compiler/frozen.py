"""Building frozen dataclass instances where a compile builds thousands of them.

A frozen dataclass's ``__init__`` sets each field through ``object.__setattr__``, which
costs about four times filling the new instance's dict directly; a compile builds a
message per input item, an observation per match and a result per payload. ``build``
gives the instance ``cls(**fields)`` gives, for the classes it is used on: frozen
dataclasses without ``__post_init__``, with every field passed.
"""

from __future__ import annotations

from typing import Any

_new = object.__new__


def build(cls: type, **fields: Any) -> Any:
    """``cls(**fields)``, its fields set directly.

    Example:
        >>> from compiler.messages import ToolCall
        >>> build(ToolCall, name="open", arguments="{}", id=None) == ToolCall("open", "{}")
        True
    """
    instance = _new(cls)
    instance.__dict__.update(fields)
    return instance

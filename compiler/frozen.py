"""Building frozen dataclass instances where a compile builds thousands of them.

A frozen dataclass's ``__init__`` sets each field through ``object.__setattr__``, which
costs about four times filling the new instance's dict directly; a compile builds a
message per input item, an observation per match and a result per payload. ``build``
gives the instance ``cls(**fields)`` gives, for the classes it is used on: frozen
dataclasses without ``__post_init__``, with every field passed. A class with
``__slots__`` (no instance dict: the messages, built once per input item and alive for
the whole compile) has its fields set one by one, as its ``__init__`` would.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

_new = object.__new__
_set = object.__setattr__


def build(cls: type, **fields: Any) -> Any:
    """``cls(**fields)``, its fields set directly.

    Example:
        >>> from compiler.read.messages import ToolCall
        >>> build(ToolCall, name="open", arguments="{}", id=None) == ToolCall("open", "{}")
        True
    """
    instance = _new(cls)
    if _slotted(cls):
        for name, value in fields.items():
            _set(instance, name, value)
    else:
        instance.__dict__.update(fields)
    return instance


def _slotted(cls: type) -> bool:
    """Whether the class's instances have no ``__dict__`` (a ``slots=True`` dataclass)."""
    return "__slots__" in cls.__dict__


def maker(cls: type) -> Any:
    """A positional ``cls(...)`` for a class ``build`` is used on, for the few built once
    per input item: the same instance ``build`` gives (its fields in one new dict, in
    declared order), without keyword arguments to pack on every call.

    (Setting the fields one by one into ``instance.__dict__`` builds faster still, but
    leaves instances whose attributes every later read finds the slow way.)

    Example:
        >>> from compiler.read.messages import ToolCall
        >>> tool_call = maker(ToolCall)
        >>> tool_call("open", "{}", None) == ToolCall("open", "{}")
        True
    """
    names = [spec.name for spec in fields(cls)]
    if _RESERVED.intersection(names):  # (no class we build has such a field)
        raise TypeError(f"{cls.__name__} has a field named as the maker's own names")
    if _slotted(cls):  # each field's slot set through its descriptor, bound once here
        setters = {f"_set_{name}": getattr(cls, name).__set__ for name in names}
        fill = "".join(f"    _set_{name}(instance, {name})\n" for name in names)
    else:
        setters = {}
        values = ", ".join(f"{name!r}: {name}" for name in names)
        fill = f"    instance.__dict__.update({{{values}}})\n"
    head = f"def make({', '.join(names)}):\n    instance = _new(_cls)\n"
    source = f"{head}{fill}    return instance\n"
    scope = {"_new": _new, "_cls": cls, **setters}
    exec(source, scope)  # as dataclasses writes __init__: a function per class, once
    make = scope["make"]
    make.__qualname__ = make.__name__ = f"make_{cls.__name__}"
    return make


_RESERVED = frozenset({"_new", "_cls", "instance", "make"})

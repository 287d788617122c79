"""patch_openai: every chat-completions call compiles its messages first.

The wrapper is the part an agent wires in. It replaces one client's
``chat.completions.create`` with a function that runs ``compile_messages``
over the ``messages`` it is given, sends the compiled list with every other
argument untouched, and hangs what the compile did on the response as
``.context_gc``.

The ``openai`` package is never imported: anything shaped like the official
client works, sync or async. The state register is re-derived from the full
history on every call, so there is no session to keep; the wrapper holds only
its options, frozen when it is made, and is safe to call from many threads.
Compile errors are raised before anything is sent.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any

from compiler.compact.checkpoints import DEFAULT_CACHED_RATE
from compiler.engine import compile_messages
from compiler.errors import OptionError
from compiler.layout import resolve_counter
from compiler.types import Options

TELEMETRY_ATTRIBUTE = "context_gc"
# Marks on a wrapper: the unpatched ``create`` and the options it compiles with.
_ORIGINAL = "__contextgc_original__"
_OPTIONS = "__contextgc_options__"

# Every option patch_openai forwards, with the value that means "not asked for".
DEFAULTS = MappingProxyType(
    {
        "schema": None,
        "mode": "cache_friendly",
        "invariants": (),
        "recall_query": None,
        "token_counter": None,
        "teach_protocol": False,
        "declaration_policy": "flag",
        "value_policy": "flag",
        "cached_rate": DEFAULT_CACHED_RATE,
    }
)


def patch_openai(
    client,
    *,
    schema=None,
    mode="cache_friendly",
    invariants=(),
    teach_protocol=False,
    declaration_policy="flag",
    value_policy="flag",
    recall_query=None,
    token_counter=None,
    cached_rate=DEFAULT_CACHED_RATE,
):
    """Wrap client.chat.completions.create so every call compiles `messages` first.

    Patches this client instance only and returns it. Patching again replaces
    the options; it never stacks a second compile. Without ``messages`` (or
    with none) the call goes through unchanged and ``.context_gc`` is None.

    Example:
        >>> from types import SimpleNamespace
        >>> from compiler.state.schema import load_schema
        >>> sent = []
        >>> def create(*, messages, model):
        ...     sent.append(messages)
        ...     return SimpleNamespace(model=model)
        >>> chat = SimpleNamespace(completions=SimpleNamespace(create=create))
        >>> client = SimpleNamespace(chat=chat)
        >>> client = patch_openai(client, schema=load_schema("coding"))
        >>> response = client.chat.completions.create(model="m", messages=[
        ...     {"role": "assistant", "content": "Editing `a.py`."},
        ...     {"role": "user", "content": "ok"},
        ...     {"role": "assistant", "content": "Actually editing `b.py` instead."},
        ...     {"role": "user", "content": "go on"}])
        >>> print(sent[0][-1]["content"])
        [STATE_CHANGES]
          - current_file = "b.py" (turn 2 [inferred])
        >>> [m["role"] for m in sent[0]]
        ['assistant', 'user', 'system', 'assistant', 'user', 'system']
        >>> response.context_gc["kv_cache_prefix_messages_preserved"]
        4

    The mode is ``cache_friendly`` unless ``mode`` names another: a patched client is
    called by a loop that re-sends its history, and that mode keeps each call's prompt
    a prefix of the next (``tests/bench/billed.py``: its bill is below the raw history's on
    every corpus and price model measured). Told the provider's rate, ``mode="compact"``
    with ``cached_rate`` compiles for the loop too (``compiler.loop``); on the dev
    corpora its bill at the rate it is told is below the raw history's, and below
    ``cache_friendly``'s where its checkpoints pay (SWE-agent and retail at 0.5).
    ``compile_messages`` itself keeps ``compact``, for a one-off compile.
    """
    completions = _completions(client)
    original = getattr(completions.create, _ORIGINAL, completions.create)
    options = MappingProxyType(
        _frozen(
            compile_options(
                schema=schema,
                mode=mode,
                invariants=invariants,
                teach_protocol=teach_protocol,
                declaration_policy=declaration_policy,
                value_policy=value_policy,
                recall_query=recall_query,
                token_counter=token_counter,
                cached_rate=cached_rate,
            )
        )
    )
    wrap = _async_wrapper if _is_async(original) else _sync_wrapper
    wrapper = wrap(original, options)
    setattr(wrapper, _ORIGINAL, original)
    setattr(wrapper, _OPTIONS, options)
    completions.create = wrapper
    return client


def compile_options(**options: Any) -> dict[str, Any]:
    """The options ``compile_messages`` accepts, out of those patch_openai forwards.

    An option this compiler does not have yet is dropped while it asks for its
    default, and refused when it asks for more, so nobody believes a guard is
    on that is not.

    Example:
        >>> compile_options(mode="compact", schema=None)
        {'mode': 'compact', 'schema': None}
        >>> compile_options(colour="blue")
        Traceback (most recent call last):
        ...
        compiler.errors.OptionError: compile_messages has no option 'colour'
    """
    kept = {}
    for name, value in options.items():
        if name in DEFAULTS and _accepts(name):
            kept[name] = value
        elif name not in DEFAULTS or DEFAULTS[name] != value:
            raise OptionError(f"compile_messages has no option {name!r}")
    return kept


def _frozen(options: dict[str, Any]) -> dict[str, Any]:
    """The options validated now (a bad one is refused when patching, not on the first
    call) and copied, so a list of invariants the caller changes later changes nothing.

    Example:
        >>> rules = ["Never refund"]
        >>> frozen = _frozen({"invariants": rules, "mode": "compact"})
        >>> rules.append("Always upsell")
        >>> frozen["invariants"]
        ('Never refund',)
        >>> _frozen({"mode": "fast"})
        Traceback (most recent call last):
        ...
        compiler.errors.OptionError: unknown mode 'fast'; expected one of compact, cache_friendly
    """
    counter = options.get("token_counter")
    if counter is not None:
        resolve_counter(counter)
    chosen = Options.build(**{k: v for k, v in options.items() if k != "token_counter"})
    frozen = dict(options)
    for name in ("schema", "invariants"):
        if name in frozen:
            frozen[name] = getattr(chosen, name)
    return frozen


def _accepts(name: str) -> bool:
    """Whether ``compile_messages`` takes the option: by its signature, or, when the
    options hide behind ``**options``, by asking it with the default value."""
    parameters = inspect.signature(compile_messages).parameters
    if name in parameters:
        return True
    if not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
        return False
    try:
        compile_messages([], **{name: DEFAULTS[name]})
    except (OptionError, TypeError):
        return False
    return True


def _completions(client):
    try:
        completions = client.chat.completions
        completions.create  # noqa: B018 - probing that the method exists
    except AttributeError:
        raise TypeError(
            "patch_openai needs a client with chat.completions.create, "
            "such as openai.OpenAI() or openai.AsyncOpenAI()"
        ) from None
    return completions


def _is_async(create) -> bool:
    """Whether ``create`` is a coroutine function, under any decorator that hides it.

    The official async client decorates its ``create``, and the decorator's
    plain ``def`` hides the ``async def`` from ``iscoroutinefunction``.
    """
    if inspect.iscoroutinefunction(create):
        return True
    try:
        return inspect.iscoroutinefunction(inspect.unwrap(create))
    except ValueError:  # a __wrapped__ cycle
        return False


def _sync_wrapper(original, options):
    @functools.wraps(original)
    def create(*args, **kwargs):
        args, kwargs, telemetry = _compiled_call(args, kwargs, options)
        response = original(*args, **kwargs)
        if inspect.isawaitable(response):  # an async create no check could see
            return _attach_when_awaited(response, telemetry)
        return attach(response, telemetry)

    return create


def _async_wrapper(original, options):
    @functools.wraps(original)
    async def create(*args, **kwargs):
        args, kwargs, telemetry = _compiled_call(args, kwargs, options)
        return attach(await original(*args, **kwargs), telemetry)

    return create


async def _attach_when_awaited(awaitable, telemetry):
    return attach(await awaitable, telemetry)


def _compiled_call(args: tuple, kwargs: dict, options) -> tuple[tuple, dict, dict | None]:
    """The call's arguments with ``messages`` compiled, and the telemetry."""
    if "messages" in kwargs:
        compiled, telemetry = _compile(kwargs["messages"], options)
        return args, {**kwargs, "messages": compiled}, telemetry
    if args:  # the official method is keyword-only; other clients may not be
        compiled, telemetry = _compile(args[0], options)
        return (compiled, *args[1:]), kwargs, telemetry
    return args, kwargs, None


def _compile(messages, options) -> tuple[Any, dict | None]:
    if isinstance(messages, Iterable) and not isinstance(
        messages, list | tuple | str | bytes | Mapping
    ):
        messages = list(messages)  # a generator can be read only once
    if not messages or not isinstance(messages, list | tuple):
        return messages, None
    return compile_messages(messages, **options)


def attach(response, telemetry: dict | None):
    """``response`` carrying ``telemetry`` as ``.context_gc``.

    Set past the object's own ``__setattr__``, so a pydantic response keeps the
    telemetry out of ``model_dump()`` and ``to_json()``. A dict (a client that returns
    the decoded JSON) comes back as a dict still, equal to it and serialised as it was;
    any other object that takes no attribute comes back in a thin proxy that carries it.

    Example:
        >>> attach(iter([1, 2]), {"mode": "compact"}).context_gc
        {'mode': 'compact'}
        >>> list(attach(iter([1, 2]), None))
        [1, 2]
        >>> reply = attach({"id": "r1"}, {"mode": "compact"})
        >>> reply == {"id": "r1"}, isinstance(reply, dict), reply.context_gc["mode"]
        (True, True, 'compact')
    """
    if isinstance(response, dict):
        return _TelemetryDict(response, telemetry)
    try:
        object.__setattr__(response, TELEMETRY_ATTRIBUTE, telemetry)
    except (AttributeError, TypeError):
        return _Carrier(response, telemetry)
    return response


class _TelemetryDict(dict):
    """A dict response, as it was, with the telemetry as an attribute beside its items."""

    def __init__(self, response: dict, telemetry):
        super().__init__(response)
        setattr(self, TELEMETRY_ATTRIBUTE, telemetry)


class _Carrier:
    """A response that takes no attribute, with the telemetry beside it.

    Attribute access, iteration (a stream's chunks) and the context-manager
    protocols go to the wrapped object.
    """

    __slots__ = ("_wrapped", "context_gc")

    def __init__(self, wrapped, telemetry):
        object.__setattr__(self, "_wrapped", wrapped)
        object.__setattr__(self, TELEMETRY_ATTRIBUTE, telemetry)

    def __getattr__(self, name):
        return getattr(self._wrapped, name)

    def __getitem__(self, key):
        return self._wrapped[key]

    def __iter__(self):
        return iter(self._wrapped)

    def __next__(self):
        return next(self._wrapped)

    def __aiter__(self):
        return self._wrapped.__aiter__()

    async def __anext__(self):
        return await self._wrapped.__anext__()

    def __enter__(self):
        self._wrapped.__enter__()
        return self

    def __exit__(self, *exc):
        return self._wrapped.__exit__(*exc)

    async def __aenter__(self):
        await self._wrapped.__aenter__()
        return self

    async def __aexit__(self, *exc):
        return await self._wrapped.__aexit__(*exc)

    def __repr__(self) -> str:
        return f"<{self._wrapped!r} with context_gc>"


__all__ = ["DEFAULTS", "TELEMETRY_ATTRIBUTE", "attach", "compile_options", "patch_openai"]

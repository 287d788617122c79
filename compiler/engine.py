"""Run the stages in order and say exactly what was done.

    per message (compiler.fold):  strip_compiled_one → declare → classify
                                  → extract → register (a fold)
    whole history:                retire → compact → recall → emit
    then:                         telemetry

Only this module reads the clock (it times the whole run).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from typing import Any

from compiler.fold import Fold
from compiler.incremental import HISTORIES
from compiler.layout import mark_cache_breakpoint, resolve_counter
from compiler.layout.telemetry import telemetry
from compiler.read import Message, read_message_list, unpaired
from compiler.read.formats import formats
from compiler.types import Compilation, Options


def compile_messages(messages: list, *, token_counter: Any = None, cache: bool = True, **options):
    """Compile an OpenAI-style message list; return (messages, telemetry).

    Options: ``schema``, ``mode`` ("compact" | "cache_friendly"), ``invariants``,
    ``recall_query``, ``teach_protocol``, ``declaration_policy`` and
    ``value_policy`` ("flag" | "reject" | "off"), ``cache_marks`` (mark the end of
    the stable prefix with ``cache_control``); ``token_counter`` ("chars",
    "exact", an encoding name, or an object with ``name`` and ``count``).
    With ``cache`` (the default) a history that extends one compiled before
    resumes that work (``compiler.incremental``); the result is the same.

    Example:
        >>> from compiler.state.schema import load_schema
        >>> msgs = [{"role": "user", "content": "Pay with my credit card."},
        ...         {"role": "assistant", "content": "Done."}]
        >>> out, tel = compile_messages(msgs, schema=load_schema("logistics"))
        >>> tel["active_state_slots"]
        {'payment_method': 'credit card'}
    """
    started = time.perf_counter()
    chosen = Options.build(**options)
    if _iterable(messages):  # a generator, a deque: read as the list it yields
        messages = list(messages)
    if cache and isinstance(messages, list | tuple):
        result, warnings = HISTORIES.compile(list(messages), chosen, chosen.cache_key)
    else:
        # The messages die with this call, and every dict it hands back is a new copy:
        # they need no copy of the caller's lists and dicts of their own.
        parsed = read_message_list(messages, own=False)
        items = len(messages) if isinstance(messages, list | tuple) else None
        # (the fold, held by no name once it finishes, is let go before the output and
        # telemetry are built, where the peak is)
        result = (
            Fold(chosen, by_item=True, resumable=False)
            .extend(parsed.messages, items=items)
            .finish(remember=False)
        )
        warnings = (*parsed.warnings, *unpaired(result.original))  # as HISTORIES gives them
    return _finish(result, warnings, started, token_counter)


def compile_transcript(text: str, *, token_counter: Any = None, cache: bool = False, **options):
    """Compile a transcript in any format ``formats`` reads.

    Returns (messages, telemetry, parse warnings). Raises ``TranscriptError``
    (with line and column) when the text holds no recognisable turn. ``cache`` is
    accepted, as ``compile_messages`` takes it, and has nothing to resume: a text is
    read whole every time.

    Example:
        >>> out, tel, warnings = compile_transcript("user: hi\\nassistant: hello")
        >>> [m["role"] for m in out], warnings
        (['user', 'assistant'], [])
    """
    started = time.perf_counter()
    chosen = Options.build(**options)
    parsed = formats(text)
    out, tel = _finish(run(parsed.messages, chosen), parsed.warnings, started, token_counter)
    return out, tel, [str(w) for w in parsed.warnings]


def _iterable(messages: Any) -> bool:
    """An iterable of messages that is not already a list, tuple or one message or text."""
    plain = (list, tuple, str, bytes, bytearray, Mapping)
    return isinstance(messages, Iterable) and not isinstance(messages, plain)


def _finish(result: Compilation, warnings, started, token_counter):
    counter = resolve_counter(token_counter)
    out = result.output_dicts()
    elapsed_ms = (time.perf_counter() - started) * 1000
    tel = telemetry(result, counter=counter, elapsed_ms=elapsed_ms, warnings=warnings, output=out)
    if result.options.cache_marks:  # (after telemetry: a mark is no change of the caller's)
        out = mark_cache_breakpoint(out)
    return out, tel


def run(messages: tuple[Message, ...], options: Options | None = None, **given) -> Compilation:
    """The stages, in order, over already-read messages: the per-message fold
    (strip, declare, classify, extract, register), then the whole history
    (retire, compact, recall, emit).

    Example:
        >>> from compiler.read.messages import Message
        >>> run((Message("user", "hi"),)).emitted.messages
        (Message(role='user', content='hi', ...),)
    """
    options = options or Options.build(**given)
    return Fold(options, resumable=False).extend(messages).finish(remember=False)


__all__ = ["compile_messages", "compile_transcript", "run"]

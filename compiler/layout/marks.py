"""Cache breakpoints in compiled output, for targets that take explicit ones (Anthropic,
or LiteLLM in front of it): ``cache_control`` on the message that ends the stable prefix.
"""

from __future__ import annotations

EPHEMERAL = {"type": "ephemeral"}


def mark_cache_breakpoint(messages: list[dict]) -> list[dict]:
    """``messages`` with the last one marked ``cache_control`` (a breakpoint where the
    target takes explicit ones: Anthropic, or LiteLLM in front of it), in the content-part
    form: a text content becomes one text part carrying the mark, a list of parts marks
    its last part, a message with no text content (tool calls only) is marked itself.
    In ``cache_friendly`` layout the last message ends the stable prefix: the next call's
    prompt starts with this one. The text the model reads is unchanged.

    Example:
        >>> mark_cache_breakpoint([{"role": "user", "content": "hi"}])[0]["content"]
        [{'type': 'text', 'text': 'hi', 'cache_control': {'type': 'ephemeral'}}]
        >>> mark_cache_breakpoint([{"role": "assistant", "content": None}])[0]["cache_control"]
        {'type': 'ephemeral'}
    """
    if not messages:
        return messages
    last = dict(messages[-1])
    content = last.get("content")
    if isinstance(content, str) and content:
        last["content"] = [{"type": "text", "text": content, "cache_control": dict(EPHEMERAL)}]
    elif isinstance(content, list) and content and isinstance(content[-1], dict):
        last["content"] = [*content[:-1], {**content[-1], "cache_control": dict(EPHEMERAL)}]
    else:
        last["cache_control"] = dict(EPHEMERAL)
    return [*messages[:-1], last]

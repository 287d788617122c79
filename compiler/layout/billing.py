"""What an agent loop's calls cost when the provider caches the prompt's prefix.

An agent loop sends its whole history on every call, and providers bill the part of a
prompt that repeats an earlier prompt from its first token at a cached rate. A compiler
that rewrites an early turn can therefore make a loop dearer while sending fewer tokens.
This module prices a sequence of prompts call by call, as a provider would: no I/O, no
clock, the same prompts give the same bill.

* :class:`Meter` renders each prompt, counts its tokens message by message and measures
  the prefix it shares with the prompt before it (a :class:`Measure`);
* :class:`PriceModel` names a provider's rules, and an :class:`Account` applies them to the
  measures of one loop, call after call (a :class:`Call` each);
* :func:`bill` does both for a list of prompts; :func:`replay` gives the prompts a loop
  sends for a transcript, compiled by a strategy.

**Rendering** (:func:`render_message`): a message is its role, its content's text and each
tool call's name and arguments, in order. Providers tokenise their own template of the
messages, not the JSON bytes on the wire, so key order, JSON escaping and call ids (which
no strategy here changes) stay out; everything the model reads is in, so a rewrite anywhere
breaks the prefix there, as it does at the provider. Tokens are counted per message: the
templates put special tokens between messages, so no token spans two of them. The count is
exact BPE where the ``exact`` extra is installed (``Meter("exact")``), ``chars/4``
otherwise; every result names its counter.

**The price models.** Costs are in units of one uncached input token.

* ``openai``, automatic prefix caching (OpenAI cookbook, *Prompt Caching 201*: a hit needs
  an exact repeated prefix, prompts of 1,024 tokens or more are cached, hits grow in
  128-token increments): the cached tokens are the prefix shared with the previous prompt,
  none below 1,024, else rounded down to 1,024 + k·128, billed at ``cached_rate`` (0.5 on
  gpt-4o, lower on newer models); writing costs nothing extra.
* ``anthropic``, breakpoints (Anthropic's prompt caching documentation): the cache holds
  tools, system and messages up to and including the block marked ``cache_control``; a
  write happens only at a breakpoint, and a read is the longest prefix an earlier request
  wrote, looked for at most 20 blocks back from each breakpoint; reads cost 0.1 and
  5-minute writes 1.25 of the input price; a prefix under the model's minimum (1,024 tokens
  on Sonnet 4.5) is not cached. With A the read and C the last breakpoint, A is billed as
  read, C − A as written, the rest as input. The breakpoint is the last message of each
  prompt (``"last"``, what automatic caching does), the messages carrying
  ``cache_control`` (``"marked"``), or those where a prompt marks any, else the last
  (``"auto"``: a client that follows a compiler's marks and caches automatically without).
* ``none``: every token at the full rate.

Assumed: a loop's calls come within the cache's lifetime and reach the server that holds
it; one message is one block (several blocks a message make the real lookback shorter).
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from enum import StrEnum

from compiler.errors import OptionError
from compiler.layout.tokens import TokenCounter, resolve_counter
from compiler.read import content_text


class Provider(StrEnum):
    OPENAI = "openai"
    ANTHROPIC = "anthropic"
    NONE = "none"


class Breakpoints(StrEnum):
    LAST = "last"  # the last message of each prompt
    MARKED = "marked"  # the messages carrying ``cache_control``
    AUTO = "auto"  # the marked messages where the prompt marks any, else the last


@dataclass(frozen=True)
class PriceModel:
    """A provider's caching rules: rates per input-token price, minimum, step, breakpoints.

    Example:
        >>> PriceModel.openai(0.1).name, PriceModel.anthropic().name, PriceModel.none().name
        ('openai@0.1', 'anthropic', 'none')
        >>> PriceModel.openai(1.5)
        Traceback (most recent call last):
        ...
        compiler.errors.OptionError: cached_rate must be between 0 and 1, not 1.5
    """

    provider: Provider
    cached_rate: float = 1.0
    write_rate: float = 1.0
    minimum: int = 0
    step: int = 1
    breakpoints: Breakpoints = Breakpoints.LAST
    lookback: int = 20

    def __post_init__(self):
        if not 0 <= self.cached_rate <= 1:
            raise OptionError(f"cached_rate must be between 0 and 1, not {self.cached_rate}")
        if self.write_rate < 1:
            raise OptionError(f"write_rate must be at least 1, not {self.write_rate}")
        if self.minimum < 0 or self.step < 1 or self.lookback < 1:
            raise OptionError("minimum must be ≥ 0, step and lookback ≥ 1")
        if self.breakpoints not in tuple(Breakpoints):
            raise OptionError(
                f"unknown breakpoints {self.breakpoints!r}; expected last, marked, auto"
            )
        object.__setattr__(self, "breakpoints", Breakpoints(self.breakpoints))

    @classmethod
    def openai(cls, cached_rate: float = 0.5, minimum: int = 1024, step: int = 128):
        return cls(Provider.OPENAI, cached_rate, 1.0, minimum, step)

    @classmethod
    def anthropic(
        cls,
        read_rate: float = 0.1,
        write_rate: float = 1.25,
        minimum: int = 1024,
        breakpoints: str = "last",
        lookback: int = 20,
    ):
        return cls(Provider.ANTHROPIC, read_rate, write_rate, minimum, 1, breakpoints, lookback)

    @classmethod
    def none(cls):
        return cls(Provider.NONE)

    @property
    def name(self) -> str:
        if self.provider is Provider.OPENAI:
            return f"openai@{self.cached_rate:g}"
        if self.provider is Provider.ANTHROPIC and self.breakpoints is not Breakpoints.LAST:
            return f"anthropic@{self.breakpoints}"
        return self.provider.value


def price_model(name: str, **rules) -> PriceModel:
    """The price model ``name`` (``openai``, ``anthropic`` or ``none``) with ``rules``.

    Example:
        >>> price_model("openai", cached_rate=0.25).name
        'openai@0.25'
        >>> price_model("gemini")
        Traceback (most recent call last):
        ...
        compiler.errors.OptionError: unknown price model 'gemini'; expected openai, anthropic, none
    """
    makers = {
        "openai": PriceModel.openai,
        "anthropic": PriceModel.anthropic,
        "none": PriceModel.none,
    }
    if name not in makers:
        raise OptionError(f"unknown price model {name!r}; expected {', '.join(makers)}")
    return makers[name](**rules)


def render_message(message: dict) -> str:
    """The canonical text of a chat message: role, content, each tool call's name and
    arguments, one per line (see the module's docstring for why).

    Example:
        >>> call = {"id": "c1", "function": {"name": "get_user", "arguments": '{"id": 7}'}}
        >>> render_message({"role": "assistant", "content": None, "tool_calls": [call]})
        'assistant\\n\\nget_user {"id": 7}'
    """
    text = f"{message.get('role')}\n{content_text(message.get('content'))}"
    for call in message.get("tool_calls") or ():
        function = (call.get("function") if isinstance(call, dict) else None) or {}
        arguments = function.get("arguments")
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments, sort_keys=True)
        text += f"\n{function.get('name')} {arguments}"
    return text


def _marked(message: dict) -> bool:
    """Whether the message, or a part of its content, carries ``cache_control``."""
    if message.get("cache_control"):
        return True
    parts = message.get("content")
    return isinstance(parts, list) and any(
        isinstance(p, dict) and p.get("cache_control") for p in parts
    )


@dataclass(frozen=True)
class Measure:
    """One prompt measured against the one before it: tokens sent, tokens of the shared
    prefix, the token position at each message's end, a key for each message prefix
    (equal keys, equal prefixes), the messages marked ``cache_control``, characters."""

    tokens: int
    shared: int
    ends: tuple[int, ...]
    keys: tuple[bytes, ...]
    marks: tuple[int, ...]
    chars: int


class Meter:
    """Measures the prompts of one loop in order; holds only the previous prompt's text.

    Example:
        >>> meter = Meter()
        >>> first = [{"role": "system", "content": "x" * 4000}]
        >>> meter.measure(first).tokens, meter.counter.name
        (1001, 'chars/4')
        >>> m = meter.measure([*first, {"role": "user", "content": "hi"}])
        >>> m.tokens, m.shared, m.ends
        (1002, 1001, (1001, 1002))
    """

    def __init__(self, counter: TokenCounter | str | None = None):
        self.counter = resolve_counter(counter)
        self._texts: list[str] = []
        self._counts: list[int] = []
        self._keys: list[bytes] = []

    def measure(self, messages: Iterable[dict]) -> Measure:
        messages = list(messages)
        texts = [render_message(m) for m in messages]
        before, same = self._texts, 0
        while same < min(len(texts), len(before)) and texts[same] == before[same]:
            same += 1
        known = dict(zip(before, self._counts, strict=True))
        counts = [known[t] if t in known else self.counter.count(t) for t in texts]
        keys = self._keys[:same]
        for text in texts[same:]:
            keys.append(
                hashlib.blake2b(
                    text.encode("utf-8", "surrogatepass"),
                    key=keys[-1] if keys else b"",
                    digest_size=16,
                ).digest()
            )
        ends, total = [], 0
        for count in counts:
            total += count
            ends.append(total)
        shared = ends[same - 1] if same else 0
        if same < min(len(texts), len(before)):
            common = _common_prefix(texts[same], before[same])
            shared += min(self.counter.count(texts[same][:common]), counts[same])
        self._texts, self._counts, self._keys = texts, counts, keys
        return Measure(
            tokens=total,
            shared=shared,
            ends=tuple(ends),
            keys=tuple(keys),
            marks=tuple(i for i, m in enumerate(messages) if _marked(m)),
            chars=sum(len(t) for t in texts),
        )


def _common_prefix(a: str, b: str) -> int:
    """Length of the longest common prefix, by bisection over slices compared in C."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        middle = (low + high + 1) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle - 1
    return low


@dataclass(frozen=True)
class Call:
    """One call's bill: tokens sent, read from cache, written to cache, shared with the
    previous prompt (before the provider's rules), and the cost in input-token prices."""

    tokens: int
    cached: int
    written: int
    shared: int
    cost: float


class Account:
    """One loop's bill under one price model, call after call; holds the cache entries.

    Example:
        >>> meter, account = Meter(), Account(PriceModel.anthropic())
        >>> prompt = [{"role": "system", "content": "x" * 8000}]
        >>> account.charge(meter.measure(prompt))
        Call(tokens=2001, cached=0, written=2001, shared=0, cost=2501.25)
        >>> account.charge(meter.measure([*prompt, {"role": "user", "content": "y" * 400}]))
        Call(tokens=2102, cached=2001, written=101, shared=2001, cost=326.35)
    """

    def __init__(self, model: PriceModel):
        self.model = model
        self._entries: set[bytes] = set()

    def charge(self, measure: Measure) -> Call:
        model = self.model
        cached = written = 0
        if model.provider is Provider.OPENAI:
            cached = _rounded_down(measure.shared, model) if measure.tokens >= model.minimum else 0
        elif model.provider is Provider.ANTHROPIC:
            cached, written = self._breakpoints(measure)
        cost = measure.tokens - cached - written
        cost += cached * model.cached_rate + written * model.write_rate
        return Call(measure.tokens, cached, written, measure.shared, round(cost, 6))

    def _breakpoints(self, measure: Measure) -> tuple[int, int]:
        """(read, written) under breakpoints: the highest earlier entry within the lookback
        of a breakpoint is read, the rest up to the last breakpoint is written."""
        model, ends, keys = self.model, measure.ends, measure.keys
        points = measure.marks if model.breakpoints is not Breakpoints.LAST else ()
        if not points and model.breakpoints is not Breakpoints.MARKED:
            points = (len(ends) - 1,) if ends else ()
        if not points or ends[points[-1]] < model.minimum:
            return 0, 0
        hit = 0
        for point in points:
            for index in range(point, max(-1, point - model.lookback), -1):
                if keys[index] in self._entries:
                    hit = max(hit, ends[index])
                    break
        self._entries.update(keys[p] for p in points if ends[p] >= model.minimum)
        return hit, ends[points[-1]] - hit


def _rounded_down(shared: int, model: PriceModel) -> int:
    """``shared`` tokens as the provider counts them cached: none under the minimum, else
    the minimum and whole steps beyond it."""
    if shared < model.minimum:
        return 0
    return model.minimum + (shared - model.minimum) // model.step * model.step


@dataclass(frozen=True)
class Bill:
    """A loop's calls under one price model, with the counter that counted them.

    Example:
        >>> prompt = [{"role": "system", "content": "x" * 8000}]
        >>> loop = [prompt, [*prompt, {"role": "user", "content": "hi"}]]
        >>> b = bill(loop, PriceModel.openai(0.5))
        >>> b.tokens, b.cached, b.cost, b.counter
        (4003, 1920, 3043.0, 'chars/4')
    """

    model: PriceModel
    counter: str
    calls: tuple[Call, ...] = field(default_factory=tuple)

    @property
    def tokens(self) -> int:
        return sum(c.tokens for c in self.calls)

    @property
    def cached(self) -> int:
        return sum(c.cached for c in self.calls)

    @property
    def written(self) -> int:
        return sum(c.written for c in self.calls)

    @property
    def cost(self) -> float:
        return round(sum(c.cost for c in self.calls), 6)


def bill(
    prompts: Iterable[list[dict]], model: PriceModel, counter: TokenCounter | str | None = None
) -> Bill:
    """The bill of a loop that sends ``prompts`` in order, under ``model``.

    Example:
        >>> short = [{"role": "user", "content": "hello"}]
        >>> [c.cost for c in bill([short, short], PriceModel.openai(0.1)).calls]
        [2.0, 2.0]
    """
    meter, account = Meter(counter), Account(model)
    calls = tuple(account.charge(meter.measure(prompt)) for prompt in prompts)
    return Bill(model, meter.counter.name, calls)


def replay(
    history: list[dict], compile_fn: Callable[[list[dict]], list[dict]] | None = None
) -> Iterator[list[dict]]:
    """The prompt before each assistant turn of ``history``, as a loop would send it:
    ``compile_fn`` of the turns before it, each call given its own deep copy (a strategy
    may rewrite what it is given); without ``compile_fn``, those turns as they are.

    Example:
        >>> history = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "a"},
        ...            {"role": "user", "content": "more"}, {"role": "assistant", "content": "b"}]
        >>> [len(p) for p in replay(history)]
        [1, 3]
        >>> [p[-1]["content"] for p in replay(history, lambda m: m[-1:])]
        ['hi', 'more']
    """
    for turn, message in enumerate(history):
        if turn and message.get("role") == "assistant":
            before = history[:turn]
            yield compile_fn(copy.deepcopy(before)) if compile_fn else before

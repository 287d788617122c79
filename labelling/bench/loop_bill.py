"""The agent loop's bill for one transcript, per strategy: what ``tests/bench/billed.py``
prints for a corpus, and what the corpus report shows beside its other figures.

A loop calls the model before each assistant turn with the history so far; each strategy
compiles that prompt its own way (``compiler.replay``), and each prompt is priced against
the one the same strategy sent before it (``compiler.Account``, under ``MODELS``). Beside
the bill, the identifiers the agent goes on to use that are still in the prompt compiled
before the use (``labelling.bench.fidelity``), and whether the system prompt and the first
user turn stayed verbatim in every call: a bill is only worth reading beside what was
kept for it.

No Django: the benchmark runs without the site's settings. A ``Totals`` is plain numbers,
so rows made in separate jobs are summed in any order (``Totals.add``), and stored as JSON
(``Totals.as_dict``, ``Totals.from_dict``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace

import compiler
from compiler import Account, Meter, PriceModel, content_text, looks_like_machine_output, replay
from labelling.bench.corpus import first_turn_kept
from labelling.bench.fidelity import identifier_recall, probes

MODELS = {
    "openai@0.1": PriceModel.openai(0.1),
    "openai@0.25": PriceModel.openai(0.25),
    "openai@0.5": PriceModel.openai(0.5),
    "anthropic": PriceModel.anthropic(breakpoints="auto"),
    "none": PriceModel.none(),
}
MODES = ("compact", "cache_friendly")
PLACEHOLDER = "Old environment output: ({} lines omitted)"


@dataclass(frozen=True)
class Strategy:
    key: str
    label: str
    compile: Callable[[list[dict]], list[dict]] | None  # None: the history as it is
    # a compile per cached rate, where a loop names its provider's (``per_rate``): each
    # price model is billed the calls compiled at its own rate, and ``compile`` is unused
    by_rate: dict[float, Callable[[list[dict]], list[dict]]] | None = None


RAW = Strategy("raw", "raw history, no compile", None)


@dataclass
class Totals:
    """One strategy's sums over the calls of one transcript, or of many."""

    chars: int = 0
    tokens: int = 0
    calls: int = 0
    costs: dict[str, float] = field(default_factory=lambda: dict.fromkeys(MODELS, 0.0))
    wanted: int = 0
    kept: int = 0
    system: list[int] = field(default_factory=lambda: [0, 0])  # kept in every call, seen
    first_user: list[int] = field(default_factory=lambda: [0, 0])

    def add(self, other: Totals) -> None:
        self.chars += other.chars
        self.tokens += other.tokens
        self.calls += other.calls
        for name in MODELS:
            self.costs[name] += other.costs.get(name, 0.0)
        self.wanted += other.wanted
        self.kept += other.kept
        for mine, theirs in ((self.system, other.system), (self.first_user, other.first_user)):
            mine[0] += theirs[0]
            mine[1] += theirs[1]

    def as_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> Totals:
        return cls(**{**data, "costs": dict(data["costs"])})


# -- strategies --------------------------------------------------------------


def loop_compact(schema_name: str) -> Strategy:
    """``compact`` as an agent loop calls it: told its provider's cached rate. Each price
    model that caches is billed the calls compiled with its rate (``openai@r``: r;
    ``anthropic``: 0.1, its read rate), and no caching those compiled at 0.1, the lowest
    rate a major provider bills, as are the characters and tokens sent; identifiers kept
    and the system prompt and task verbatim are the worst of those runs."""
    rates = sorted({model.cached_rate for name, model in MODELS.items() if name != "none"})
    by_rate = {rate: ours("compact", schema_name, rate).compile for rate in rates}
    label = "this project, compact, cached_rate = the price model's"
    return Strategy("compact", label, None, by_rate)


def ours(mode: str, schema_name: str, cached_rate: float | None = None) -> Strategy:
    """This project's compile in ``mode``, incremental as a loop calls it; ``cache_friendly``
    marks the end of its stable prefix, which the ``anthropic`` price model (breakpoints
    ``auto``) then caches up to, and takes ``cached_rate`` where one is given (else the
    option's default)."""
    schema = compiler.load_schema(schema_name)
    marks = mode == "cache_friendly"
    given = {} if cached_rate is None else {"cached_rate": cached_rate}
    key, label = mode, f"this project, {mode}"
    if given:
        key, label = f"{mode}@{cached_rate:g}", f"{label}, cached_rate={cached_rate:g}"

    def run(messages):
        compiled = compiler.compile_messages(
            messages, mode=mode, schema=schema, cache_marks=marks, **given
        )
        return compiled[0]

    return Strategy(key, label, run)


def peer(schema_name: str) -> Strategy | str:
    """The peer contextgc in compact mode, or why it is missing."""
    try:
        import contextgc
    except ImportError:
        return "contextgc: not installed (pip install contextgc==0.4.6)"
    from importlib.metadata import version

    schema = contextgc.load_schema(schema_name)

    def run(messages):
        return contextgc.compile_messages(messages, mode="compact", schema=schema)[0]

    return Strategy("contextgc", f"peer contextgc {version('contextgc')}", run)


def masking(keep: int) -> Strategy:
    """SWE-agent's LastNObservations with n = ``keep`` (polling 1): every tool output but
    the last ``keep`` replaced by a line count. The first user turn, the task, is never
    masked.

    Example:
        >>> history = [{"role": "user", "content": "fix it"}]
        >>> history += [{"role": "tool", "content": f"out {i}"} for i in range(3)]
        >>> [m["content"] for m in masking(1).compile(history)]  # doctest: +NORMALIZE_WHITESPACE
        ['fix it', 'Old environment output: (1 lines omitted)',
         'Old environment output: (1 lines omitted)', 'out 2']
    """

    def run(messages):
        first_user = next((i for i, m in enumerate(messages) if m.get("role") == "user"), None)
        outputs = [i for i, m in enumerate(messages) if i != first_user and is_tool_output(m)]
        for index in outputs[: max(0, len(outputs) - keep)]:
            lines = len(content_text(messages[index].get("content")).splitlines())
            messages[index] = {**messages[index], "content": PLACEHOLDER.format(lines)}
        return messages

    return Strategy(f"mask{keep}", f"observation masking, all but the last {keep}", run)


def is_tool_output(message: dict) -> bool:
    """A tool's output: a ``tool`` message, or a user turn that reads as machine output
    (SWE-agent's observations come as user turns)."""
    role = message.get("role")
    text = content_text(message.get("content"))
    return role == "tool" or (role == "user" and looks_like_machine_output(text))


def strategies(
    schema_name: str,
    *,
    use_peer: bool = True,
    cached_rates: tuple[float, ...] = (),
    one_off: bool = False,
) -> tuple[list[Strategy], list[str]]:
    """Raw, both of this project's modes (``compact`` as a loop calls it,
    ``loop_compact``; with ``one_off``, also compiled as a one-off compile per call, with
    no cached rate; each mode again at each of ``cached_rates``), the peer when
    installed, masking 3 and 10; and a note for each strategy that could not be set up."""
    found = [RAW, loop_compact(schema_name), ours("cache_friendly", schema_name)]
    if one_off:
        label = "this project, compact, a one-off compile per call (no cached_rate)"
        found.insert(2, replace(ours("compact", schema_name), key="compact-one-off", label=label))
    found += [ours(mode, schema_name, rate) for rate in cached_rates for mode in MODES]
    notes = []
    if use_peer:
        other = peer(schema_name)
        found.append(other) if isinstance(other, Strategy) else notes.append(other)
    return [*found, masking(3), masking(10)], notes


# -- one transcript ----------------------------------------------------------


def run_one(messages: list[dict], strategy: Strategy, counter: str | None = None) -> Totals:
    """One strategy over one transcript: every call measured, billed, probed.

    Example:
        >>> history = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "ok"}]
        >>> history += [{"role": "user", "content": "and?"}, {"role": "assistant", "content": "x"}]
        >>> totals = run_one(history, RAW, "chars")
        >>> totals.calls, totals.costs["none"] == totals.tokens  # no caching: every token paid
        (2, True)
        >>> totals.costs["openai@0.1"] == totals.tokens  # under 1,024 tokens nothing is cached
        True
    """
    if strategy.by_rate is not None:
        return _per_rate(messages, strategy, counter)
    meter = Meter(counter)
    accounts = {name: Account(model) for name, model in MODELS.items()}
    totals = Totals()
    turns = [i for i, m in enumerate(messages) if i and m.get("role") == "assistant"]
    wanted = {probe.turn for probe in probes(messages)}
    probed: dict[int, list[dict]] = {}  # only the prompts the identifier probes look into
    system_ok = first_user_ok = True
    for turn, prompt in zip(turns, replay(messages, strategy.compile), strict=True):
        measure = meter.measure(prompt)
        totals.chars += measure.chars
        totals.tokens += measure.tokens
        totals.calls += 1
        for name, account in accounts.items():
            totals.costs[name] += account.charge(measure).cost
        if turn in wanted:
            probed[turn] = prompt
        # the text each message shows, whether as a string or as parts (a cache mark)
        shown = [{"content": content_text(m.get("content"))} for m in prompt]
        system_ok = system_ok and first_turn_kept(messages, shown, "system") is not False
        first_user_ok = first_user_ok and first_turn_kept(messages, shown, "user") is not False
    recall = identifier_recall(lambda history: (probed[len(history)], {}), [messages])
    totals.wanted, totals.kept = recall.wanted, recall.kept
    if first_turn_kept(messages, messages, "system") is not None:
        totals.system = [int(system_ok), 1]
    if first_turn_kept(messages, messages, "user") is not None:
        totals.first_user = [int(first_user_ok), 1]
    return totals


def _per_rate(messages: list[dict], strategy: Strategy, counter: str | None) -> Totals:
    """``run_one`` of a strategy compiled per cached rate (``Strategy.by_rate``)."""
    runs = {
        rate: run_one(messages, Strategy(strategy.key, strategy.label, compile), counter)
        for rate, compile in strategy.by_rate.items()
    }
    lowest = runs[min(runs)]
    worst = min(runs.values(), key=lambda t: t.kept)  # (each run probes the same turns)
    totals = Totals(lowest.chars, lowest.tokens, lowest.calls, wanted=worst.wanted)
    totals.kept = worst.kept
    totals.costs = {
        name: runs.get(model.cached_rate, lowest).costs[name] for name, model in MODELS.items()
    }
    for part in ("system", "first_user"):
        counts = [getattr(run, part) for run in runs.values()]
        setattr(totals, part, [min(c[0] for c in counts), max(c[1] for c in counts)])
    return totals


def ratio(part: float, whole: float) -> float | None:
    """``part / whole`` to four places, None over nothing.

    Example:
        >>> ratio(1, 3), ratio(2, 0)
        (0.3333, None)
    """
    return round(part / whole, 4) if whole else None


def figures(label: str, mine: Totals, raw: Totals) -> dict:
    """A strategy's sums set against the raw history's: what a report prints."""
    return {
        "label": label,
        "chars_vs_raw": ratio(mine.chars, raw.chars),
        "tokens_vs_raw": ratio(mine.tokens, raw.tokens),
        "billed_vs_raw": {name: ratio(mine.costs[name], raw.costs[name]) for name in MODELS},
        "identifiers": {
            "wanted": mine.wanted,
            "kept": mine.kept,
            "rate": ratio(mine.kept, mine.wanted),
        },
        "system_verbatim": mine.system,
        "first_user_verbatim": mine.first_user,
        "calls": mine.calls,
    }

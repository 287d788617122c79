"""Pictures for the report pages, as server-rendered SVG: no script, no library.

Three charts, each a pure function from figures to markup:

- ``rate_bars``: one bar per row (a slot, a provenance) at its rate, with the 95%
  Wilson interval drawn across it and its N written beside it;
- ``reduction_bars``: token reduction per transcript, sorted, below the zero line
  where the compiled context grew;
- ``timeline``: one transcript's slots over its turns: each value from the turn
  that set it to the turn that superseded it.

Every piece of text is escaped. Colours are SVG presentation attributes, allowed by
the site's content security policy (no inline style); text uses ``currentColor`` so
it follows the page's light or dark scheme. Each chart is an ``img`` with a title,
and every mark carries a ``<title>`` a person can hover or a screen reader can read.
"""

from __future__ import annotations

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

BAR = "#3b73d9"
INTERVAL = "#1b1f24"
GROWN = "#d64545"
DIM = "#8a939d"
WIDTH = 720
ROW = 28
LABEL_W = 190
VALUE_W = 200
# The width of one character of the charts' sans-serif text, at the largest: labels are
# placed from their length so none runs past the edge or over another.
CHAR_W = {10: 6.0, 11: 6.6, 12: 7.2}
LINE_H = 14  # two axis labels' baselines at least this far apart never overlap (12 px text)


def text_width(text: str, size: int = 12) -> float:
    """The most width ``text`` takes at ``size`` px.

    Example:
        >>> text_width("100%")
        28.8
    """
    return len(text) * CHAR_W[size]


def _svg(width: int, height: int, title: str, body: list[str], css: str) -> SafeString:
    return mark_safe(
        f'<svg class="chart {css}" role="img" aria-label="{escape(title)}" '
        f'viewBox="0 0 {width} {height}" width="100%" preserveAspectRatio="xMinYMin meet" '
        f'xmlns="http://www.w3.org/2000/svg" font-size="12" font-family="system-ui, sans-serif">'
        f"<title>{escape(title)}</title>{''.join(body)}</svg>"
    )


def rate_bars(title: str, rows: list[dict]) -> SafeString:
    """Bars at each row's rate with its Wilson interval; ``rows``: label, rate, n, wilson95.

    A row with no decidable case gets no bar, and says n=0.

    Example:
        >>> svg = rate_bars("Corroborated", [{"label": "cabin", "rate": 0.75, "n": 145,
        ...                                  "wilson95": [0.676, 0.815]}])
        >>> svg.count('class="bar"'), svg.count('class="interval"'), "n=145" in svg
        (1, 1, True)
    """
    plot = WIDTH - LABEL_W - VALUE_W
    height = ROW * len(rows) + 30
    body = [_axis_ticks(plot, height - 22)]
    for index, row in enumerate(rows):
        y = 8 + index * ROW
        label = escape(row["label"])
        body.append(_row_label(label, y))
        if not row.get("n"):
            body.append(
                f'<text x="{LABEL_W + 4}" y="{y + 14}" fill="currentColor">'
                "no decidable case (n=0)</text>"
            )
            continue
        rate, (low, high) = row["rate"], row["wilson95"]
        width = max(1.0, rate * plot)
        words = f"{row['label']}: {rate:.1%}, n={row['n']}, 95% CI {low:.1%}–{high:.1%}"
        body.append(
            f'<g class="rate" data-label="{label}"><title>{escape(words)}</title>'
            f'<rect class="bar" x="{LABEL_W}" y="{y + 3}" width="{width:.1f}" height="16" '
            f'fill="{BAR}" opacity="0.75"/>'
            f'<line class="interval" x1="{LABEL_W + low * plot:.1f}" '
            f'x2="{LABEL_W + high * plot:.1f}" y1="{y + 11}" y2="{y + 11}" '
            f'stroke="{INTERVAL}" stroke-width="2"/>'
            f'<text x="{LABEL_W + plot + 8}" y="{y + 14}" fill="currentColor">'
            f"{rate:.1%} (n={row['n']}, CI {low:.0%}–{high:.0%})</text></g>"
        )
    return _svg(WIDTH, height, title, body, "rate-bars")


def _row_label(label: str, y: float) -> str:
    """A bar's name, escaped already, right-aligned against the plot at row ``y``."""
    return (
        f'<text x="{LABEL_W - 8}" y="{y + 14}" text-anchor="end" fill="currentColor">{label}</text>'
    )


def _axis_ticks(plot: int, y: int) -> str:
    ticks = []
    for share in (0, 0.25, 0.5, 0.75, 1.0):
        x = LABEL_W + share * plot
        ticks.append(
            f'<line x1="{x:.1f}" x2="{x:.1f}" y1="4" y2="{y}" stroke="{DIM}" '
            f'stroke-width="0.5"/><text x="{x:.1f}" y="{y + 14}" text-anchor="middle" '
            f'fill="currentColor" font-size="10">{share:.0%}</text>'
        )
    return "".join(ticks)


def reduction_bars(title: str, rows: list[dict]) -> SafeString:
    """Token reduction per transcript, sorted; ``rows``: ident, raw_tokens, compiled_tokens.

    Example:
        >>> svg = reduction_bars("Reduction", [{"ident": "a", "raw_tokens": 100,
        ...     "compiled_tokens": 40}, {"ident": "b", "raw_tokens": 100, "compiled_tokens": 120}])
        >>> svg.count('class="saved"'), svg.count('class="grew"')
        (1, 1)
    """
    shares = sorted(
        ((r["raw_tokens"] - r["compiled_tokens"]) / r["raw_tokens"], r["ident"])
        for r in rows
        if r["raw_tokens"]
    )
    top, bottom = 10, 190
    low = min([0.0, *(s for s, _ in shares)])
    span = (1.0 - low) or 1.0
    zero = top + (1.0 / span) * (bottom - top)
    # the lowest share's label goes a line below "0%" when the bars below zero are shorter
    low_y = max(bottom, zero + LINE_H)
    height = 220 + round(low_y - bottom)
    step = (WIDTH - 60) / max(1, len(shares))
    body = [
        f'<line x1="50" x2="{WIDTH}" y1="{zero:.1f}" y2="{zero:.1f}" stroke="currentColor"/>',
        f'<text x="44" y="{top + 4}" text-anchor="end" fill="currentColor">100%</text>',
        f'<text x="44" y="{zero + 4:.1f}" text-anchor="end" fill="currentColor">0%</text>',
    ]
    if low < 0:
        body.append(
            f'<text x="44" y="{low_y + 4:.1f}" text-anchor="end" fill="currentColor">'
            f"{low:.0%}</text>"
        )
    for index, (share, ident) in enumerate(shares):
        x = 55 + index * step
        y_end = zero - share / span * (bottom - top)
        y, h = (y_end, zero - y_end) if share >= 0 else (zero, y_end - zero)
        css, colour = ("saved", BAR) if share >= 0 else ("grew", GROWN)
        body.append(
            f'<rect class="{css}" x="{x:.2f}" y="{y:.1f}" width="{max(step - 0.5, 0.5):.2f}" '
            f'height="{max(h, 0.5):.1f}" fill="{colour}"><title>{escape(ident)}: '
            f"{share:.1%}</title></rect>"
        )
    body.append(
        f'<text x="{WIDTH / 2:.0f}" y="{height - 6}" text-anchor="middle" fill="currentColor">'
        f"{len(shares)} transcripts, sorted by reduction; red: the compiled context grew</text>"
    )
    return _svg(WIDTH, height, title, body, "reduction-bars")


def timeline(title: str, history: list[dict], turns: int) -> SafeString:
    """One row per slot; each value a span from its turn to the turn that replaced it.

    Example:
        >>> svg = timeline("t", [{"slot": "cabin", "value": "economy", "turn": 2,
        ...     "superseded_by": 9, "provenance": "inferred"}, {"slot": "cabin",
        ...     "value": "business", "turn": 9, "superseded_by": None,
        ...     "provenance": "acted"}], 12)
        >>> svg.count('class="span live"'), svg.count('class="span superseded"')
        (1, 1)
    """
    slots = sorted({e["slot"] for e in history})
    last = max(turns - 1, 1)
    plot = WIDTH - LABEL_W - 20
    height = max(1, len(slots)) * 44 + 40

    def x_of(turn: int) -> float:
        return LABEL_W + min(turn, last) / last * plot

    body = []
    for step in range(0, last + 1, max(1, last // 10)):
        x = x_of(step)
        body.append(
            f'<line x1="{x:.1f}" x2="{x:.1f}" y1="4" y2="{height - 24}" stroke="{DIM}" '
            f'stroke-width="0.5"/><text x="{x:.1f}" y="{height - 10}" text-anchor="middle" '
            f'fill="currentColor" font-size="10">t{step}</text>'
        )
    for row, slot in enumerate(slots):
        y = 10 + row * 44
        body.append(
            f'<text x="{LABEL_W - 8}" y="{y + 18}" text-anchor="end" fill="currentColor">'
            f"{escape(slot)}</text>"
        )
        entries = sorted((e for e in history if e["slot"] == slot), key=lambda e: e["turn"])
        for n, entry in enumerate(entries):
            body.append(_span(entry, x_of, last, y + (n % 2) * 14))
    if not slots:
        body.append(f'<text x="{LABEL_W}" y="30" fill="currentColor">No slot took a value.</text>')
    return _svg(WIDTH, height, title, body, "timeline")


def _span(entry: dict, x_of, last: int, y: float) -> str:
    end = entry["superseded_by"]
    live = end is None
    start, stop = x_of(entry["turn"]), x_of(last if live else end)
    words = (
        f"{entry['slot']} = {entry['value']} ({entry.get('provenance') or '?'}), "
        f"turn {entry['turn']}, " + ("live at the end" if live else f"superseded by turn {end}")
    )
    colour = BAR if live else DIM
    css = "span live" if live else "span superseded"
    shown = entry["value"] if len(entry["value"]) <= 28 else entry["value"][:27] + "…"
    value = escape(shown)
    # right of its dot, or left of it where it would run past the chart's right edge
    if start + 6 + text_width(shown, 11) > WIDTH - 2:
        label = f'<text x="{start - 6:.1f}" y="{y + 4}" text-anchor="end" '
    else:
        label = f'<text x="{start + 6:.1f}" y="{y + 4}" '
    return (
        f'<g class="{css}"><title>{escape(words)}</title>'
        f'<rect x="{start:.1f}" y="{y + 6}" width="{max(stop - start, 3):.1f}" height="8" '
        f'fill="{colour}" rx="2"/><circle cx="{start:.1f}" cy="{y + 10}" r="4" fill="{colour}"/>'
        f'{label}fill="currentColor" font-size="11">{value}</text>'
        "</g>"
    )


def bill_bars(title: str, rows: list[dict]) -> SafeString:
    """The loop's bill per strategy as a multiple of the raw history's, with the raw
    history's 1.0 drawn across; ``rows``: label, ratio (None: not measured). A strategy
    dearer than raw is drawn in red.

    Example:
        >>> svg = bill_bars("Billed vs raw", [{"label": "raw", "ratio": 1.0},
        ...                                  {"label": "compact", "ratio": 1.91}])
        >>> svg.count('class="bar'), svg.count('class="bar grown"'), "1.91×" in svg
        (2, 1, True)
    """
    plot = WIDTH - LABEL_W - VALUE_W
    top = max([1.0, *(row["ratio"] for row in rows if row["ratio"] is not None)])
    scale = plot / (top * 1.05)
    height = ROW * len(rows) + 30
    x_raw = LABEL_W + scale
    body = [
        f'<line class="raw-line" x1="{x_raw:.1f}" x2="{x_raw:.1f}" y1="4" y2="{height - 22}" '
        f'stroke="{INTERVAL}" stroke-dasharray="3 3" stroke-width="1"/>'
        f'<text x="{x_raw:.1f}" y="{height - 8}" text-anchor="middle" fill="currentColor" '
        f'font-size="10">raw = 1.0</text>'
    ]
    for index, row in enumerate(rows):
        y = 8 + index * ROW
        label = escape(row["label"])
        body.append(_row_label(label, y))
        ratio = row["ratio"]
        if ratio is None:
            body.append(
                f'<text x="{LABEL_W + 4}" y="{y + 14}" fill="currentColor">not measured</text>'
            )
            continue
        grown = ratio > 1.0
        words = f"{row['label']}: {ratio:.2f}× the raw history's bill"
        body.append(
            f'<g class="bill" data-label="{label}"><title>{escape(words)}</title>'
            f'<rect class="bar{" grown" if grown else ""}" x="{LABEL_W}" y="{y + 3}" '
            f'width="{max(1.0, ratio * scale):.1f}" height="16" '
            f'fill="{GROWN if grown else BAR}" opacity="0.75"/>'
            f'<text x="{LABEL_W + ratio * scale + 6:.1f}" y="{y + 14}" fill="currentColor">'
            f"{ratio:.2f}×</text></g>"
        )
    return _svg(WIDTH, height, title, body, "bill-bars")


def call_bars(title: str, calls: list[dict]) -> SafeString:
    """A loop's calls side by side, each a pair of columns, the raw history's (grey) then
    the compiled one's (blue), each split into what its cached tokens cost (pale, on top)
    and the rest; ``calls``: label, and for "raw" and "compiled" a ``Call``-like dict
    (tokens, cached, cost) and the cached rate as ``rate``.

    Example:
        >>> one = {"tokens": 2000, "cached": 1024, "cost": 1078.4}
        >>> svg = call_bars("Per call", [{"label": "call 1", "raw": one, "compiled": one,
        ...                               "rate": 0.1}])
        >>> svg.count('class="cost raw"'), svg.count('class="cost compiled"')
        (1, 1)
    """
    left, top, plot_h, right = 56, 10, 180, 8
    plot_w = WIDTH - left - right
    height = top + plot_h + 44
    peak = max([1.0, *(call[side]["cost"] for call in calls for side in ("raw", "compiled"))])
    scale = plot_h / peak
    group = plot_w / max(1, len(calls))
    bar = max(1.0, group * 0.4)
    base = top + plot_h
    body = []
    for share in (0, 0.5, 1.0):
        y = base - share * plot_h
        body.append(
            f'<line x1="{left}" x2="{WIDTH - right}" y1="{y:.1f}" y2="{y:.1f}" stroke="{DIM}" '
            f'stroke-width="0.5"/><text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end" '
            f'fill="currentColor" font-size="10">{share * peak:,.0f}</text>'
        )
    for index, call in enumerate(calls):
        for offset, side, colour in ((0.1, "raw", DIM), (0.5, "compiled", BAR)):
            body.append(
                _call_bar(call, side, colour, left + group * (index + offset), bar, base, scale)
            )
    body.append(
        f'<text x="{left}" y="{height - 22}" fill="currentColor" font-size="10">'
        f"calls in order, each: raw history (grey), compiled (blue); pale: what the cached "
        f"tokens cost</text>"
        f'<text x="{left}" y="{height - 8}" fill="currentColor" font-size="10">'
        f"cost in input-token prices (one uncached input token = 1)</text>"
    )
    return _svg(WIDTH, height, title, body, "call-bars")


def _call_bar(call: dict, side: str, colour: str, x: float, width: float, base: float, scale):
    """One column: the cost of its uncached tokens, and above it the cached tokens' cost."""
    found = call[side]
    cached_cost = found["cached"] * call["rate"]
    rest = found["cost"] - cached_cost
    words = (
        f"{call['label']}, {'raw history' if side == 'raw' else 'compiled'}: "
        f"{found['tokens']:,} tokens, {found['cached']:,} cached; cost {found['cost']:,.1f}"
    )
    y_rest = base - rest * scale
    y_cached = y_rest - cached_cost * scale
    return (
        f'<g class="cost {side}"><title>{escape(words)}</title>'
        f'<rect x="{x:.1f}" y="{y_rest:.1f}" width="{width:.1f}" height="{rest * scale:.1f}" '
        f'fill="{colour}"/>'
        f'<rect x="{x:.1f}" y="{y_cached:.1f}" width="{width:.1f}" '
        f'height="{cached_cost * scale:.1f}" fill="{colour}" opacity="0.35"/></g>'
    )

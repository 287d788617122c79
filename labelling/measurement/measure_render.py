"""The corpus report (``labelling.measurement.corpus_report``) as text: the corpus, every
figure with its N, then precision. The figure table is also what the report pages show."""

from __future__ import annotations

from labelling.bench.render import columns, gold_lines, peer_line


def render(report: dict) -> str:
    """The report as text: the corpus, then every figure with its N, then precision."""
    head = report["header"]
    turns = head["turns"]
    lines = [
        f"CORPUS  {report['corpus']}   schema {report['schema']}",
        f"  transcripts      {head['transcripts']:,}   (independent families {head['families']})",
        f"  turns            total {turns['total']:,}, median {turns['median']}, "
        f"range {turns['min']}-{turns['max']}",
        f"  characters       {head['characters']:,}",
        f"  models           {_models(head['models'])}",
    ]
    if head["repositories"]:
        lines.append(f"  repositories     {len(head['repositories'])}")
    if report["cap"]:
        cap = report["cap"]
        cut = ", ".join(f"{k} -{v}" for k, v in cap["dropped"].items()) or "nothing cut"
        lines.append(
            f"  per-repo cap     {cap['per_repo']}: kept {cap['kept']} of {cap['read']} ({cut})"
        )
    lines += [
        f"  peer             {peer_line(report['peer'])}",
        f"  tokens           {report['estimator']}",
        f"  command          {report['command']}" if report["command"] else "",
        "",
        *_figure_table(report),
    ]
    for error in report["errors"]:
        lines.append(
            f"set aside: {error['transcript']}: {error['library']} raised {error['error']}"
        )
    if "gold" in report:
        lines += ["", *gold_lines(report["gold"], list(report["figures"]))]
    if report.get("loop_bill", {}).get("strategies"):
        lines += ["", *loop_bill_lines(report["loop_bill"])]
    lines += ["", *_precision_lines(report["precision"])]
    if "retirement_precision" in report:
        lines += ["", *retirement_lines(report["retirement_precision"])]
    return "\n".join(line for line in lines if line is not None)


def retirement_rows(p: dict) -> list[dict]:
    """Each retirement figure with its shares written out, as the text and the reports page
    both show them.

    Example:
        >>> f = {"name": "all corpora", "rows": 4, "correct": 3, "incorrect": 1,
        ...      "row_precision": 0.75, "units": 2, "unit_precision": 0.5,
        ...      "wilson95": [0.0945, 0.9055], "warnings": []}
        >>> row = retirement_rows({"figures": [f]})[0]
        >>> row["row_precision"], row["unit_precision"], row["wilson95"]
        ('75.0%', '50.0%', '9.4%–90.5%')
    """
    return [
        {
            **f,
            "row_precision": f"{f['row_precision']:.1%}",
            "unit_precision": f"{f['unit_precision']:.1%}",
            "wilson95": "{:.1%}–{:.1%}".format(*f["wilson95"]),
        }
        for f in p["figures"]
        if f["units"]
    ]


def retirement_lines(p: dict) -> list[str]:
    """Retirement precision as text: safe to drop / judged, over rows and over units."""
    lines = [
        f"RETIREMENT PRECISION (safe to drop / judged; {p['files']} label files in {p['source']})"
    ]
    rows = retirement_rows(p)
    if not rows:
        return [*lines, "  NO RETIREMENT PRECISION FIGURE: no judged retired turn was found"]
    for f in rows:
        lines += [
            f"  {f['name']}",
            f"    judged rows          {f['rows']}  (safe to drop {f['correct']}, still needed "
            f"{f['incorrect']})   precision {f['row_precision']} (n={f['rows']})",
            f"    independent units    {f['units']}  precision {f['unit_precision']} "
            f"(n={f['units']}, 95% Wilson {f['wilson95']})",
            *(f"    ! {w}" for w in f["warnings"]),
        ]
    return lines


def loop_bill_lines(bill: dict) -> list[str]:
    """The loop's bill per strategy, each figure over the raw history's, with its N.

    Example:
        >>> raw = {"label": "raw", "tokens_vs_raw": 1.0, "billed_vs_raw": {"none": 1.0},
        ...        "identifiers": {"wanted": 0, "kept": 0, "rate": None}}
        >>> print("\\n".join(loop_bill_lines({"transcripts": 1, "calls": 2,
        ...     "counter": "chars/4", "models": ["none"], "strategies": [raw]})))
        LOOP BILL  replayed call by call; N=1 transcripts, 2 calls; tokens by chars/4
        strategy  tokens  billed none  identifiers kept
        raw         1.00         1.00                 -
    """
    head = ["strategy", "tokens", *(f"billed {m}" for m in bill["models"]), "identifiers kept"]
    rows = [head]
    for found in bill["strategies"]:
        ids = found["identifiers"]
        kept = f"{ids['rate']:.3f} ({ids['kept']}/{ids['wanted']})" if ids["wanted"] else "-"
        billed = [f"{found['billed_vs_raw'][m]:.2f}" for m in bill["models"]]
        rows.append([found["label"], f"{found['tokens_vs_raw']:.2f}", *billed, kept])
    title = (
        f"LOOP BILL  replayed call by call; N={bill['transcripts']} transcripts, "
        f"{bill['calls']} calls; tokens by {bill['counter']}"
    )
    return [title, *columns(rows)]


def _models(models: dict) -> str:
    return ", ".join(f"{name} x{count}" for name, count in models.items()) or "-"


def _figure_table(report: dict) -> list[str]:
    if not report["header"]["transcripts"]:
        return ["no transcript measured"]
    return [
        *columns(figure_rows(report)),
        f"timing: best of {report['repeats']} per transcript, wall clock on this machine: "
        "it moves run to run; every other figure is deterministic",
    ]


def _recall_rows(figures: dict, row) -> list[list[str]]:
    """Identifiers the agent used later, kept in context; none when no turn used one."""
    recall = figures["ours"].get("identifier_recall") or {}
    if not recall.get("wanted"):
        return []
    label = f"identifiers used later, kept in context (N={recall['wanted']})"
    return [row(label, lambda k: figures[k]["identifier_recall"]["kept"])]


def figure_rows(report: dict) -> list[list[str]]:
    """The figure table: a header row (figure, ours, peer), then one row per figure."""
    n = report["header"]["transcripts"]
    figures, extractions = report["figures"], report["extractions"]
    keys = list(figures)

    def row(label, pick, fmt=str):
        return [label, *(fmt(pick(k)) for k in keys)]

    pct = "{:.1%}".format
    ms = "{:.3f}".format
    table = [
        ["figure", *keys],
        row(f"facts extracted (history entries, Σ, N={n})", lambda k: extractions[k]["entries"]),
        row(f"facts live at the end (Σ, N={n})", lambda k: figures[k]["facts"]),
        row(f"keys re-asserted (values replaced, Σ, N={n})", lambda k: figures[k]["supersessions"]),
        row(
            f"token reduction Σ(raw−compiled)/Σraw (N={n})",
            lambda k: figures[k]["token_reduction"],
            pct,
        ),
        row(
            f"  same, system messages left out (N={n})",
            lambda k: figures[k]["token_reduction_outside_system"],
            pct,
        ),
        row(f"payloads compacted (Σ, N={n})", lambda k: figures[k]["payloads_compacted"]),
        row(f"turns retired (Σ, N={n})", lambda k: figures[k]["retirements"]),
        row(f"retirement violations (Σ, N={n})", lambda k: figures[k]["retirement_violations"]),
        row(f"contexts that grew (of N={n})", lambda k: figures[k]["contexts_grew"]),
        *_recall_rows(figures, row),
        row(f"compile ms p50 (N={n})", lambda k: figures[k]["timing"]["compile_ms_p50"], ms),
        row(f"compile ms p95 (N={n})", lambda k: figures[k]["timing"]["compile_ms_p95"], ms),
        row(
            f"throughput MB/s ({report['header']['characters']:,} chars / Σ best)",
            lambda k: figures[k]["timing"]["mb_per_s"],
            "{:.2f}".format,
        ),
    ]
    kept = [
        ("system_prompts", "system prompt kept verbatim (of {} with one)"),
        ("first_user_turns", "first user turn kept verbatim (of {} with one)"),
    ]
    for at, (key, label) in enumerate((k for k in kept if figures["ours"][k[0]]), start=6):
        count = figures["ours"][key]
        table.insert(
            at,
            row(f"  {label.format(count)}", lambda k, key=key: figures[k][f"{key}_kept_verbatim"]),
        )
    return table


def _precision_lines(p: dict) -> list[str]:
    lines = [
        "PRECISION (hand labels)",
        f"  labels supplied        {p['supplied']}"
        + (f"   ({p['source']})" if p["source"] else ""),
        f"  about this corpus      {p['in_this_corpus']}",
        f"  matched an extraction  {p['matched']}",
        f"  stale (no longer made) {len(p['stale'])}",
    ]
    if not p["figure"]:
        return [*lines, f"  NO PRECISION FIGURE: {p['why_no_figure']}"]
    lines += [f"  unclear (not judged)   {p['unclear']}", *_precision_rows("all slots", p["all"])]
    for slot, figure in p["slots"].items():
        lines += _precision_rows(slot, figure)
    return lines


def _precision_rows(name: str, f: dict) -> list[str]:
    low, high = f["wilson95"]
    lines = [
        f"  {name}",
        f"    JUDGED rows          {f['rows']}  (correct {f['correct']}, "
        f"incorrect {f['incorrect']})   precision {f['row_precision']:.1%} (n={f['rows']})",
        f"    independent units    {f['units']}  precision {f['unit_precision']:.1%} "
        f"(n={f['units']}, 95% CI {low:.0%}–{high:.0%})",
    ]
    lines += [f"    ! {w}" for w in f["warnings"]]
    return lines

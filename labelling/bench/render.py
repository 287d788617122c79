"""The benchmark's report as a plain-text table (``tests/bench/measure.py`` without
``--json``), and the table helpers the corpus report
(``labelling.measurement.measure``) prints with."""

from __future__ import annotations

from labelling.bench.compare import PEER_EXPECTED, TARGET_SPEEDUP
from labelling.bench.gold import GOLD_SLOTS, VERDICTS


def render(report: dict) -> str:
    """The report as a plain-text table; ``--json`` prints the dict instead."""
    figures = report["figures"]
    keys = list(figures)
    lines = [
        f"corpus       {report['corpus']}",
        f"schema       {report['schema']} (compact mode for both)",
        f"ours         {figures['ours']['library']}",
        f"peer         {peer_line(report['peer'])}",
        f"tokens       {report['estimator']}",
        f"timing       best of {report['repeats']} per transcript, interleaved, "
        "GC off; p50/p95 nearest-rank",
        "",
        f"transcripts {report['transcripts']:,}   turns {report['turns']:,}   "
        f"characters {report['characters']:,}   raw tokens {report['raw_tokens']:,}",
        "",
    ]
    table = [["figure", *keys, *(["ours vs peer"] if "comparison" in report else [])]]
    table += _rows(report, keys)
    lines += columns(table)
    for error in report["errors"]:
        who = f"{error['transcript']}: {error['library']}"
        lines.append(f"set aside: {who} raised {error['error']}")
    if "gold" in report:
        lines += ["", *gold_lines(report["gold"], keys)]
    if "comparison" in report:
        lines += ["", *_target_lines(report)]
    return "\n".join(lines)


def peer_line(peer: dict) -> str:
    """The peer as the report names it: package and version, or why it is absent.

    Example:
        >>> peer_line({"available": False, "why": "skipped (--no-peer)"})
        'skipped (--no-peer)'
        >>> peer_line({"available": True, "package": "contextgc", "version": "0.5.0",
        ...            "expected_version": "0.4.6"})
        'contextgc 0.5.0 (expected 0.4.6)'
    """
    if not peer["available"]:
        return peer["why"]
    note = "" if peer["version"] == peer["expected_version"] else f" (expected {PEER_EXPECTED})"
    return f"{peer['package']} {peer['version']}{note}"


def _rows(report: dict, keys: list[str]) -> list[list[str]]:
    n = report["transcripts"]
    figures = report["figures"]
    comparison = report.get("comparison")

    def row(label, pick, fmt=str, versus=None):
        cells = [fmt(pick(figures[k])) for k in keys]
        return [label, *cells, *([versus or ""] if comparison else [])]

    pct = "{:.1%}".format
    ms = "{:.3f}".format
    raw = report["raw_tokens"]
    reduction_label = f"token reduction, Σ(raw−compiled)/Σraw (N={n}, Σraw={raw:,})"
    rest = figures["ours"]["raw_tokens_outside_system"]
    talk = figures["ours"]["raw_tokens_outside_prompt"]
    prompts = figures["ours"]["system_prompts"]
    rows = [
        row(
            reduction_label,
            lambda f: f["token_reduction"],
            pct,
            comparison and f"{comparison['token_reduction_diff_pp']:+.1f} pp",
        ),
        row(
            f"  same, saved clamped at 0 per transcript (N={n})",
            lambda f: f["token_reduction_clamped"],
            pct,
        ),
        row(
            f"  same, system messages left out (N={n}, Σraw={rest:,})",
            lambda f: f["token_reduction_outside_system"],
            pct,
        ),
        row(
            f"  same, system messages and first user turn left out (N={n}, Σraw={talk:,})",
            lambda f: f["token_reduction_outside_prompt"],
            pct,
        ),
        row("facts (live in final registers, Σ)", lambda f: f["facts"]),
        row("supersessions (values replaced, Σ)", lambda f: f["supersessions"]),
        row("retirements (turns retired, Σ)", lambda f: f["retirements"]),
        row("payloads compacted (Σ)", lambda f: f["payloads_compacted"]),
        row("retirement violations (Σ)", lambda f: f["retirement_violations"]),
        row(f"contexts that grew (of N={n})", lambda f: _count_pct(f["contexts_grew"], n)),
        *_recall_rows(figures, row),
        row(f"compile ms p50 (N={n})", lambda f: f["timing"]["compile_ms_p50"], ms),
        row(f"compile ms p95 (N={n})", lambda f: f["timing"]["compile_ms_p95"], ms),
        row("compile ms total", lambda f: f["timing"]["compile_ms_total"], ms),
        row(
            f"throughput MB/s ({report['characters']:,} chars / total)",
            lambda f: f["timing"]["mb_per_s"],
            "{:.2f}".format,
            comparison and f"{comparison['throughput_ours_over_peer']:.2f}×",
        ),
    ]
    tasks = figures["ours"]["first_user_turns"]
    kept = [
        (prompts, f"system prompt kept verbatim (of N={prompts} with one)",
         "system_prompts_kept_verbatim"),
        (tasks, f"first user turn kept verbatim (of N={tasks} with one)",
         "first_user_turns_kept_verbatim"),
    ]  # fmt: skip
    for at, (count, label, key) in enumerate((k for k in kept if k[0]), start=4):
        rows.insert(at, row(label, lambda f, key=key, n=count: _count_pct(f[key], n)))
    if any(figures[k]["mutated_input"] for k in keys):
        rows.append(row("inputs mutated by the call", lambda f: f["mutated_input"]))
    return rows


def _recall_rows(figures: dict, row) -> list[list[str]]:
    """The fidelity row, when some turn used an identifier learned from a payload."""
    recall = figures["ours"].get("identifier_recall")
    if not recall or not recall["wanted"]:
        return []
    label = (
        f"identifiers used later, kept in context (N={recall['wanted']} in {recall['turns']} turns)"
    )
    return [row(label, lambda f: _count_pct(f["identifier_recall"]["kept"], recall["wanted"]))]


def _count_pct(count: int, n: int) -> str:
    return f"{count} ({count / n:.1%})" if n else str(count)


def columns(table: list[list[str]]) -> list[str]:
    """Rows of cells as aligned lines: the first column left-aligned, the rest right.

    Example:
        >>> for line in columns([["figure", "ours"], ["facts", "40"], ["retirements", "7"]]):
        ...     print(line)
        figure       ours
        facts          40
        retirements     7
    """
    widths = [max(len(r[i]) for r in table) for i in range(len(table[0]))]
    return [
        "  ".join(
            cell.ljust(w) if i == 0 else cell.rjust(w)
            for i, (cell, w) in enumerate(zip(r, widths, strict=True))
        ).rstrip()
        for r in table
    ]


def gold_lines(gold: dict, keys: list[str]) -> list[str]:
    """The gold block (``gold_figures`` per library under ``gold[key]``) as a table.

    Example:
        >>> counts = {"match": 3, "mismatch": 1, "missing": 0}
        >>> slots = {slot: dict.fromkeys(VERDICTS, 0) for slot in GOLD_SLOTS}
        >>> slots["cabin_class"] = counts
        >>> gold = {"transcripts": 2, "slots_with_gold": 4,
        ...         "ours": {"slots": slots, "total": counts}}
        >>> head, *table = gold_lines(gold, ["ours"])
        >>> head.split(", ", 1)[1]
        '2 transcripts, 4 (transcript, slot) pairs with a gold value'
        >>> for line in table:
        ...     print(line)
        slot (N pairs)     ours match  ours mismatch  ours missing
        cabin_class (N=4)   3 (75.0%)      1 (25.0%)      0 (0.0%)
        total (N=4)         3 (75.0%)      1 (25.0%)      0 (0.0%)
    """
    head = (
        f"gold: FINAL register vs info.task.actions, {gold['transcripts']} transcripts, "
        f"{gold['slots_with_gold']} (transcript, slot) pairs with a gold value"
    )
    table = [["slot (N pairs)", *(f"{k} {v}" for k in keys for v in VERDICTS)]]
    for slot in [*GOLD_SLOTS, "total"]:
        counts = {k: gold[k]["total"] if slot == "total" else gold[k]["slots"][slot] for k in keys}
        n = sum(counts[keys[0]].values())
        if n:
            cells = [_count_pct(counts[k][v], n) for k in keys for v in VERDICTS]
            table.append([f"{slot} (N={n})", *cells])
    return [head, *columns(table)]


def _target_lines(report: dict) -> list[str]:
    comparison = report["comparison"]
    met = comparison["targets"]
    lines = [
        "targets",
        _target(
            f"throughput ≥ {TARGET_SPEEDUP:g}× peer: "
            f"{comparison['throughput_ours_over_peer']:.2f}×",
            met["throughput_3x"],
        ),
        _target(
            f"token reduction ≥ peer: {comparison['token_reduction_diff_pp']:+.1f} pp "
            f"(N={report['transcripts']})",
            met["token_reduction_at_least_peer"],
        ),
    ]
    if "gold" in report:
        mine, theirs = report["gold"]["ours"]["total"], report["gold"]["peer"]["total"]
        n = report["gold"]["slots_with_gold"]
        lines += [
            _target(
                f"gold matches ≥ peer: {mine['match']} vs {theirs['match']} (N={n})",
                met["gold_matches_at_least_peer"],
            ),
            _target(
                f"gold mismatches < peer: {mine['mismatch']} vs {theirs['mismatch']} (N={n})",
                met["gold_fewer_mismatches"],
            ),
        ]
    return lines


def _target(text: str, ok: bool) -> str:
    return f"  {'met   ' if ok else 'MISSED'}  {text}"

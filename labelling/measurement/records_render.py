"""The records report as text: every figure with its N (``score_records`` prints this)."""

from __future__ import annotations

from labelling.bench.records_db import BUCKETS
from labelling.measurement.records_report import GOLD_VERDICTS


def render(report: dict) -> str:
    """The report as text, every figure with its N."""
    lines = [
        f"RECORDS  {report['domain']} (schema {report['schema']})",
        f"  transcripts   {report['transcripts']}  ({', '.join(report['files'])})",
        f"  database      {report['database_records']}  ({', '.join(report['database'])})",
        f"  extractions   {report['extractions']} register history entries "
        f"({report['live_extractions']} live at the end)",
        "",
        _table_line(
            "", ["corrob.", "contra.", "unverif.", "unchecked", "n"], "rate over decidable"
        ),
        _tally_line("all", report["total"]),
    ]
    for provenance, counts in report["by_provenance"].items():
        lines.append(_tally_line(f"  {provenance}", counts))
    for provenance, note in report["provenance_notes"].items():
        lines.append(f"      {provenance}: {note}")
    lines.append("")
    for slot, counts in report["by_slot"].items():
        lines.append(_tally_line(slot, counts))
        for provenance, sub in report["by_slot_and_provenance"][slot].items():
            if sub["n"]:
                lines.append(_tally_line(f"  {provenance}", sub))
    lines += ["", "fields compared:"]
    lines += [f"  {slot:<20} {where}" for slot, where in report["fields"].items()]
    if report["unverifiable_reasons"]:
        lines += ["unverifiable, why:"]
        lines += [f"  {n:>5}  {why}" for why, n in report["unverifiable_reasons"].items()]
    if report["addresses"]:
        a = report["addresses"]
        lines.append(
            f"addresses: {a['street_line_only']} of {a['corroborated']} corroborated stop at "
            "the street line"
        )
    for slot, vocab in report["record_vocabulary"].items():
        lines.append(
            f"record vocabulary: {slot} takes {', '.join(vocab['values'])} "
            f"across {vocab['records']:,} database records"
        )
    lines += [
        "",
        *_gold_lines(report["gold"]),
        "",
        *_case_lines(report["contradicted"], report["contradicted_notes"]),
    ]
    return "\n".join(lines)


def _table_line(label: str, cells: list[str], tail: str) -> str:
    return f"{label:<22}" + "".join(f"{c:>10}" for c in cells) + f"   {tail}"


def _tally_line(label: str, counts: dict) -> str:
    cells = [str(counts[b.value]) for b in BUCKETS] + [str(counts["n"])]
    return _table_line(label, cells, rate_text(counts["rate"]))


def rate_text(rate: dict) -> str:
    """``97.4% (n=575, 95% CI 95.7–98.5%)``, or why there is no rate.

    Example:
        >>> rate_text({"corroborated": 0, "decidable": 0, "rate": None, "wilson95": []})
        'no decidable extraction (n=0)'
    """
    if not rate["decidable"]:
        return "no decidable extraction (n=0)"
    low, high = rate["wilson95"]
    return f"{rate['rate']:.1%} (n={rate['decidable']}, 95% CI {low:.1%}–{high:.1%})"


def _gold_lines(gold: dict) -> list[str]:
    if not gold["available"]:
        return [f"gold actions: not available ({gold['why']})"]
    lines = [
        f"GOLD  final register vs info.task.actions: {gold['transcripts']} transcripts, "
        f"{gold['pairs']} (transcript, slot) pairs with a gold value",
        _table_line("", [*GOLD_VERDICTS, "n"], ""),
    ]
    for slot, counts in [*gold["slots"].items(), ("total", gold["total"])]:
        lines.append(
            _table_line(
                slot, [str(counts[v]) for v in GOLD_VERDICTS] + [str(sum(counts.values()))], ""
            )
        )
    for provenance, counts in gold["by_provenance"].items():
        cells = [str(counts[v]) for v in GOLD_VERDICTS] + [str(sum(counts.values()))]
        lines.append(_table_line(f"  final value {provenance}", cells, ""))
    return lines


def _case_lines(cases: list[dict], notes: dict) -> list[str]:
    lines = [f"CONTRADICTED  {len(cases)} entries; of them, found mechanically:"]
    lines += [f"  {n['count']:>5}  {note}: {n['means']}" for note, n in notes.items()]
    for case in cases:
        after = "; ".join(
            f"t{s['turn']} {s['record']}: {', '.join(s['values'])}" for s in case["after"]
        )
        before = "; ".join(
            f"t{s['turn']} {s['record']}: {', '.join(s['values'])}" for s in case["before"]
        )
        lines.append(
            f"  {case['transcript']} turn {case['turn']} {case['slot']} = {case['value']!r} "
            f"({case['provenance']})"
        )
        lines.append(f"      record before: {before or '-'}")
        lines.append(f"      record after:  {after}")
        if case["notes"]:
            lines.append(f"      notes: {', '.join(case['notes'])}")
    return lines

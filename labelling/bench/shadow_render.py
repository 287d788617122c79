"""A shadow replay's figures as the text a person reads: a table, every share with its N.

``python -m labelling.bench shadow`` prints it for each capture; the figures are
``labelling.bench.shadow.shadow``'s, laid out here and computed nowhere else.
"""

from __future__ import annotations

from labelling.bench.shadow import FINAL_LABELS


def render(figures: dict) -> str:
    """The replay's figures as a table, every share with its N."""
    f = figures
    lines = [
        f"shadow replay of {f['capture']} (format {f['format']}): {f['model'] or '?'} "
        f"at {', '.join(f['endpoints']) or '?'}, schema {f['schema']}",
        f"{f['transcripts']} transcripts, {f['turns']} captured turns (id scheme {f['id_scheme']})",
        _row("turns with a block", f["turns_with_block"], f["turns"]),
        _row("malformed blocks", f["malformed"], f["blocks"]),
        _row("declared keys naming a schema slot", f["in_schema"], f["declared"]),
        _row("declared keys off the schema", f["off_schema"], f["declared"]),
    ]
    if f["off_schema_keys"]:
        lines.append(f"  off-schema keys: {', '.join(f['off_schema_keys'])}")
    final = f["final"]
    named = sum(final.values())
    lines.append(
        f"final state, each key a transcript's declarations named ({named} keys, "
        f"{f['transcripts']} transcripts):"
    )
    for name, label in FINAL_LABELS:
        lines.append(f"  {label:<48}{final[name]:>5}")
    at = f["at_turn"]
    lines.append(
        f"in-schema values declared, against the read path at their turn "
        f"({at['same'] + at['other'] + at['read_path_none']} values):"
    )
    for name, label in (
        ("same", "the read path held the same value"),
        ("other", "the read path held another value"),
        ("read_path_none", "the read path held none"),
    ):
        lines.append(f"  {label:<48}{at[name]:>5}")
    if at["recorded_read_path_differs"]:
        lines.append(
            f"  turns whose recorded read path differs from today's: "
            f"{at['recorded_read_path_differs']}"
        )
    values = f["values"]
    lines.append(
        _row("declared values of the wrong shape", values["wrong_shape"], values["with_contract"])
        + f"  with a contract ({values['declared']} values declared)"
    )
    records = f["records"]
    if records is None:
        lines.append("records: none given (airline and retail corpora have them)")
    else:
        decided = records["corroborated"] + records["contradicted"]
        lines.append(f"records ({records['domain']}), declared values:")
        lines.append(_row("  corroborated", records["corroborated"], decided))
        for name in ("contradicted", "unverifiable", "unchecked"):
            lines.append(f"  {name:<46}{records[name]:>5}")
    return "\n".join(lines)


def _row(label: str, part: int | None, whole: int) -> str:
    if part is None:
        return f"{label:<50}unknown of {whole}"
    share = f" ({part / whole:.0%})" if whole else ""
    return f"{label:<50}{part:>3} / {whole}{share}"

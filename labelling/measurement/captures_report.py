"""The captures page: every capture file in a folder, with its shadow replay.

Every figure comes from ``labelling.bench.captures_summary`` — the functions the
``capture --verify`` and ``shadow`` commands print — and is only laid out here, each
share beside its N. A file that is not a capture, or one made over another corpus, is a
row saying why; a corpus that cannot be read is said once, above the list.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from compiler import CompilerError
from labelling.bench.capture_files import corpus_transcripts
from labelling.bench.captures_summary import captures_summary
from labelling.bench.shadow import FINAL_LABELS

CAPTURE_COMMAND = (
    "python -m labelling.bench capture --transcript ../shared/corpora/coding/nebius-sample.txt "
    "--schema coding --out captures/coding-14b.json"
)

AT_TURN = (
    ("same", "the read path held the same value"),
    ("other", "the read path held another value"),
    ("read_path_none", "the read path held none"),
)
RECORDS = (
    ("corroborated", "corroborated, of those decidable (corroborated or contradicted)"),
    ("contradicted", "contradicted"),
    ("unverifiable", "unverifiable"),
    ("unchecked", "unchecked"),
)


@dataclass(frozen=True)
class Sources:
    """Where the page finds captures, the corpus they were made over and the records."""

    folder: Path
    corpus: Path | None = None
    records: Path | None = None

    @classmethod
    def of(cls, folder, corpus=None, records=None) -> Sources:
        """From settings values (text or paths; empty or None for an unset one)."""
        return cls(
            Path(folder), Path(corpus) if corpus else None, Path(records) if records else None
        )


def captures_context(sources: Sources) -> dict:
    """What ``measurement/captures.html`` shows for the captures in ``sources.folder``."""
    corpus, corpus_note = readable_corpus(sources.corpus)
    paths = sorted(sources.folder.glob("*.json")) if sources.folder.is_dir() else []
    rows = captures_summary(sources.folder, corpus, sources.records) if paths else []
    return {
        "sources": sources,
        "corpus_note": corpus_note,
        "captures": [presented(row) for row in rows],
        "capture_command": CAPTURE_COMMAND,
    }


def readable_corpus(corpus: Path | None) -> tuple[Path | None, str]:
    """``corpus`` if shadow can read it, else None and why not.

    Example:
        >>> readable_corpus(None)
        (None, 'CONTEXTGC_CAPTURES_CORPUS is not set, so no capture is replayed')
    """
    if corpus is None:
        return None, "CONTEXTGC_CAPTURES_CORPUS is not set, so no capture is replayed"
    try:
        corpus_transcripts(corpus.read_text(encoding="utf-8"))
    except (OSError, ValueError, CompilerError) as error:
        return None, f"the corpus {corpus} cannot be read, so no capture is replayed ({error})"
    return corpus, ""


def presented(row: dict) -> dict:
    """One summary row with its figures laid out as (label, part, whole, share) lines."""
    if "error" in row:
        return row
    lines = [
        _line("turns_with_block", "turns with a block", row["turns_with_block"], row["turns"]),
        _line("malformed", "malformed blocks", row["malformed"], row["blocks"]),
        _line("in_schema", "declared keys naming a schema slot", row["in_schema"], row["declared"]),
    ]
    figures = row.get("shadow")
    if figures:
        lines.append(
            _line(
                "off_schema", "declared keys off the schema", figures["off_schema"], row["declared"]
            )
        )
    return {**row, "lines": lines, "replay": replay_lines(figures) if figures else None}


def replay_lines(figures: dict) -> dict:
    """The replay's figures in the groups shadow prints them in."""
    final, at, values = figures["final"], figures["at_turn"], figures["values"]
    records = figures["records"]
    decided = records["corroborated"] + records["contradicted"] if records else 0
    final_n, at_turn_n = sum(final.values()), sum(at[k] for k, _ in AT_TURN)
    return {
        "final_n": final_n,
        "final": [_line(k, label, final[k], final_n) for k, label in FINAL_LABELS],
        "at_turn_n": at_turn_n,
        "at_turn": [_line(k, label, at[k], at_turn_n) for k, label in AT_TURN],
        "wrong_shape": _line(
            "wrong_shape",
            "declared values of the wrong shape, of those with a contract",
            values["wrong_shape"],
            values["with_contract"],
        ),
        "records": [
            _line(k, label, records[k], decided if k == "corroborated" else None)
            for k, label in RECORDS
        ]
        if records
        else None,
    }


def _line(key: str, label: str, part: int | None, whole: int | None = None) -> dict:
    """A figure, its N and the share (None where there is no N or the part is unknown).

    Example:
        >>> _line("malformed", "malformed blocks", 1, 42)["share"]
        '2%'
    """
    share = f"{part / whole:.0%}" if whole and part is not None else None
    return {"key": key, "label": label, "part": part, "whole": whole, "share": share}

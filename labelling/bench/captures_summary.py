"""The captures in a folder, one row each: what each declared, whether it may be used,
and its shadow replay.

Every figure is the bench's own (``labelling.bench.capture_files.key_figures`` and
``verify``, ``labelling.bench.shadow.shadow``), gathered per file for the captures page
(``labelling.measurement.captures_report``) to lay out.
"""

from __future__ import annotations

from pathlib import Path

from labelling.bench.capture_files import CaptureError, key_figures, load_capture, verify
from labelling.bench.shadow import ShadowRefused, records_for, shadow


def captures_summary(
    folder: Path, corpus: Path | None = None, records: Path | None = None
) -> list[dict]:
    """One row per capture file in ``folder``, for a page listing them (sorted by name).

    A file that is not a capture is listed with its ``error`` rather than left out. With
    ``corpus`` (the file the captures were made over), each row also holds its ``shadow``
    figures, or ``shadow_refused`` saying why there are none. With ``records`` (a corpora
    folder with ``<domain>/db/``), a capture whose schema an environment's records score
    has its declared values scored too; ``records_note`` says why one has none.
    """
    text = Path(corpus).read_text(encoding="utf-8") if corpus is not None else None
    return [_summary_row(path, text, records) for path in sorted(Path(folder).glob("*.json"))]


def _summary_row(path: Path, text: str | None, corpora: Path | None) -> dict:
    try:
        capture = load_capture(path)
        figures = key_figures(capture)
    except CaptureError as error:
        return {"name": path.name, "error": str(error)}
    declared, in_schema = figures["declared"], figures["in_schema"]
    row = {
        "name": path.name,
        "format": capture.format,
        "model": capture.model,
        "endpoints": list(capture.endpoints),
        "schema": capture.schema,
        "fingerprint": capture.fingerprint,
        "id_scheme": capture.id_scheme,
        "transcripts": len(capture.transcripts),
        "turns": len(capture.turns),
        "planned": capture.planned,
        **{k: figures[k] for k in ("turns_with_block", "blocks", "malformed")},
        "declared": declared,
        "in_schema": in_schema,
        "in_schema_share": (
            round(in_schema / declared, 3) if declared and in_schema is not None else None
        ),
        "off_schema_keys": figures["off_schema_keys"],
        "bill": capture.raw.get("bill"),
        "usage": capture.raw.get("usage"),
        "refused": verify(capture),
    }
    if text is None:
        return row
    records, row["records_note"] = records_for(capture.schema, corpora)
    try:
        row["shadow"] = shadow(capture, text, records)
    except ShadowRefused as error:
        row["shadow_refused"] = str(error)
    return row

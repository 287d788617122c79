"""Corpus files from the browser, kept on disk until a background job imports them.

A file of any size up to ``CONTEXTGC_MAX_IMPORT_BYTES`` arrives through Django's upload
handlers (in memory up to ``FILE_UPLOAD_MAX_MEMORY_SIZE``, on disk beyond) and is
copied in chunks to ``CONTEXTGC_UPLOAD_DIR`` under a random name. The job that imports
it belongs to the measurement app (``labelling.measurement.uploads``), which this app
does not import: the import page calls it through ``CONTEXTGC_IMPORT_QUEUE``, a setting
the project wires.

Workers read the file from ``CONTEXTGC_UPLOAD_DIR``, so every worker must see that
directory (one machine, or a shared volume).
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from django.conf import settings


def upload_path(name: str) -> Path:
    """Where the upload called ``name`` (a bare file name, never a path) is kept."""
    if Path(name).name != name:
        raise ValueError(f"not a bare file name: {name!r}")
    return Path(settings.CONTEXTGC_UPLOAD_DIR) / name


def save_upload(upload) -> Path:
    """Copy ``upload`` in chunks to a new file under ``CONTEXTGC_UPLOAD_DIR``."""
    path = upload_path(f"{secrets.token_hex(16)}.corpus")
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("xb") as out:
        for chunk in upload.chunks():
            out.write(chunk)
        out.flush()
        os.fsync(out.fileno())  # the job row that names it commits next: both survive a crash
    return path

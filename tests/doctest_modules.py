"""The modules of a package that hold docstring examples, found by walking it, so a new
module's examples run without anyone adding it to a list."""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path


def modules_with_examples(package: str, *, leave_out: tuple[str, ...] = ()) -> list[str]:
    """Every module under ``package`` whose source holds a ``>>>`` example, but those
    under a name in ``leave_out`` (a subpackage tested elsewhere, migrations)."""
    root = importlib.import_module(package)
    found = []
    for info in pkgutil.walk_packages(root.__path__, prefix=f"{package}."):
        if info.name.startswith(leave_out):
            continue
        spec = importlib.util.find_spec(info.name)
        if spec is None or spec.origin is None or not spec.origin.endswith(".py"):
            continue
        if ">>>" in Path(spec.origin).read_text(encoding="utf-8"):
            found.append(info.name)
    return sorted(found)

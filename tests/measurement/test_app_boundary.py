"""The two apps in the labelling folder depend one way: measurement reads labelling.

Read from the source (every ``import`` and ``from … import`` under ``labelling/``,
lazy ones inside functions included), not from what happens to be imported at run time.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _module_name(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")


def _imports() -> dict[str, set[str]]:
    """Module → the labelling modules it imports (a name imported from a package that is
    itself a module counts as that module)."""
    paths = sorted((ROOT / "labelling").rglob("*.py"))
    modules = {_module_name(path): path for path in paths}
    found = {}
    for name, path in modules.items():
        targets = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module:
                targets.add(node.module)
                targets |= {f"{node.module}.{alias.name}" for alias in node.names}
        found[name] = {t for t in targets if t in modules and t != name}
    return found


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}

    def visit(node: str, path: list[str]) -> list[str] | None:
        state[node] = 1
        for target in sorted(graph[node]):
            if state.get(target) == 1:
                return [*path[path.index(target) :], target]
            if target not in state and (found := visit(target, [*path, target])):
                return found
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (found := visit(start, [start])):
            return found
    return None


def test_no_labelling_module_imports_the_measurement_app():
    crossing = {
        (name, target)
        for name, targets in _imports().items()
        if not name.startswith("labelling.measurement")
        for target in targets
        if target.startswith("labelling.measurement")
    }
    assert crossing == set()


def test_no_two_modules_in_the_labelling_folder_import_each_other_even_indirectly():
    assert _cycle(_imports()) is None


def test_the_cycle_finder_reports_a_cycle_it_is_given():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]

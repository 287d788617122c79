"""The compiler's import graph: data flows one way, between modules and between wings.

Every ``import`` of a ``compiler`` module counts, at module level or inside a function
(an import tucked into a function to dodge a cycle is still a cycle), and so does one
under ``if TYPE_CHECKING``. The wings (``read``, ``protocol``, ``state``, ``compact``,
``layout``) and the modules at the package's root form a second, coarser graph: importing
any module of a wing runs the wing's ``__init__`` first, so a cycle between wings breaks
at import time even when no two modules import each other.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
COMPILER = ROOT / "compiler"
MAX_LINES = 400
MAX_CLASS_LINES = 200


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def compiler_modules() -> dict[str, Path]:
    return {module_name(path): path for path in sorted(COMPILER.rglob("*.py"))}


def imported(path: Path, package: str) -> set[str]:
    """Every module name ``path`` imports, wherever in the file the import stands; a name
    taken from a package is the package's submodule when one has that name."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: resolved against the importing module's package
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


def graph() -> dict[str, set[str]]:
    """Module → the compiler modules it imports (itself left out)."""
    modules = compiler_modules()
    edges = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        edges[name] = {other for other in imported(path, package) if other in modules} - {name}
    return edges


def wing(module: str) -> str:
    """``compiler.state.extract`` → ``state``; a module at the root is its own node."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "compiler"


def wing_graph() -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {}
    for module, targets in graph().items():
        edges.setdefault(wing(module), set()).update(wing(t) for t in targets)
    # a package's own __init__ importing its modules is not an edge between wings
    return {node: targets - {node} for node, targets in edges.items()}


def cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``edges`` as the path that closes it, or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for target in sorted(edges.get(node, ())):
            if state.get(target) == 1:
                return [*path[path.index(target) :], target]
            if target not in state and (found := visit(target)):
                return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(edges):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_the_cycle_finder_finds_a_cycle_and_passes_a_tree():
    assert cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None


def test_an_import_inside_a_function_counts(tmp_path):
    source = tmp_path / "m.py"
    source.write_text("def f():\n    from compiler.engine import run\n")
    assert "compiler.engine" in imported(source, "compiler")


def test_no_compiler_module_imports_another_that_imports_it_back():
    assert cycle(graph()) is None


def test_no_two_wings_import_each_other_even_through_others():
    assert cycle(wing_graph()) is None


WING_ORDER = ("read", "state", "protocol", "compact", "layout")


def test_a_wing_imports_only_the_wings_before_it():
    edges = wing_graph()
    backward = {
        (wing, later)
        for place, wing in enumerate(WING_ORDER)
        for later in edges.get(wing, set()) & set(WING_ORDER[place:])
    }
    assert backward == set()


def test_no_compiler_module_imports_the_top_level_package():
    edges = graph()
    assert sorted(m for m, targets in edges.items() if "compiler" in targets) == []


def test_the_compiler_never_imports_django():
    offenders = {
        name
        for name, path in compiler_modules().items()
        if any(n.split(".")[0] == "django" for n in imported(path, name))
    }
    assert offenders == set()


def lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def test_no_compiler_module_is_over_400_lines():
    over = {name for name, path in compiler_modules().items() if lines(path) > MAX_LINES}
    assert over == set()


def long_classes(path: Path, limit: int) -> dict[str, int]:
    """Each class in ``path`` longer than ``limit`` lines (decorators and nested classes
    counted in), by qualified name, with its length."""
    found: dict[str, int] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            name = prefix
            if isinstance(child, ast.ClassDef):
                name = f"{prefix}{child.name}"
                first = min([child.lineno, *(d.lineno for d in child.decorator_list)])
                length = child.end_lineno - first + 1
                if length > limit:
                    found[name] = length
                name += "."
            visit(child, name)

    visit(ast.parse(path.read_text(encoding="utf-8")), "")
    return found


def test_the_class_measure_counts_a_class_from_its_decorator_to_its_last_line(tmp_path):
    source = tmp_path / "m.py"
    body = "".join(f"    x{i} = {i}\n" for i in range(4))
    source.write_text(f"@dataclass\nclass Long:\n{body}\nclass Short:\n    y = 1\n")
    assert long_classes(source, 5) == {"Long": 6}
    assert long_classes(source, 6) == {}


def test_no_compiler_class_is_over_200_lines():
    over = {
        f"{name}.{cls}": length
        for name, path in compiler_modules().items()
        for cls, length in long_classes(path, MAX_CLASS_LINES).items()
    }
    assert over == {}


APP_IMPORT = re.compile(r"\b(?:from|import)\s+compiler\.\w")


@pytest.mark.parametrize("app", ["playground", "labelling"])
def test_the_web_apps_import_only_the_compilers_top_level_package(app):
    """Code and doctests alike: a line that names a module inside ``compiler`` fails."""
    offenders = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in sorted((ROOT / app).rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if APP_IMPORT.search(line)
    ]
    assert offenders == []

"""The project's modules import one another without a cycle, counting imports inside functions too: a lazy
import that closes a loop is still a loop, only hidden until the function runs."""

from __future__ import annotations

import ast
import graphlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("wire", "harness", "serve", "models", "evals")


def module_names() -> dict[str, Path]:
    names: dict[str, Path] = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            names[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return names


def imported(node: ast.Import | ast.ImportFrom, here: str, is_package: bool, known: set[str]) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:  # a relative import, from the module's package
        package = here.split(".") if is_package else here.split(".")[:-1]
        base = ".".join(package[: len(package) - node.level + 1] + ([base] if base else []))
    return [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names]


def under_type_checking(tree: ast.Module) -> set[ast.AST]:
    """Imports in `if TYPE_CHECKING:` blocks: annotations only, never run."""
    skipped: set[ast.AST] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped.update(child for stmt in node.body for child in ast.walk(stmt))
    return skipped


def import_graph() -> dict[str, set[str]]:
    names = module_names()
    known = set(names)
    graph: dict[str, set[str]] = {name: set() for name in names}
    for name, path in names.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skipped = under_type_checking(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom) and node not in skipped:
                targets = imported(node, name, path.name == "__init__.py", known)
                graph[name].update(t for t in targets if t in known and t != name)
    return graph


def test_the_graph_sees_the_project_imports() -> None:
    graph = import_graph()
    assert len(graph) > 50
    assert "harness.core.state" in graph["harness.core.loop"]  # a module-level import
    assert "harness.app.cli" in graph["harness.__main__"]  # an import inside a function counts too


def test_no_import_cycle() -> None:
    try:
        list(graphlib.TopologicalSorter(import_graph()).static_order())
    except graphlib.CycleError as exc:
        pytest.fail(f"import cycle: {' -> '.join(exc.args[1])}")


# the harness's layers, lowest first: what a module of each may import from the harness
CORE_MAY_USE = ("harness.core", "harness.errors", "harness.controls.base", "harness.tools.base")


def within(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == prefix or name.startswith(prefix + ".") for prefix in prefixes)


def test_the_loop_layer_uses_only_itself_and_the_seams_it_runs() -> None:
    """harness.core (the loop and what it needs) reads no flag and no file: it never reaches into the
    application, into a control or into a tool, only into the seams those declare (their `base` modules)."""
    graph = import_graph()
    core = [name for name in graph if within(name, ("harness.core",))]
    assert "harness.core.loop" in core and "harness.core.state" in core
    wrong = {
        f"{name} -> {target}"
        for name in core
        for target in graph[name]
        if within(target, ("harness",)) and not within(target, CORE_MAY_USE)
    }
    assert not wrong, sorted(wrong)


def test_only_the_application_and_the_entry_point_import_the_application() -> None:
    graph = import_graph()
    wrong = {
        f"{name} -> {target}"
        for name, targets in graph.items()
        if within(name, ("harness",)) and not within(name, ("harness.app", "harness.__main__"))
        for target in targets
        if within(target, ("harness.app",))
    }
    assert not wrong, sorted(wrong)

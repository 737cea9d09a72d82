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


# the harness's layers, lowest first: a module may import from its own layer and those below it, never above
LAYERS: tuple[tuple[str, ...], ...] = (
    ("harness.errors", "harness.prompts"),
    ("harness.core",),
    ("harness.fs",),
    ("harness.index",),
    ("harness.tools",),
    ("harness.controls",),
    ("harness.app", "harness.__main__", "harness"),
)


def within(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == prefix or name.startswith(prefix + ".") for prefix in prefixes)


def layer(name: str) -> int | None:
    """The harness layer a module is in (the most specific prefix that holds it), or None outside the harness."""
    found = [
        (len(prefix), index) for index, prefixes in enumerate(LAYERS) for prefix in prefixes if within(name, (prefix,))
    ]
    return max(found)[1] if found else None


def test_no_harness_module_imports_from_a_layer_above_its_own() -> None:
    """Drawn as rooms and arrows, the harness has no arrow pointing up: `core` (the loop, its state and the seams
    it runs: Turn, RunContext, Control, the tool registry) imports nothing above it; the workspace's files
    (`fs`) and its index sit on it; tools on those; controls on tools; the application on everything."""
    graph = import_graph()
    assert layer("harness.core.loop") == 1 and layer("harness.controls.base") == 5 and layer("harness") == 6
    wrong = sorted(
        f"{name} -> {target}"
        for name, targets in graph.items()
        if (here := layer(name)) is not None
        for target in targets
        if (there := layer(target)) is not None and there > here
    )
    assert not wrong, wrong


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

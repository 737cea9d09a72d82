"""manifest_first: a question about the project itself reads the project's manifest right after the listing."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.controls.manifest_first import ManifestFirst, about_project, manifests
from harness.controls.search_first import SearchFirst
from harness.core.loop import run
from harness.core.options import RunOptions
from harness.core.protocols import ModelRequest
from harness.core.state import new_run
from harness.fs.workspace import Workspace
from harness.tools.base import Registry
from harness.tools.files import ListFiles, ReadFile
from harness.tools.search import Search
from tests.harness.controls.support import answering
from tests.harness.helpers import calls

PKG_INFO = "Metadata-Version: 2.3\nName: widgetry\nVersion: 3.1.4\nRequires-Python: >=3.9\nLicense: MIT\n\nLong text.\n"
PYPROJECT = '[project]\nname = "widgetry"\nrequires-python = ">=3.9"\ndynamic = ["version"]\ndependencies = []\n'
READ = {"type": "function", "function": {"name": "read_file"}}


def project(root: Path, *, pkg_info: bool = True, files: int = 30) -> Workspace:
    if pkg_info:
        (root / "PKG-INFO").write_text(PKG_INFO)
    (root / "pyproject.toml").write_text(PYPROJECT)
    for n in range(files):
        (root / f"part{n:03}.py").write_text(f"# widgetry part {n}\n" + "x = 1\n" * 30)
    return Workspace(root)


async def asked(space: Workspace, question: str, narrows: bool = True) -> list[ModelRequest]:
    model, seen = answering(
        calls(("a", "list_files", {})),
        calls(("b", "read_file", {"path": "PKG-INFO"})),
        calls(("c", "read_file", {"path": "part007.py"})),
        "3.1.4",
    )
    tools = Registry([ListFiles(space), ReadFile(space), Search(space)])
    controls = [ManifestFirst(tool_parameters=narrows), SearchFirst(context=1000, tool_parameters=narrows)]
    result = await run(new_run(question), tools, RunOptions(model=model, controls=controls))
    assert result.answer == "3.1.4"
    return seen


@pytest.mark.parametrize(
    "question",
    [
        "What version of widgetry is this?",
        "What is the minimum Python version this project supports?",
        "Under which license is the package released?",
        "Which Python does Widgetry require?",
    ],
)
async def test_a_question_that_asks_the_project_for_what_its_manifest_declares_reads_it_after_the_listing(
    tmp_path: Path, question: str
) -> None:
    seen = await asked(project(tmp_path), question)
    assert seen[1].tool_choice == READ
    path = seen[1].extra["tool_parameters"]["read_file"]["properties"]["path"]  # type: ignore[index]
    assert path == {"enum": ["PKG-INFO"]}  # built metadata first: its version is resolved
    assert seen[2].tool_choice is None  # once; and search_first does not search once a file is read
    assert "read_file" not in seen[2].extra.get("tool_parameters", {})  # type: ignore[operator]


@pytest.mark.parametrize(
    "question",
    [
        "Which file in this project is the largest?",  # names the project, asks nothing a manifest declares
        "Does widgetry mention Kubernetes anywhere?",
        "What version of Python does part007.py need?",  # asks a file, not the project
        "Which file defines the function `version`?",
    ],
)
async def test_a_question_that_does_not_ask_the_project_for_a_declared_fact_is_left_alone(
    tmp_path: Path, question: str
) -> None:
    seen = await asked(project(tmp_path), question)
    assert seen[1].tool_choice != READ


async def test_a_server_that_cannot_narrow_the_path_is_left_to_the_model(tmp_path: Path) -> None:
    seen = await asked(project(tmp_path), "What version of widgetry is this?", narrows=False)
    assert seen[1].tool_choice is None


def test_the_manifests_parse_by_their_ecosystems_rules_and_a_broken_one_is_passed_over(tmp_path: Path) -> None:
    space = project(tmp_path, pkg_info=False, files=0)
    (tmp_path / "package.json").write_text('{"name": "@acme/ui", "version": "2.0.0", "engines": {"node": ">=18"}}')
    (tmp_path / "Cargo.toml").write_text("[package\nname = ")  # not TOML: nothing to read first
    found = manifests(space)
    assert [(m.path, m.name) for m in found] == [("pyproject.toml", "widgetry"), ("package.json", "@acme/ui")]
    assert about_project("Which node engines does @acme/ui need?", found[1])
    assert not about_project("Which node engines does @acme/ui need?", found[0])  # no such key
    assert about_project("What version is widgetry?", found[0])  # a dynamic field is still declared

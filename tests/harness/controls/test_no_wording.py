"""No control reads the question through the words of one natural language: no control module holds a list of
a language's words, and the same question asked in five languages, naming the same things of the folder, is
steered the same way (through the workspace index)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from harness.controls.look_first import LookFirst
from harness.core.loop import run
from harness.core.options import RunOptions
from harness.core.registry import Registry
from harness.core.state import new_run
from harness.fs.workspace import Workspace
from harness.index.index import WorkspaceIndex
from harness.tools.catalogue import reading_tools
from tests.harness.controls.support import answering
from tests.harness.helpers import calls

CONTROLS = Path(__file__).resolve().parents[3] / "harness" / "controls"
# words any question to a file assistant uses, in English: a control that holds several of them reads wording
FUNCTION_WORDS = frozenset(("the", "a", "an", "of", "which", "what", "who", "how", "many", "does", "do", "is", "are",
                            "file", "files", "folder", "project", "this", "that", "with", "where"))  # fmt: skip


def string_collections(tree: ast.AST) -> list[set[str]]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            strings = {e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)}
            if len(strings) >= 2:
                found.append(strings)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and "|" in node.value:
            found.append(set(re.findall(r"[a-z]+", node.value.lower())))  # a pattern's alternatives
    return found


@pytest.mark.parametrize("module", sorted(CONTROLS.glob("*.py")), ids=lambda p: p.name)
def test_no_control_holds_a_list_of_a_languages_words(module: Path) -> None:
    tree = ast.parse(module.read_text())
    for node in ast.walk(tree):  # docstrings are words about the control, not words it matches
        if isinstance(node, ast.FunctionDef | ast.ClassDef | ast.AsyncFunctionDef | ast.Module) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                node.body = node.body[1:] or [ast.Pass()]
    for strings in string_collections(tree):
        held = strings & FUNCTION_WORDS
        assert len(held) < 2, f"{module.name} holds the words {sorted(held)}"


QUESTIONS = (
    "Where is RetryPolicy defined in src/retry.py?",
    "¿Dónde se define RetryPolicy en src/retry.py?",
    "Wo wird RetryPolicy in src/retry.py definiert?",
    "src/retry.py 里的 RetryPolicy 在哪里定义？",
    "Где в src/retry.py определён RetryPolicy?",
)


async def test_a_question_in_any_of_five_languages_is_offered_the_same_real_candidates(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "retry.py").write_text("class RetryPolicy:\n    pass\n")
    (tmp_path / "src" / "client.py").write_text("from src.retry import RetryPolicy\n")
    (tmp_path / "README.md").write_text("Welcome.\n")
    offered = []
    for question in QUESTIONS:
        space = Workspace(tmp_path)
        index = WorkspaceIndex(space)
        model, seen = answering(calls(("a", "list_files", {})), "done")
        options = RunOptions(model, controls=[LookFirst(turns=1, tool_parameters=True)], index=index)
        await run(new_run(question), Registry(reading_tools(space, index=index)), options)
        narrowing = seen[0].extra["tool_parameters"]
        offered.append(
            (
                narrowing["find_symbol"]["properties"]["name"]["enum"],
                narrowing["read_file"]["properties"]["path"]["enum"][0],
            )
        )
    assert offered == [(["RetryPolicy"], "src/retry.py")] * len(QUESTIONS)

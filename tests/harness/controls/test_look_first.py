"""look_first: the first turns must call, and the first call is the model's choice among real candidates the
workspace index holds for the question (in any language), or the bare listing when it holds none."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.controls.look_first import LookFirst
from harness.controls.parallel_calls import ParallelCalls
from harness.core.loop import run
from harness.core.options import RunOptions
from harness.core.protocols import ModelRequest
from harness.core.registry import Registry
from harness.core.state import new_run
from harness.fs.workspace import Workspace
from harness.index.index import WorkspaceIndex, writes
from harness.tools.catalogue import reading_tools
from tests.harness.controls.support import QUESTION, answering, reads
from tests.harness.helpers import Recorder, calls


async def test_the_first_turns_must_call_and_the_first_call_is_the_bare_tool() -> None:
    bare = Recorder(name="look", parameters={"type": "object", "properties": {}})
    needs_x = Recorder(parameters={"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]})
    model, seen = answering(calls(("a", "look", {})), reads(1), "It is 7.")
    options = RunOptions(model=model, controls=[LookFirst(turns=2), ParallelCalls()])
    result = await run(new_run(QUESTION), Registry([bare, needs_x]), options)
    assert result.answer == "It is 7."
    assert seen[0].tool_choice == {"type": "function", "function": {"name": "look"}}
    assert (seen[1].tool_choice, seen[2].tool_choice) == ("required", None)
    assert all(request.parallel_tool_calls for request in seen)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    files = {
        "src/retry.py": "class RetryPolicy:\n    def backoff(self, attempt):\n        return 2 ** attempt\n",
        "src/client.py": "from src.retry import RetryPolicy\npolicy = RetryPolicy()\n",
        "docs/notes.md": "Rotate the logs weekly so they do not fill the disk.\n",
        "config/app.ini": "[server]\nport = 8080\n",
        "pyproject.toml": '[project]\nname = "demo"\nversion = "1.4.0"\n',
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return tmp_path


async def first_request(folder: Path, question: str) -> ModelRequest:
    space = Workspace(folder)
    index = WorkspaceIndex(space)
    model, seen = answering(calls(("a", "list_files", {})), "done")
    controls = [LookFirst(turns=1, tool_parameters=True)]
    await run(new_run(question), Registry(reading_tools(space, index=index)), RunOptions(model, controls=controls,
                                                                                        index=index))  # fmt: skip
    return seen[0]


def allowed(request: ModelRequest) -> dict[str, dict[str, list[str]]]:
    narrowing = request.extra["tool_parameters"]
    return {tool: {k: v["enum"] for k, v in schema["properties"].items()} for tool, schema in narrowing.items()}


async def test_the_first_call_chooses_among_the_indexs_candidates_for_the_question(project: Path) -> None:
    request = await first_request(project, "Where is `RetryPolicy` defined, and who uses it?")
    assert request.tool_choice == "required"
    offered = allowed(request)
    assert offered["find_symbol"] == {"name": ["RetryPolicy"]}
    assert offered["search"]["pattern"][0] == "RetryPolicy"
    assert set(offered["read_file"]["path"]) >= {"src/retry.py", "src/client.py"}
    assert offered["list_files"] == {} and offered["project_info"] == {} and offered["repo_map"] == {}
    assert "count_lines" not in offered  # nothing real to fill its arguments from


async def test_a_question_in_another_language_meets_the_folder_through_its_names(project: Path) -> None:
    offered = allowed(await first_request(project, "Какой файл определяет RetryPolicy?"))
    assert offered["find_symbol"] == {"name": ["RetryPolicy"]}
    offered = allowed(await first_request(project, "config/app.ini 里 port 被设置成了多少？"))
    assert offered["read_file"]["path"][0] == "config/app.ini"  # the file the question names first


async def test_a_question_whose_words_the_folder_never_uses_lists_the_folder_first(project: Path) -> None:
    request = await first_request(project, "Есть ли файл про утечку памяти?")
    assert request.tool_choice == {"type": "function", "function": {"name": "list_files"}}
    assert request.extra["tool_parameters"]["list_files"]["properties"] == {}


def test_a_path_is_named_only_whole() -> None:
    assert writes("What does config/app.ini say?", "config/app.ini")
    assert writes("config/app.ini 里", "config/app.ini")
    assert not writes("What does config/app.ini.bak say?", "config/app.ini")
    assert not writes("See old/config/app.ini", "config/app.ini")

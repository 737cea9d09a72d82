"""look_first: the first turns must call, the first call the bare listing."""

from __future__ import annotations

from pathlib import Path

from harness.controls.look_first import LookFirst, first_look
from harness.controls.parallel_calls import ParallelCalls
from harness.core.loop import run
from harness.core.options import RunOptions
from harness.core.state import new_run
from harness.fs.workspace import Workspace
from harness.tools.base import Registry
from harness.tools.files import ListFiles, ReadFile
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


async def test_the_first_forced_listing_is_decoded_with_no_arguments_where_the_server_narrows_calls(
    workspace: Path,
) -> None:
    """A small model fills a listing's optional folder with a file's path it saw elsewhere; told
    `tool_parameters`, look_first asks the server for a call with no arguments at all."""
    space = Workspace(workspace)
    model, seen = answering(calls(("a", "list_files", {})), "done")
    controls = [LookFirst(turns=1, tool_parameters=True)]
    await run(new_run(QUESTION), Registry([ListFiles(space), ReadFile(space)]), RunOptions(model, controls=controls))
    assert seen[0].tool_choice == {"type": "function", "function": {"name": "list_files"}}
    assert seen[0].extra["tool_parameters"] == {"list_files": {"type": "object", "properties": {},
                                                               "additionalProperties": False}}  # fmt: skip
    assert "tool_parameters" not in seen[1].extra


def test_the_first_listing_is_of_the_one_folder_or_kind_of_file_the_question_names(tmp_path: Path) -> None:
    """A small model answers a question about one folder from the first count and names it sees: the
    listing it is shown first is of that folder (or of that kind of file), when the question names exactly
    one and no file."""
    for path in ("tests/test_a.py", "tests/test_b.py", "src/pkg/core.py", "src/pkg/core.pyi", "docs/guide.md"):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text("x\n")
    listing = ListFiles(Workspace(tmp_path))

    def enums(question: str) -> dict[str, list[str]]:
        schema = first_look(listing, question)
        assert schema.get("required", []) == list(schema["properties"])
        return {key: value["enum"] for key, value in schema["properties"].items()}

    assert enums("How many files does the tests folder hold?") == {"path": ["tests"]}
    assert enums("How many modules are there in src/pkg?") == {"path": ["src/pkg"]}
    assert enums("How many .py files are in `src`?") == {"path": ["src"], "glob": ["*.py"]}
    assert enums("Which .md files mention the cache?") == {"glob": ["*.md"]}
    assert enums("How many files named test_*.py does the tests folder hold?") == {
        "path": ["tests"], "glob": ["test_*.py"]}  # fmt: skip
    # a language named before a word for files: its extension
    assert enums("How many Python modules are there in src/pkg?") == {"path": ["src/pkg"], "glob": ["*.py"]}
    assert enums("List the markdown documents.") == {"glob": ["*.md"]}
    # a choice of the listing's the question names as a word, its default too (the listing then names the file
    # that leads it: "the largest is ...")
    assert enums("Which file is the smallest?") == {"sort": ["smallest"]}
    assert enums("Name the largest file in the folder.") == {"sort": ["largest"]}
    assert enums("What is the newest file in tests/?") == {"path": ["tests"], "sort": ["newest"]}
    # none: a file named (it is read), two folders, a plain word, an extension no file has, a longer path
    unnarrowed = (
        "What does src/pkg/core.py do?",
        "Compare the tests folder with src/pkg.",
        "Where do the tests stop?",
        "How many .rs files are there?",
        "How many *_test.py files are there?",  # a pattern no file matches
        "Is src/pkg/extra empty?",
        "Is the newest file also the largest or the smallest?",
        "Which Python version does the project need?",  # the language, not a kind of file
    )
    for question in unnarrowed:
        assert enums(question) == {}, question

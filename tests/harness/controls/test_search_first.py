"""search_first: in a folder too large to read whole, the look after the listing is a search."""

from __future__ import annotations

from pathlib import Path

from harness.controls.look_first import LookFirst
from harness.controls.search_first import SearchFirst, given, names, plain, terms
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

SEARCH = {"type": "function", "function": {"name": "search"}}


def folder(root: Path, files: int, size: int) -> Workspace:
    for n in range(files):
        (root / f"part{n:03}.txt").write_text(f"part {n}\n" + "x" * size)
    return Workspace(root)


async def asked(space: Workspace, question: str, narrows: bool = True) -> list[ModelRequest]:
    model, seen = answering(
        calls(("a", "list_files", {})),
        calls(("b", "search", {"pattern": "part 7"})),
        calls(("c", "read_file", {"path": "part007.txt"})),
        "part007.txt.",
    )
    tools = Registry([ListFiles(space), ReadFile(space), Search(space)])
    controls = [SearchFirst(context=1000, tool_parameters=narrows), LookFirst(turns=1)]
    result = await run(new_run(question), tools, RunOptions(model=model, controls=controls))
    assert result.answer == "part007.txt."
    return seen


async def test_a_folder_larger_than_twice_the_window_is_searched_right_after_the_listing(tmp_path: Path) -> None:
    seen = await asked(folder(tmp_path, 30, 100), "Which file says `part 7`?")  # 3 KB, a window of 1,000 tokens
    assert seen[0].tool_choice == {"type": "function", "function": {"name": "list_files"}}
    assert seen[1].tool_choice == SEARCH
    pattern = seen[1].extra["tool_parameters"]["search"]["properties"]["pattern"]  # type: ignore[index]
    assert pattern == {"enum": ["part 7"]}  # what the question quotes
    assert seen[2].tool_choice is None and seen[3].tool_choice is None  # once: then the model chooses
    assert "search" not in seen[2].extra.get("tool_parameters", {})  # type: ignore[operator]


async def test_a_server_that_cannot_narrow_the_pattern_is_left_to_the_model(tmp_path: Path) -> None:
    """Left to write a pattern right after a long listing, a small model copies a piece of the listing."""
    seen = await asked(folder(tmp_path, 30, 100), "Which file says `part 7`?", narrows=False)
    assert seen[1].tool_choice is None


async def test_a_folder_that_can_be_read_whole_is_left_to_the_model(tmp_path: Path) -> None:
    seen = await asked(folder(tmp_path, 30, 10), "Which file says `part 7`?")  # under 2,000 characters
    assert seen[1].tool_choice is None


async def test_a_question_that_names_a_file_of_the_folder_is_read_not_searched(tmp_path: Path) -> None:
    seen = await asked(folder(tmp_path, 30, 100), "What does part007.txt say about `part 7`?")
    assert seen[1].tool_choice is None


async def test_a_run_that_searched_on_its_own_is_not_made_to_search_again(tmp_path: Path) -> None:
    space = folder(tmp_path, 30, 100)
    model, seen = answering(
        calls(("a", "search", {"pattern": "part 7"})), calls(("b", "list_files", {})), "part007.txt."
    )
    tools = Registry([ListFiles(space), ReadFile(space), Search(space)])
    controls = [SearchFirst(context=1000, tool_parameters=True)]
    await run(new_run("Which file says part 7?"), tools, RunOptions(model=model, controls=controls))
    assert [request.tool_choice for request in seen] == [None, None, None]


def test_the_terms_are_the_code_the_question_names_as_written_and_never_its_plain_words() -> None:
    assert terms("Where is the class `UserClient` declared?") == ["UserClient"]
    assert terms("Which files mention db-96.internal or send_batch?") == ["db-96.internal", "send_batch"]
    assert terms('Does any file say "retry limit" about the Parser?') == ["retry limit"]
    assert terms("Which file says 'retry limit'?") == ["retry limit"]
    assert terms("What's in the user's config?") == []  # apostrophes are not quotes
    assert terms("Which file defines the function parse?") == []  # a plain word: the model's own search
    assert terms("Which file is the largest?") == []


async def test_a_question_that_names_no_code_is_left_to_the_model(tmp_path: Path) -> None:
    seen = await asked(folder(tmp_path, 30, 100), "Which file says part 7?")
    assert seen[1].tool_choice is None


async def test_with_plain_words_a_question_that_names_no_code_is_searched_for_its_longest_words(
    tmp_path: Path,
) -> None:
    space = folder(tmp_path, 30, 100)
    model, seen = answering(
        calls(("a", "list_files", {})), calls(("b", "search", {"pattern": "serialisation"})), "part007.txt."
    )
    tools = Registry([ListFiles(space), ReadFile(space), Search(space)])
    controls = [SearchFirst(context=1000, tool_parameters=True, plain_words=True), LookFirst(turns=1)]
    question = "Which document explains the serialisation of instances?"
    await run(new_run(question), tools, RunOptions(model=model, controls=controls))
    assert seen[1].tool_choice == SEARCH
    pattern = seen[1].extra["tool_parameters"]["search"]["properties"]["pattern"]  # type: ignore[index]
    assert pattern == {"enum": ["serialisation", "instances"]}


async def test_plain_words_are_not_searched_after_a_listing_of_the_folder_or_kind_of_file_asked_about(
    tmp_path: Path,
) -> None:
    """The listing of the files the question names is what it asks about; a search of the whole folder would
    give counts of lines, which a small model takes for a count of files."""
    space = folder(tmp_path, 30, 100)
    model, seen = answering(calls(("a", "list_files", {"glob": "part00*.txt"})), "9 files.")
    tools = Registry([ListFiles(space), ReadFile(space), Search(space)])
    controls = [SearchFirst(context=1000, tool_parameters=True, plain_words=True)]
    question = "How many parts (files named part00*.txt) are there?"
    await run(new_run(question), tools, RunOptions(model, controls=controls))
    assert seen[1].tool_choice is None
    model, seen = answering(calls(("a", "list_files", {"path": ""})), "part007.txt.")  # a listing of everything
    await run(new_run(question), tools, RunOptions(model, controls=controls))
    assert seen[1].tool_choice == SEARCH


def test_a_listing_is_narrowed_only_by_arguments_that_give_a_value() -> None:
    assert given('{"path": "src"}') and given('{"glob": "*.py", "path": ""}')
    deep = "[" * 100_000 + "]" * 100_000  # a model's arguments nested too deeply to decode: not a narrowing
    assert not any(given(a) for a in ("", "{}", "{ }", '{"path": ""}', '{"glob": null}', "not json", deep))


async def test_a_name_the_question_writes_with_a_capital_is_the_one_word_searched(tmp_path: Path) -> None:
    """Offered the name beside the question's plain words, a small model searches a common word (`class`)."""
    space = folder(tmp_path, 30, 100)
    model, seen = answering(calls(("a", "list_files", {})), "part007.txt.")
    tools = Registry([ListFiles(space), ReadFile(space), Search(space)])
    controls = [SearchFirst(context=1000, tool_parameters=True, plain_words=True)]
    await run(new_run("Which file defines the class Specifier?"), tools, RunOptions(model, controls=controls))
    pattern = seen[1].extra["tool_parameters"]["search"]["properties"]["pattern"]  # type: ignore[index]
    assert pattern == {"enum": ["specifier"]}


def test_a_name_is_a_word_with_a_capital_where_no_sentence_starts() -> None:
    assert names("Which file defines the class Specifier?") == ["specifier"]
    assert names("Does any file here mention Kubernetes or Docker?") == ["kubernetes", "docker"]
    assert names("Docker: which notes say how the containers start? Where is it?") == []
    assert names("Which file mentions `Specifier` and The File?") == []  # quoted: a term; `file`: every question's


def test_the_plain_words_leave_out_function_words_and_the_words_every_question_about_files_uses() -> None:
    assert plain("Which document explains serialisation of instances?") == ["serialisation", "instances"]
    assert plain("How many lines of the log report a refused connection?") == ["connection", "refused", "report"]
    assert plain("Which file mentions `send_batch` and the timeout?") == ["timeout"]  # the quoted part is a term
    assert plain("Is it in the file?") == []
    assert plain("Is log rotation mentioned anywhere? Name the file.") == ["rotation"]  # `mention`, as written
    assert plain("Which files are listed as describing the releases?") == ["releases"]

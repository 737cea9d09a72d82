"""unread_paths: reads narrowed to the files not read yet, and calls required while any is unread."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest

from harness.controls.digest import DigestAnswers
from harness.controls.repeat_guard import RepeatGuard
from harness.controls.unread_paths import UnreadPaths
from harness.core.loop import run
from harness.core.options import RunOptions
from harness.core.protocols import ModelRequest
from harness.core.registry import Registry
from harness.core.state import new_run
from harness.core.turn import RunContext, Turn
from harness.fs.workspace import Workspace
from harness.tools.files import ListFiles, ReadFile
from harness.tools.writes import WriteFile
from tests.harness.controls.support import QUESTION, answering
from tests.harness.helpers import calls
from wire.digest import read
from wire.types import NamedToolChoice


def read_enum(request: ModelRequest) -> list[str]:
    tool = next(t for t in request.tools if t["function"]["name"] == "read_file")
    return list(tool["function"]["parameters"]["properties"]["path"]["enum"])


def narrowed_to(request: ModelRequest) -> list[str]:
    return list(request.extra["tool_parameters"]["read_file"]["properties"]["path"]["enum"])


@pytest.mark.parametrize("by_field", [False, True], ids=["in the tools", "by tool_parameters"])
async def test_read_paths_are_narrowed_to_the_files_not_read_yet(workspace: Path, by_field: bool) -> None:
    """A read tool's path is an enum of the existing, unread files; calls are required while a file is
    unread; once every file is read the read tool is set aside. A server that takes `tool_parameters` gets
    the narrowing there, and the tools it is sent list every file at every turn."""
    space = Workspace(workspace)
    tools = Registry([ListFiles(space), ReadFile(space)])
    model, seen = answering(
        calls(("a", "read_file", {"path": "notes.txt"})),
        calls(("b", "read_file", {"path": "errors.log"}), ("c", "read_file", {"path": "access.log"})),
        "Read them all.",
    )
    control = UnreadPaths(look_while_unread=2, tool_parameters=by_field)
    result = await run(new_run(QUESTION), tools, RunOptions(model, controls=[control]))
    assert result.answer == "Read them all."
    every, unread = ["access.log", "errors.log", "notes.txt"], ["access.log", "errors.log"]
    if by_field:
        assert [read_enum(r) for r in seen] == [every] * 3
        assert [narrowed_to(r) for r in seen[:2]] == [every, unread]
        assert "read_file" not in seen[2].extra.get("tool_parameters", {})
    else:
        assert [read_enum(r) for r in seen] == [every, unread, every] and seen[2].extra == {}
    assert [r.tool_choice for r in seen] == ["required", "required", None]  # nothing unread: free to answer


async def test_a_question_that_names_a_file_is_free_to_answer_once_that_file_is_read(workspace: Path) -> None:
    (workspace / "sub").mkdir()
    (workspace / "sub" / "notes.txt").write_text("another note\n")
    space = Workspace(workspace)
    tools = Registry([ListFiles(space), ReadFile(space)])
    model, seen = answering(
        calls(("a", "read_file", {"path": "sub/notes.txt"})),
        calls(("b", "read_file", {"path": "notes.txt"})),
        "It says: Remember to rotate your logs.",
    )
    question = "What does notes.txt say?"  # names notes.txt, not sub/notes.txt
    await run(new_run(question), tools, RunOptions(model, controls=[UnreadPaths(look_while_unread=5)]))
    reading = {"type": "function", "function": {"name": "read_file"}}
    assert [r.tool_choice for r in seen] == [reading, reading, None]


async def test_a_file_the_question_names_is_read_before_the_model_may_look_elsewhere(workspace: Path) -> None:
    """A small model asked about a named file searches for the question's words and answers from the search:
    while the reading tool has not been asked for a file the question names by its path, the turn calls it
    (a window of a long file counts as asked); a choice another control made stays, and so does a free
    turn once the named file was asked for."""
    (workspace / "long.log").write_text("".join(f"line {n}\n" for n in range(5000)))
    space = Workspace(workspace)
    tools = Registry([ListFiles(space), ReadFile(space, 2000)])
    model, seen = answering(
        calls(("l", "list_files", {})), calls(("a", "read_file", {"path": "long.log"})), "It counts lines."
    )
    control = UnreadPaths(look_while_unread=5, context=8192)
    await run(new_run("What does long.log count?"), tools, RunOptions(model, controls=[control]))
    reading = {"type": "function", "function": {"name": "read_file"}}
    assert [r.tool_choice for r in seen] == [reading, reading, None]  # long.log is too big to force reads
    listing: NamedToolChoice = {"type": "function", "function": {"name": "list_files"}}
    state = new_run("What does notes.txt say?")
    turn = Turn(ModelRequest(state.messages, tools.definitions(), tool_choice=listing))
    control.before_request(RunContext(state, tools, lambda m: 0), turn)
    assert turn.request.tool_choice == listing
    model, seen = answering("Nothing names a file.")
    await run(new_run("Which log is longest?"), tools, RunOptions(model, controls=[control]))
    assert seen[0].tool_choice is None  # no file named; the folder too large to read whole
    model, seen = answering("Not a file the question names.")
    await run(new_run("What does long.log.bak say?"), tools, RunOptions(model, controls=[control]))
    assert seen[0].tool_choice is None  # long.log.bak is not long.log
    writing = Registry([*tools, WriteFile(space, needs_approval=False)])
    model, seen = answering("Deleted.")
    await run(new_run("Replace long.log with a summary."), writing, RunOptions(model, controls=[control]))
    assert seen[0].tool_choice is None  # the change asked for may need no read first


async def test_a_model_that_repeats_its_calls_is_no_longer_made_to_call(workspace: Path) -> None:
    """Forced to call while files are unread, a model that has what it needs asks again for what it has:
    once its last calls all repeat earlier ones, the turn is free again (and repeat_guard may end it)."""
    for n in range(4):
        (workspace / f"more{n}.txt").write_text(f"more {n}\n")
    space = Workspace(workspace)
    tools = Registry([ListFiles(space), ReadFile(space)])
    model, seen = answering(
        calls(("a", "read_file", {"path": "notes.txt"})),
        calls(("b", "read_file", {"path": "notes.txt"})),
        "It says: Remember to rotate your logs.",
    )
    controls = [UnreadPaths(look_while_unread=5), RepeatGuard()]
    result = await run(new_run(QUESTION), tools, RunOptions(model, controls=controls))
    assert [r.tool_choice for r in seen] == ["required", "required", None]
    assert result.answer == "It says: Remember to rotate your logs."


async def test_the_files_a_question_names_are_the_only_reads_offered_until_they_are_read(workspace: Path) -> None:
    """A question that names a file (or a folder of it by a path of two names) is about that file: a small
    model that reads another first answers from the wrong one, so the read is kept to the named files
    while any is unread, then opens to the other unread files. A one-word folder (`sub`) names nothing."""
    (workspace / "sub" / "deep").mkdir(parents=True)
    (workspace / "sub" / "deep" / "a.txt").write_text("a\n")
    (workspace / "sub" / "deep" / "b.txt").write_text("b\n")
    space = Workspace(workspace)
    tools = Registry([ListFiles(space), ReadFile(space)])
    model, seen = answering(
        calls(("a", "read_file", {"path": "errors.log"})), calls(("b", "read_file", {"path": "notes.txt"})), "Done."
    )
    await run(new_run("What port does errors.log give?"), tools, RunOptions(model, controls=[UnreadPaths()]))
    assert read_enum(seen[0]) == ["errors.log"]
    assert "errors.log" not in read_enum(seen[1]) and len(read_enum(seen[1])) > 3
    model, seen = answering("Done.")
    await run(new_run("What is in sub/deep?"), tools, RunOptions(model, controls=[UnreadPaths()]))
    assert sorted(read_enum(seen[0])) == ["sub/deep/a.txt", "sub/deep/b.txt"]
    model, seen = answering("Done.")
    await run(new_run("What is in the sub folder?"), tools, RunOptions(model, controls=[UnreadPaths()]))
    assert len(read_enum(seen[0])) > 2


async def test_a_write_makes_every_file_unread_again_and_the_paths_follow_the_folder(workspace: Path) -> None:
    space = Workspace(workspace)
    tools = Registry([ReadFile(space), WriteFile(space, needs_approval=False)])
    every = [("r0", "read_file", {"path": "access.log"}), ("r1", "read_file", {"path": "errors.log"})]
    model, seen = answering(
        calls(*every, ("r2", "read_file", {"path": "notes.txt"})),
        calls(("w", "write_file", {"path": "new.txt", "content": "new"})),
        "Done.",
    )
    await run(new_run(QUESTION), tools, RunOptions(model, controls=[UnreadPaths(look_while_unread=5)]))
    assert [r.tool_choice for r in seen] == ["required", None, "required"]
    assert "new.txt" not in read_enum(seen[1]) and "new.txt" in read_enum(seen[2])


def test_a_folder_larger_than_the_bound_is_left_open(workspace: Path) -> None:
    state = new_run(QUESTION)
    tools = Registry([ReadFile(Workspace(workspace))])
    turn = Turn(ModelRequest(state.messages, tools.definitions()))
    UnreadPaths(most=2).before_request(RunContext(state, tools, lambda m: 0), turn)
    assert "enum" not in turn.request.tools[0]["function"]["parameters"]["properties"]["path"]


async def test_with_every_file_read_and_listed_the_next_turn_asks_for_the_answer(workspace: Path) -> None:
    """Nothing is left to call: the turn is an answer turn (here a digest), not a request with no tools."""
    space = Workspace(workspace)
    model, seen = answering(
        calls(("a", "list_files", {})),
        calls(*((f"r{i}", "read_file", {"path": p}) for i, p in enumerate(["access.log", "errors.log", "notes.txt"]))),
        "errors.log mentions it.",
    )
    controls = [RepeatGuard(), UnreadPaths(), DigestAnswers()]
    result = await run(
        new_run(QUESTION), Registry([ListFiles(space), ReadFile(space)]), RunOptions(model, controls=controls)
    )
    assert result.answer == "errors.log mentions it." and seen[2].tools == []
    assert read(str(seen[2].messages[-1]["content"])) is not None


@pytest.mark.parametrize(("size", "forced"), [(100, True), (40_000, False)])
async def test_calls_are_required_while_unread_files_could_be_read_whole(
    workspace: Path, size: int, forced: bool
) -> None:
    """Under an 8,192-token window a folder of a few hundred bytes is read whole; one holding a 40 KB log is
    left to the model and its search."""
    (workspace / "big.log").write_text("x" * size)
    space = Workspace(workspace)
    model, seen = answering(calls(("a", "read_file", {"path": "notes.txt"})), "done", "done")
    control = UnreadPaths(look_while_unread=3, context=8192)
    await run(new_run(QUESTION), Registry([ListFiles(space), ReadFile(space)]), RunOptions(model, controls=[control]))
    assert (seen[1].tool_choice == "required") is forced


async def test_a_window_of_a_long_file_leaves_it_unread(workspace: Path) -> None:
    (workspace / "long.log").write_text("".join(f"line {n}\n" for n in range(5000)))
    space = Workspace(workspace)
    model, seen = answering(calls(("a", "read_file", {"path": "long.log"})), "done")
    control = UnreadPaths(tool_parameters=False)
    await run(new_run(QUESTION), Registry([ReadFile(space, 2000)]), RunOptions(model, controls=[control]))
    assert "long.log" in read_enum(seen[1])  # the rest may be read on


async def test_a_listing_cut_for_the_window_leaves_the_folders_to_list(workspace: Path) -> None:
    """A listing that showed every file is set aside once made; one cut to fit the model's window says to
    list a folder, and the listing tool stays offered for that."""
    (workspace / "logs").mkdir()
    for i in range(30):
        (workspace / "logs" / f"service-{i:02}-with-a-long-name.log").write_text("x")
    space = Workspace(workspace)
    for chars, aside in ((20_000, {"list_files"}), (600, set())):
        model, _ = answering(calls(("a", "list_files", {})), "done")
        watch = Watch()
        tools = Registry([ListFiles(space, output_chars=chars), ReadFile(space)])
        await run(new_run(QUESTION), tools, RunOptions(model, controls=[watch]))
        assert "list_files" not in watch.seen[0] and (watch.seen[1] & {"list_files"}) == aside


@dataclass(frozen=True)
class Watch(UnreadPaths):
    """unread_paths, noting the tools set aside at each turn."""

    seen: list[set[str]] = field(default_factory=list)

    def before_request(self, run: RunContext, turn: Turn) -> None:
        super().before_request(run, turn)
        self.seen.append(set(turn.aside))

"""read_first: a file that exists is replaced or edited only after the run has read it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.controls.read_first import ReadFirst
from harness.core.loop import run
from harness.core.options import RunOptions
from harness.core.protocols import Tool
from harness.core.registry import Registry
from harness.core.results import ToolResult
from harness.core.state import new_run
from harness.core.turn import RunContext
from harness.fs.workspace import Workspace
from harness.prompts import read_first
from harness.tools.files import DeleteFile, ReadFile
from harness.tools.writes import AppendFile, EditFile, WriteFile
from tests.harness.controls.support import answering
from tests.harness.helpers import calls
from wire.types import Message, ToolCall


def tools(workspace: Path) -> Registry:
    space = Workspace(workspace)
    return Registry(
        [
            ReadFile(space),
            WriteFile(space, needs_approval=False),
            EditFile(space, needs_approval=False),
            AppendFile(space, needs_approval=False),
            DeleteFile(space, needs_approval=False),
        ]
    )


def results(messages: list[Message]) -> list[str]:
    return [str(m["content"]) for m in messages if m["role"] == "tool"]


async def test_a_change_to_a_file_not_read_is_not_run_and_shows_the_file_so_the_next_call_runs(
    workspace: Path,
) -> None:
    (workspace / "todo.md").write_text("- [x] a\n")
    (workspace / "settings.ini").write_text("[server]\nport = 1\n")
    model, _ = answering(
        calls(("w", "write_file", {"path": "todo.md", "content": "- [ ] b"})),
        calls(("e", "edit_file", {"path": "./settings.ini", "old_text": "port = 1", "new_text": "port = 2"})),
        calls(("w2", "write_file", {"path": "todo.md", "content": "- [x] a\n- [ ] b\n"})),
        calls(("e2", "edit_file", {"path": "settings.ini", "old_text": "port = 1", "new_text": "port = 2"})),
        "Done.",
    )
    result = await run(new_run("Add - [ ] b to todo.md."), tools(workspace), RunOptions(model, controls=[ReadFirst()]))
    out = results(result.messages)
    assert out[0] == (
        "Not run: todo.md exists and you had not read it, so write_file would have changed it unseen. It holds:\n"
        "- [x] a\n"
        "To add lines at its end, call append_file; to replace it, call write_file again with the whole new content."
    )
    assert out[1] == read_first(
        "./settings.ini", "edit_file", "[server]\nport = 1", EditFile(Workspace(workspace)).unread_advice([])
    )
    assert out[2].startswith("Wrote") and out[3].startswith("Edited settings.ini")  # shown, so known
    assert (workspace / "todo.md").read_text() == "- [x] a\n- [ ] b\n"
    assert (workspace / "settings.ini").read_text() == "[server]\nport = 2\n"


async def test_a_long_file_is_shown_in_part_and_a_binary_one_described(workspace: Path) -> None:
    (workspace / "big.md").write_text("".join(f"line {n} of a long file\n" for n in range(1, 1001)))
    (workspace / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(100))
    model, _ = answering(
        calls(
            ("w", "write_file", {"path": "big.md", "content": "x"}),
            ("p", "write_file", {"path": "logo.png", "content": "x"}),
        ),
        "Done.",
    )
    result = await run(new_run("Empty them."), tools(workspace), RunOptions(model, controls=[ReadFirst()]))
    big, logo = results(result.messages)
    assert "\n1: line 1 of a long file\n2: line 2" in big and "more lines; read_file shows them]" in big
    assert len(big) < 5_000 and "logo.png" in logo and "It holds:\nlogo.png" in logo


async def test_a_new_file_an_append_and_a_delete_need_no_reading(workspace: Path) -> None:
    (workspace / "todo.md").write_text("- [x] a\n")
    (workspace / "old.bak").write_text("x")
    model, _ = answering(
        calls(
            ("n", "write_file", {"path": "new.md", "content": "first"}),
            ("a", "append_file", {"path": "todo.md", "content": "- [ ] b"}),
            ("d", "delete_file", {"path": "old.bak"}),
        ),
        calls(("w", "write_file", {"path": "new.md", "content": "second"})),  # written by this run: known
        "Done.",
    )
    result = await run(new_run("Tidy up."), tools(workspace), RunOptions(model, controls=[ReadFirst()]))
    assert not any(r.startswith("Not run") for r in results(result.messages))
    assert (workspace / "new.md").read_text() == "second" and not (workspace / "old.bak").exists()
    assert (workspace / "todo.md").read_text() == "- [x] a\n- [ ] b\n"


async def test_a_failed_read_does_not_count_as_reading(workspace: Path) -> None:
    (workspace / "todo.md").write_text("- [x] a\n")
    model, _ = answering(
        calls(("r", "read_file", {"path": "todo.txt"})),
        calls(("w", "write_file", {"path": "todo.md", "content": "- [ ] b"})),
        "Done.",
    )
    result = await run(new_run("Rewrite todo.md."), tools(workspace), RunOptions(model, controls=[ReadFirst()]))
    assert results(result.messages)[1].startswith("Not run: todo.md exists")
    assert (workspace / "todo.md").read_text() == "- [x] a\n"


async def test_a_read_counts_as_reading(workspace: Path) -> None:
    (workspace / "todo.md").write_text("- [x] a\n")
    model, _ = answering(
        calls(("r", "read_file", {"path": "./todo.md"})),
        calls(("w", "write_file", {"path": "todo.md", "content": "- [ ] b"})),
        "Done.",
    )
    await run(new_run("Rewrite todo.md."), tools(workspace), RunOptions(model, controls=[ReadFirst()]))
    assert (workspace / "todo.md").read_text() == "- [ ] b"


async def test_the_refused_call_made_again_unchanged_is_refused_again_with_the_advice(workspace: Path) -> None:
    (workspace / "todo.md").write_text("- [x] a\n")
    line = calls(("w", "write_file", {"path": "todo.md", "content": "- [ ] b"}))
    model, _ = answering(
        line,
        calls(("w2", "write_file", {"path": "todo.md", "content": "- [ ] b"})),
        calls(("w3", "append_file", {"path": "todo.md", "content": "- [ ] b"})),
        "Done.",
    )
    result = await run(new_run("Add - [ ] b to todo.md."), tools(workspace), RunOptions(model, controls=[ReadFirst()]))
    assert results(result.messages)[1] == (
        "Not run: this write_file call is the one not run above, made again; it would change todo.md unseen. "
        + "To add lines at its end, call append_file; to replace it, call write_file again with the whole new content."
    )
    assert (workspace / "todo.md").read_text() == "- [x] a\n- [ ] b\n"


async def test_an_edit_made_again_once_the_file_was_shown_runs_and_the_tool_says_what_is_wrong(
    workspace: Path,
) -> None:
    """An edit changes only the text it quotes: made again after the refusal showed the file, it runs, so a
    right guess lands and a wrong one gets the tool's own words (the line most like it)."""
    (workspace / "settings.ini").write_text("[server]\nport = 1\nhost = x\n")
    guess = {"path": "settings.ini", "old_text": "port = 7", "new_text": "port = 2"}
    right = {"path": "settings.ini", "old_text": "port = 1", "new_text": "port = 2"}
    model, _ = answering(
        calls(("e1", "edit_file", guess)),
        calls(("e2", "edit_file", guess)),
        calls(("e3", "edit_file", right)),
        calls(("e4", "edit_file", right)),
        "Done.",
    )
    result = await run(new_run("Set port to 2."), tools(workspace), RunOptions(model, controls=[ReadFirst()]))
    out = results(result.messages)
    assert out[0].startswith("Not run: settings.ini exists and you had not read it")
    assert out[1].startswith("Error: old_text is not in settings.ini") and 'line 2: "port = 1"' in out[1]
    assert out[2].startswith("Edited settings.ini at line 2") and out[3].startswith("Error: old_text is not in")
    assert (workspace / "settings.ini").read_text() == "[server]\nport = 2\nhost = x\n"


async def test_a_read_in_the_same_reply_as_the_change_was_not_seen_when_the_change_was_written(
    workspace: Path,
) -> None:
    (workspace / "settings.ini").write_text("[server]\nport = 1\nhost = x\n")
    model, _ = answering(
        calls(
            ("r", "read_file", {"path": "settings.ini"}),
            ("w", "write_file", {"path": "settings.ini", "content": "port = 2"}),
            ("a", "append_file", {"path": "settings.ini", "content": "port = 2"}),
        ),
        calls(("e", "edit_file", {"path": "settings.ini", "old_text": "port = 1", "new_text": "port = 2"})),
        "Done.",
    )
    result = await run(new_run("Set port to 2."), tools(workspace), RunOptions(model, controls=[ReadFirst()]))
    out = results(result.messages)
    assert out[1].startswith("Not run: settings.ini exists and you had not read it") and out[2].startswith("Added")
    assert out[3].startswith("Edited settings.ini")  # the read's result was seen before this reply
    assert (workspace / "settings.ini").read_text() == "[server]\nport = 2\nhost = x\nport = 2\n"


async def test_a_file_changed_on_disk_since_it_was_read_is_not_overwritten(workspace: Path) -> None:
    """A person saves the file between the model's read and its write: the write is refused and shows the file as
    it is now; made again, knowing it, it runs."""
    (workspace / "notes.md").write_text("first draft\n")
    model, _ = answering(
        calls(("r", "read_file", {"path": "notes.md"})),
        calls(("w1", "write_file", {"path": "notes.md", "content": "model's text\n"})),
        calls(("w2", "write_file", {"path": "notes.md", "content": "model's text\n"})),
        "Done.",
    )

    class SavesMeanwhile(ReadFirst):
        def after_call(self, run: RunContext, call: ToolCall, tool: Tool, args: dict[str, Any], result: ToolResult,
                       ok: bool) -> None:  # fmt: skip
            super().after_call(run, call, tool, args, result, ok)
            if call["id"] == "r":
                (workspace / "notes.md").write_text("the person's edit\n")

    result = await run(new_run("Rewrite notes.md."), tools(workspace), RunOptions(model, controls=[SavesMeanwhile()]))
    out = results(result.messages)
    assert out[1].startswith("Not run: notes.md changed on disk since you read it") and "the person's edit" in out[1]
    assert out[2].startswith("Wrote") and (workspace / "notes.md").read_text() == "model's text\n"

"""change_alone: a call that changes files runs only as the one call of its reply."""

from __future__ import annotations

from pathlib import Path

from harness.controls.change_alone import ChangeAlone
from harness.core.loop import run
from harness.core.options import RunOptions
from harness.core.registry import Registry
from harness.core.state import new_run
from harness.fs.workspace import Workspace
from harness.prompts import change_alone
from harness.tools.files import ReadFile
from harness.tools.writes import AppendFile, WriteFile
from tests.harness.controls.support import answering
from tests.harness.helpers import calls


async def test_a_change_beside_other_calls_is_not_run_and_alone_it_is(workspace: Path) -> None:
    (workspace / "todo.md").write_text("- [x] a\n")
    space = Workspace(workspace)
    tools = Registry([ReadFile(space), WriteFile(space, needs_approval=False), AppendFile(space, needs_approval=False)])
    model, _ = answering(
        calls(
            ("r", "read_file", {"path": "todo.md"}),
            ("a", "append_file", {"path": "todo.md", "content": "- [ ] b"}),
            ("w", "write_file", {"path": "other.md", "content": "x"}),
        ),
        calls(("a2", "append_file", {"path": "todo.md", "content": "- [ ] b"})),
        "Added it.",
    )
    result = await run(new_run("Add - [ ] b to todo.md."), tools, RunOptions(model, controls=[ChangeAlone()]))
    out = [str(m["content"]) for m in result.messages if m["role"] == "tool"]
    assert out[0] == "- [x] a\n"  # a read beside a change runs
    assert out[1:3] == [change_alone("append_file"), change_alone("write_file")]
    assert out[1] == (
        "Not run: append_file changes files, so it is called alone, in a reply of its own, once you have seen the "
        "results of the calls it depends on. If it is still the change to make, call it again on its own."
    )
    assert out[3].startswith("Added 1 line") and not (workspace / "other.md").exists()
    assert (workspace / "todo.md").read_text() == "- [x] a\n- [ ] b\n"

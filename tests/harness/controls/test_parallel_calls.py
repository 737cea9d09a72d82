"""parallel_calls: a server that can is asked to end a reply at a repeated call."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import httpx

from harness.app.client import OpenAIClient
from harness.controls import SMALL
from harness.controls.last_turn import LastTurn
from harness.controls.parallel_calls import ParallelCalls
from harness.controls.profiles import TINY, build, fitted_profile
from harness.controls.unread_paths import UnreadPaths
from harness.core.limits import Limits
from harness.core.loop import run
from harness.core.options import RunOptions
from harness.core.registry import Registry
from harness.core.state import new_run
from harness.fs.workspace import Workspace
from harness.tools.files import ListFiles, ReadFile
from harness.tools.writes import WriteFile
from serve.scripted.app import create_app
from tests.harness.controls.support import QUESTION, answering, qwen
from tests.harness.helpers import calls


async def test_parallel_calls_asks_a_server_that_can_to_end_a_reply_at_a_repeated_read(workspace: Path) -> None:
    space = Workspace(workspace)
    tools = Registry([ListFiles(space), ReadFile(space), WriteFile(space, needs_approval=False)])
    model, seen = answering(calls(("a", "read_file", {"path": "notes.txt"})), "Done.")
    await run(new_run(QUESTION), tools, RunOptions(model, controls=[ParallelCalls(distinct_calls=True)]))
    assert seen[0].parallel_tool_calls is True
    assert seen[0].extra["distinct_calls"] == ["list_files", "read_file"]  # a write repeated may be meant
    card = qwen(n_params=494_032_768, extensions=["distinct_calls"])
    told = {s.name: s.params for s in fitted_profile(SMALL, "qwen", [card]).controls}
    assert told["parallel_calls"] == {"distinct_calls": True} and "distinct_calls" not in told["unread_paths"]


async def test_the_tiny_profile_asks_for_one_call_per_reply_while_a_tool_that_changes_files_is_offered(
    workspace: Path,
) -> None:
    """A model under a billion parameters asked for parallel calls beside a write calls every tool offered in
    one reply, and change_alone refuses each change among them; asked for one call, it makes its change
    alone. The small profile still asks for parallel calls, and a reply that may only look does too."""
    space = Workspace(workspace)
    writing = Registry([ListFiles(space), ReadFile(space), WriteFile(space, needs_approval=False)])
    [control] = [c for c in build(TINY) if isinstance(c, ParallelCalls)]
    model, seen = answering(calls(("a", "read_file", {"path": "notes.txt"})), "Done.")
    await run(new_run(QUESTION), writing, RunOptions(model, controls=[replace(control, distinct_calls=True)]))
    assert seen[0].parallel_tool_calls is False and "distinct_calls" not in seen[0].extra
    assert seen[1].parallel_tool_calls is False
    model, seen = answering("Done.")
    reading = Registry([ListFiles(space), ReadFile(space)])
    await run(new_run(QUESTION), reading, RunOptions(model, controls=[control]))
    assert seen[0].parallel_tool_calls is True
    assert [c.params for c in SMALL.controls if c.name == "parallel_calls"] == [{}]


async def test_an_answer_turn_sends_no_field_that_names_a_tool(workspace: Path) -> None:
    """The last turn the cap allows offers no tools: a field that narrows or names one would be refused by a
    server that checks it (this project's says which tool is not among the tools)."""
    app = httpx.ASGITransport(app=create_app())
    client = OpenAIClient("http://test/v1", "solve", transport=app)
    space = Workspace(workspace)
    controls = [UnreadPaths(tool_parameters=True), ParallelCalls(distinct_calls=True), LastTurn()]
    state = new_run("Which file mentions a timeout?", limits=Limits(max_turns=2))
    result = await run(state, Registry([ListFiles(space), ReadFile(space)]), RunOptions(client, controls=controls))
    assert result.status == "completed" and result.turns == 2 and not client.refused

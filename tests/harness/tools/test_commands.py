"""run_command: presets only, no shell, the whole process group killed on timeout, Stop and exit."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest

from harness.core.config import CommandPreset
from harness.core.loop import run
from harness.core.options import RunOptions
from harness.core.registry import Registry
from harness.core.state import new_run
from harness.core.stop import StopSignal
from harness.errors import ToolError
from harness.fs.workspace import Workspace
from harness.tools.commands import RunCommand
from tests.harness.helpers import calls, script, tool_context


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return not Path(f"/proc/{pid}/stat").read_text().split(") ")[1].startswith("Z")


def wait_gone(pid: int, within: float = 2.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.01)
    return False


def sh(name: str, script_text: str, **options: object) -> CommandPreset:
    return CommandPreset(name, ("sh", "-c", script_text), **options)  # type: ignore[arg-type]


async def test_a_preset_returns_its_exit_code_and_output(workspace: Path) -> None:
    tool = RunCommand(Workspace(workspace), [sh("check", "ls; echo oops >&2; exit 3")])
    out = await tool.run({"command": "check"}, tool_context())
    assert out.startswith("exit code: 3\n--- stdout ---\n")
    assert "errors.log" in out and "notes.txt" in out and out.endswith("--- stderr ---\noops\n")


async def test_output_over_the_cap_is_truncated_with_a_marker(workspace: Path) -> None:
    tool = RunCommand(
        Workspace(workspace), [sh("loud", "head -c 100000 /dev/zero | tr '\\0' x", max_output_bytes=1000)]
    )
    out = await tool.run({"command": "loud"}, tool_context())
    assert "x" * 1000 in out and "x" * 1001 not in out and "[... 99,000 more bytes omitted ...]" in out


async def test_a_child_that_outlives_the_leader_is_killed_with_the_group(workspace: Path) -> None:
    pid_file = workspace / "child.pid"
    tool = RunCommand(Workspace(workspace), [sh("spawn", f"sleep 60 & echo $! > {pid_file}; echo started")])
    out = await tool.run({"command": "spawn"}, tool_context())
    assert out.startswith("exit code: 0") and "started" in out
    assert wait_gone(int(pid_file.read_text()))


async def test_a_timeout_kills_the_whole_group(workspace: Path) -> None:
    pid_file = workspace / "child.pid"
    tool = RunCommand(Workspace(workspace), [sh("hang", f"sleep 60 & echo $! > {pid_file}; sleep 60", timeout_s=0.5)])
    began = time.monotonic()
    with pytest.raises(ToolError, match=r"timed out after 0\.5s; its process group was killed"):
        await tool.run({"command": "hang"}, tool_context())
    assert time.monotonic() - began < 3 and wait_gone(int(pid_file.read_text()))


async def test_stop_during_a_command_ends_it_within_100_ms(workspace: Path) -> None:
    pid_file = workspace / "child.pid"
    tools = Registry(
        [
            RunCommand(
                Workspace(workspace), [sh("hang", f"sleep 60 & echo $! > {pid_file}; sleep 60", needs_approval=False)]
            )
        ]
    )
    signal = StopSignal()

    async def press() -> None:
        while not pid_file.exists() or not pid_file.read_text().strip():
            await asyncio.sleep(0.01)
        signal.set("user pressed Stop")

    presser = asyncio.ensure_future(press())
    result = await run(
        new_run("go"),
        tools,
        RunOptions(model=script(calls(("c1", "run_command", {"command": "hang"})), "x"), signal=signal),
    )
    ended = time.monotonic()
    await presser
    assert result.status == "interrupted" and signal.pressed_at is not None
    assert ended - signal.pressed_at < 0.100
    assert wait_gone(int(pid_file.read_text()))


@pytest.mark.parametrize("name", ["test; rm -rf /", "../bin/sh", "sh", "/bin/sh", "test && id", "$(id)", ""])
async def test_an_unknown_or_injected_name_is_refused_without_running_anything(workspace: Path, name: str) -> None:
    canary = workspace / "ran.txt"
    tools = Registry([RunCommand(Workspace(workspace), [sh("test", f"touch {canary}", needs_approval=False)])])
    model = script(calls(("c1", "run_command", {"command": name})), "done")
    result = await run(new_run("go"), tools, RunOptions(model=model))
    slot = next(m["content"] for m in result.messages if m["role"] == "tool")
    assert slot.startswith("Error: invalid arguments for run_command") and "['test']" in slot
    assert not canary.exists() and result.tool_runs == []


async def test_approval_is_per_preset(workspace: Path) -> None:
    tool = RunCommand(Workspace(workspace), [sh("safe", "true", needs_approval=False), sh("deploy", "true")])
    model = script(
        calls(("c1", "run_command", {"command": "safe"})), calls(("c2", "run_command", {"command": "deploy"})), "ok"
    )
    result = await run(new_run("go"), Registry([tool]), RunOptions(model=model))
    assert result.tool_runs == ["run_command"] and result.interruption is not None
    assert (result.interruption.call_id, result.interruption.args) == ("c2", {"command": "deploy"})


async def test_the_working_folder_stays_inside_the_workspace(workspace: Path) -> None:
    (workspace / "sub").mkdir()
    tool = RunCommand(Workspace(workspace), [sh("where", "pwd", cwd="sub"), sh("escape", "pwd", cwd="../")])
    assert (await tool.run({"command": "where"}, tool_context())).split("\n")[2] == str(workspace / "sub")
    with pytest.raises(ToolError, match="would leave the workspace"):
        await tool.run({"command": "escape"}, tool_context())

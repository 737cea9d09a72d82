"""write_file: atomic, confined, idempotent under retry, size-limited."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.core.loop import run
from harness.core.options import RunOptions
from harness.core.protocols import ToolContext
from harness.core.state import new_run
from harness.core.stop import StopSignal
from harness.errors import ToolError
from harness.tools.base import Registry
from harness.tools.workspace import Workspace
from harness.tools.writes import WriteFile
from tests.conftest import ROOT
from tests.harness.helpers import calls, script


def context() -> ToolContext:
    return ToolContext("run-1", "call-1", StopSignal(), lambda label: None, lambda usage: None)


async def test_writes_land_whole_and_replace(workspace: Path) -> None:
    tool = WriteFile(Workspace(workspace))
    assert await tool.run({"path": "notes.txt", "content": "new notes"}, context()) == "Wrote 9 bytes to notes.txt."
    assert (workspace / "notes.txt").read_text() == "new notes"
    assert [p.name for p in workspace.iterdir() if p.name.endswith(".tmp")] == []


async def test_the_folder_must_exist(workspace: Path) -> None:
    with pytest.raises(ToolError, match="no such folder: a"):
        await WriteFile(Workspace(workspace)).run({"path": "a/b.txt", "content": "x"}, context())
    assert not (workspace / "a").exists()


async def test_a_retried_write_with_the_same_key_does_not_write_twice(workspace: Path) -> None:
    tool = WriteFile(Workspace(workspace))
    await tool.run({"path": "out.txt", "content": "hello"}, context())
    before = os.stat(workspace / "out.txt")
    again = await tool.run({"path": "out.txt", "content": "hello"}, context())
    after = os.stat(workspace / "out.txt")
    assert "nothing was written" in again
    assert (before.st_ino, before.st_mtime_ns) == (after.st_ino, after.st_mtime_ns)


async def test_a_write_over_the_limit_is_refused_clearly(workspace: Path) -> None:
    with pytest.raises(ToolError, match="the content is 11 bytes; the limit per write is 10 bytes"):
        await WriteFile(Workspace(workspace), max_bytes=10).run({"path": "x.txt", "content": "x" * 11}, context())
    assert not (workspace / "x.txt").exists()


async def test_write_file_needs_approval_by_default_and_runs_once_approved(workspace: Path) -> None:
    from harness.core.approvals import approve

    model = script(calls(("w1", "write_file", {"path": "notes.txt", "content": "approved"})), "done")
    tools = Registry([WriteFile(Workspace(workspace))])
    stopped = await run(new_run("write"), tools, RunOptions(model=model))
    assert stopped.interruption is not None and stopped.interruption.tool == "write_file"
    approve(stopped, "w1")
    done = await run(stopped, tools, RunOptions(model=model))
    assert done.status == "completed" and (workspace / "notes.txt").read_text() == "approved"


WRITER = """
import sys
from harness.tools.workspace import Workspace
ws = Workspace(sys.argv[1])
big = [bytes([65 + i]) * 8_000_000 for i in range(2)]
print("go", flush=True)
i = 0
while True:
    ws.write_atomic("big.bin", big[i % 2])
    i += 1
"""


def test_a_kill_during_a_write_leaves_a_whole_file(workspace: Path) -> None:
    (workspace / "big.bin").write_bytes(b"Z" * 100)
    whole = {b"Z" * 100, b"A" * 8_000_000, b"B" * 8_000_000}
    for delay in (0.05, 0.13, 0.21, 0.34, 0.5):
        writer = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(workspace)], cwd=ROOT, stdout=subprocess.PIPE, text=True
        )
        assert writer.stdout is not None and writer.stdout.readline().strip() == "go"
        time.sleep(delay)
        writer.send_signal(signal.SIGKILL)
        writer.wait()
        assert (workspace / "big.bin").read_bytes() in whole

"""Stop reaches the bottom: the in-flight model request and every running tool end within 50 ms."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from harness.app.client import FunctionModel
from harness.core.config import ALL_TOOLS
from harness.core.loop import run
from harness.core.options import RunOptions
from harness.core.protocols import ModelReply, ModelRequest
from harness.core.registry import Registry
from harness.core.state import new_run
from harness.core.stop import StopSignal
from harness.fs.workspace import Workspace
from harness.tools.catalogue import catalogue
from tests.harness.helpers import calls, script

SLOW = script(calls(("c1", "scan_archive", {})), "The archive scan finished.")


async def test_stop_during_a_scan_ends_the_run_within_50_ms_and_the_scan_goes_no_further(workspace: Path) -> None:
    signal, progress = StopSignal(), []

    def seen(tool: str, label: str) -> None:
        progress.append(label)
        if len(progress) == 2:  # pressed between the scan's second report and its third
            asyncio.get_running_loop().call_soon(signal.set, "user pressed Stop")

    options = RunOptions(model=SLOW, signal=signal, on_progress=seen)
    result = await run(new_run("scan it"), catalogue(Workspace(workspace), names=ALL_TOOLS), options)
    ended = time.monotonic()
    assert result.status == "interrupted" and result.reason == "user pressed Stop"
    assert result.interruption is not None and result.interruption.type == "cancelled"
    assert signal.pressed_at is not None and (ended - signal.pressed_at) < 0.050
    assert progress == ["scanned 200 of 1200 files", "scanned 400 of 1200 files"]
    assert result.tool_runs == []  # the scan never finished, so it left no result


async def test_without_stop_the_scan_completes(workspace: Path) -> None:
    progress: list[str] = []
    options = RunOptions(model=SLOW, on_progress=lambda tool, label: progress.append(label))
    result = await run(new_run("scan it"), catalogue(Workspace(workspace), names=ALL_TOOLS), options)
    assert result.status == "completed" and result.tool_runs == ["scan_archive"]
    assert progress == [f"scanned {n} of 1200 files" for n in range(200, 1200, 200)]


async def test_stop_cancels_the_in_flight_model_request() -> None:
    cancelled = asyncio.Event()

    async def hang(request: ModelRequest) -> ModelReply:
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        raise AssertionError("unreachable")

    signal = StopSignal()
    asyncio.get_running_loop().call_later(0.2, signal.set, "user pressed Stop")
    result = await run(new_run("hi"), Registry(), RunOptions(model=FunctionModel(hang), signal=signal))
    assert result.status == "interrupted" and cancelled.is_set() and result.turns == 0

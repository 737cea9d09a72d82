"""scan_archive, the demonstration tool: it reports its progress as it goes, keeps to its schedule, and ends at
once when Stop is pressed."""

from __future__ import annotations

import asyncio
import time

import pytest

from harness.core.stop import StopSignal
from harness.errors import Stopped
from harness.tools.archive import ScanArchive
from tests.harness.helpers import tool_context


def test_a_scan_reports_progress_and_its_result() -> None:
    progress: list[str] = []
    context = tool_context(progress=progress.append)
    started = time.monotonic()
    result = asyncio.run(ScanArchive(files=100, seconds=0.2, report_every=25).run({}, context))
    assert result == "scanned 100 files; no problems found"
    assert progress == [f"scanned {n} of 100 files" for n in (25, 50, 75)]
    assert time.monotonic() - started >= 0.2


def test_stop_ends_a_scan_within_a_files_time() -> None:
    signal = StopSignal()
    context = tool_context(signal)

    async def scan_then_stop() -> float:
        loop = asyncio.get_running_loop()
        loop.call_later(0.1, signal.set, "user pressed Stop")
        with pytest.raises(Stopped, match="user pressed Stop"):
            await ScanArchive(files=1000, seconds=10.0).run({}, context)
        assert signal.pressed_at is not None
        return time.monotonic() - signal.pressed_at

    assert asyncio.run(scan_then_stop()) < 0.5  # a file takes 10 ms; the scan would run 10 s

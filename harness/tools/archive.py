"""scan_archive: a deliberately slow tool that reports progress and stops promptly when Stop is pressed."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from harness.core.protocols import ToolContext
from harness.core.registry import NO_ARGUMENTS
from harness.tools.roles import OnlyLooks


@dataclass
class ScanArchive(OnlyLooks):
    """Scans `files` archived files at `seconds` in all; progress every `report_every` files."""

    files: int = 1200
    seconds: float = 3.0
    report_every: int = 200
    name: str = "scan_archive"
    description: str = "Scan the archive for problems. Slow: it takes a few seconds."
    parameters: Mapping[str, Any] = field(default_factory=lambda: NO_ARGUMENTS)

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> str:
        loop = asyncio.get_running_loop()
        started = loop.time()
        per_file = self.seconds / self.files
        for scanned in range(1, self.files + 1):
            ctx.signal.check()
            # sleep to the schedule rather than a fixed step, so timer slack does not add up
            await asyncio.sleep(max(0.0, started + scanned * per_file - loop.time()))
            if scanned % self.report_every == 0 and scanned < self.files:
                ctx.progress(f"scanned {scanned} of {self.files} files")
        return f"scanned {self.files} files; no problems found"

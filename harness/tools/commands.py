"""run_command: the model picks the *name* of a command the operator configured; it never supplies one.

Each preset fixes an executable and its arguments, a folder inside the workspace, a timeout and an output
cap. It runs without a shell, under a small supervisor, in a process group of its own; the timeout, a
Stop, or the leader's exit kill the whole group, and so does the harness dying (even by SIGKILL), so
nothing it started is left behind for a resume to run again beside it.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import sys
from collections.abc import Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.core.config import CommandPreset
from harness.core.protocols import ApprovalRule, ToolContext
from harness.errors import ConfigError, PermanentToolError, ToolError
from harness.fs.workspace import Workspace

READ_CHUNK = 65536
SUPERVISOR = str(Path(__file__).with_name("supervise.py"))
DRAIN_AFTER_EXIT_S = 1.0


@dataclass
class Captured:
    """Up to `cap` bytes of a stream; the rest is counted and dropped so the child never blocks on a full pipe."""

    cap: int
    data: bytearray = field(default_factory=bytearray)
    omitted: int = 0

    async def drain(self, stream: asyncio.StreamReader) -> None:
        while chunk := await stream.read(READ_CHUNK):
            room = self.cap - len(self.data)
            self.data += chunk[:room]
            self.omitted += max(0, len(chunk) - room)

    def text(self) -> str:
        body = self.data.decode("utf-8", errors="replace")
        return body + (f"\n[... {self.omitted:,} more bytes omitted ...]" if self.omitted else "")


async def leader_exited(pid: int, timeout: float) -> bool:
    """Wait for the leader alone to exit (False on timeout).

    `Process.wait()` also waits for the output pipes to close, which a grandchild holding them delays
    for as long as it lives; a pidfd becomes readable when the leader itself exits.
    """
    loop = asyncio.get_running_loop()
    exited = loop.create_future()
    try:
        pidfd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True

    def on_exit() -> None:
        if not exited.done():
            exited.set_result(True)

    loop.add_reader(pidfd, on_exit)
    try:
        await asyncio.wait_for(exited, timeout)
        return True
    except TimeoutError:
        return False
    finally:
        loop.remove_reader(pidfd)
        os.close(pidfd)


def retrieved(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()


def kill_group(pgid: int) -> None:
    with suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


class RunCommand:
    name = "run_command"
    read_only = False
    honours_idempotency_key = False

    def __init__(self, workspace: Workspace, presets: Sequence[CommandPreset]) -> None:
        if not presets:
            raise ConfigError("run_command needs at least one preset")
        self.workspace = workspace
        self.presets = {p.name: p for p in presets}
        if len(self.presets) != len(presets):
            raise ConfigError("two command presets share a name")
        listing = "; ".join(f"{p.name}: {p.description or ' '.join(p.argv)}" for p in presets)
        self.description = f"Run one of the configured commands by name. The commands are: {listing}."
        self.parameters: Mapping[str, Any] = {
            "type": "object",
            "properties": {"command": {"type": "string", "enum": list(self.presets)}},
            "required": ["command"],
            "additionalProperties": False,
        }

    def preset_needs_approval(self, args: Mapping[str, Any]) -> bool:
        preset = self.presets.get(str(args.get("command")))
        return preset is None or preset.needs_approval

    @property
    def needs_approval(self) -> ApprovalRule:
        return self.preset_needs_approval

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> str:
        preset = self.presets.get(args["command"])
        if preset is None:
            raise ToolError(f"unknown command {args['command']!r}; the commands are: {', '.join(self.presets)}")
        cwd = self.workspace.folder(preset.cwd)
        if shutil.which(preset.argv[0]) is None and not Path(cwd, preset.argv[0]).is_file():
            raise PermanentToolError(f"command {preset.name} cannot start: {preset.argv[0]} is not an executable")
        try:
            process = await asyncio.create_subprocess_exec(
                sys.executable,
                SUPERVISOR,
                str(os.getpid()),
                *preset.argv,
                cwd=cwd,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                start_new_session=True,  # its own process group (supervisor and command), killed as a whole
            )
        except OSError as exc:
            raise PermanentToolError(f"command {preset.name} cannot start: {exc}") from exc
        ctx.started_process(process.pid)
        return await self.supervise(preset, process)

    async def supervise(self, preset: CommandPreset, process: asyncio.subprocess.Process) -> str:
        assert process.stdout is not None and process.stderr is not None
        out, err = Captured(preset.max_output_bytes), Captured(preset.max_output_bytes)
        readers = asyncio.gather(out.drain(process.stdout), err.drain(process.stderr))
        try:
            timed_out = not await leader_exited(process.pid, preset.timeout_s)
        except BaseException:  # Stop: the run cancelled us
            kill_group(process.pid)
            readers.cancel()
            readers.add_done_callback(retrieved)  # its cancellation is expected: never "exception not retrieved"
            await self.reap(process)
            raise
        kill_group(process.pid)  # on timeout, and for children that outlived the leader
        code = await process.wait()
        await self.settle(readers)
        report = f"--- stdout ---\n{out.text()}\n--- stderr ---\n{err.text()}"
        if timed_out:
            raise ToolError(
                f"command {preset.name} timed out after {preset.timeout_s:g}s; its process group was killed\n{report}"
            )
        return f"exit code: {code}\n{report}"

    @staticmethod
    async def reap(process: asyncio.subprocess.Process) -> None:
        """Collect the killed leader while this event loop runs, so its transport is closed here and not by the
        garbage collector after the loop has closed (which raised "Event loop is closed" in a later test)."""
        with suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(process.wait()), DRAIN_AFTER_EXIT_S)

    @staticmethod
    async def settle(readers: asyncio.Future[Any]) -> None:
        with suppress(TimeoutError):
            await asyncio.wait_for(readers, DRAIN_AFTER_EXIT_S)

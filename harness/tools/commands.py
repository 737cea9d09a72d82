"""run_command: the model picks the *name* of a command the operator configured; it never supplies one.

Each preset fixes an executable and its arguments, a folder inside the workspace, a timeout and an output
cap. It runs without a shell in a process group of its own; the timeout, a Stop, or the leader's exit
kill the whole group, so nothing it started is left behind.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import signal
import tomllib
from collections.abc import Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.errors import ConfigError, PermanentToolError, ToolError
from harness.protocols import ApprovalRule, ToolContext
from harness.tools.base import VALID_NAME
from harness.tools.workspace import Workspace

READ_CHUNK = 65536
DRAIN_AFTER_EXIT_S = 1.0


@dataclass(frozen=True)
class CommandPreset:
    name: str
    argv: tuple[str, ...]
    cwd: str = "."
    timeout_s: float = 60.0
    max_output_bytes: int = 32_000
    needs_approval: bool = True
    description: str = ""

    def __post_init__(self) -> None:
        if not VALID_NAME.match(self.name):
            raise ConfigError(f"invalid command name {self.name!r}: use letters, digits, '_' or '-'")
        if not self.argv:
            raise ConfigError(f"command {self.name!r} has no executable")
        if self.timeout_s <= 0 or self.max_output_bytes <= 0:
            raise ConfigError(f"command {self.name!r}: timeout and output cap must be positive")


def parse_preset(spec: str, needs_approval: bool = True) -> CommandPreset:
    """`NAME=EXECUTABLE ARG...` from the command line, split like a shell would but never run by one."""
    name, sep, command = spec.partition("=")
    if not sep or not command.strip():
        raise ConfigError(f"--command expects NAME=COMMAND, got {spec!r}")
    return CommandPreset(name.strip(), tuple(shlex.split(command)), needs_approval=needs_approval)


def load_presets(path: str | Path) -> list[CommandPreset]:
    """Presets from a TOML file: a [commands.NAME] table each, with argv, cwd, timeout_s, max_output_bytes,
    needs_approval and description."""
    try:
        raw = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read command presets ({exc})") from exc
    presets = []
    for name, table in raw.get("commands", {}).items():
        try:
            argv = table.pop("argv")
            presets.append(CommandPreset(name, tuple(str(a) for a in argv), **table))
        except (KeyError, TypeError) as exc:
            raise ConfigError(f"{path}: [commands.{name}] is invalid ({exc})") from exc
    return presets


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
        try:
            process = await asyncio.create_subprocess_exec(
                *preset.argv,
                cwd=cwd,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                start_new_session=True,  # its own process group, killed as a whole
            )
        except OSError as exc:
            raise PermanentToolError(f"command {preset.name} cannot start: {exc}") from exc
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
    async def settle(readers: asyncio.Future[Any]) -> None:
        with suppress(TimeoutError):
            await asyncio.wait_for(readers, DRAIN_AFTER_EXIT_S)

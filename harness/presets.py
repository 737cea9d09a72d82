"""Command presets: the only commands `run_command` can run, named by the operator, never by the model."""

from __future__ import annotations

import math
import re
import shlex
import tomllib
from dataclasses import dataclass
from pathlib import Path

from harness.errors import ConfigError

VALID_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


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
        if not self.argv or not all(isinstance(a, str) and a and "\x00" not in a for a in self.argv):
            raise ConfigError(f"command {self.name!r} needs an executable and no empty or NUL-bearing argument")
        if not (math.isfinite(self.timeout_s) and self.timeout_s > 0) or self.max_output_bytes <= 0:
            raise ConfigError(f"command {self.name!r}: timeout and output cap must be positive")


def parse_preset(spec: str, needs_approval: bool = True) -> CommandPreset:
    """`NAME=EXECUTABLE ARG...` from the command line, split like a shell would but never run by one."""
    name, sep, command = spec.partition("=")
    if not sep or not command.strip():
        raise ConfigError(f"--command expects NAME=COMMAND, got {spec!r}")
    try:
        argv = tuple(shlex.split(command))
    except ValueError as exc:
        raise ConfigError(f"--command {spec!r}: cannot split it into words ({exc})") from exc
    return CommandPreset(name.strip(), argv, needs_approval=needs_approval)


def load_presets(path: str | Path) -> list[CommandPreset]:
    """Presets from a TOML file: a [commands.NAME] table each, with argv, cwd, timeout_s, max_output_bytes,
    needs_approval and description."""
    try:
        raw = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read command presets ({exc})") from exc
    presets = []
    commands = raw.get("commands", {})
    if not isinstance(commands, dict):
        raise ConfigError(f"{path}: [commands] must be a table of [commands.NAME] tables")
    for name, table in commands.items():
        try:
            argv = table.pop("argv")
            presets.append(CommandPreset(name, tuple(str(a) for a in argv), **table))
        except (KeyError, TypeError, AttributeError) as exc:
            raise ConfigError(f"{path}: [commands.{name}] is invalid ({exc})") from exc
    return presets

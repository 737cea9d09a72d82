"""Command presets: the only commands `run_command` can run, named by the operator, never by the model."""

from __future__ import annotations

import math
import shlex
import tomllib
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from harness.errors import ConfigError
from harness.userfiles import read_text
from wire.types import TOOL_NAME, first_error


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
        if not TOOL_NAME.match(self.name):
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


class PresetTable(BaseModel):
    """One [commands.NAME] table, with exact types: a string is not a list of arguments, 0 is not a bool."""

    model_config = ConfigDict(extra="forbid", strict=True)

    argv: list[str] = Field(min_length=1)
    cwd: str = "."
    timeout_s: float = Field(default=60.0, gt=0, allow_inf_nan=False)
    max_output_bytes: int = Field(default=32_000, gt=0)
    needs_approval: bool = True
    description: str = ""


class PresetsFile(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    commands: dict[str, PresetTable] = Field(default_factory=dict)


MAX_PRESETS_BYTES = 1_000_000


def load_presets(path: str | Path) -> list[CommandPreset]:
    """Presets from a TOML file: a [commands.NAME] table each, with argv, cwd, timeout_s, max_output_bytes,
    needs_approval and description, checked against their types."""
    try:
        raw = tomllib.loads(read_text(path, MAX_PRESETS_BYTES, "commands file"))
    except FileNotFoundError as exc:
        raise ConfigError(f"{path}: no such commands file") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML ({exc})") from exc
    except RecursionError as exc:
        raise ConfigError(f"{path}: nested too deeply to read as TOML") from exc
    try:
        parsed = PresetsFile.model_validate(raw)
    except ValidationError as exc:
        raise ConfigError(f"{path}: {first_error(exc)}") from exc
    return [CommandPreset(name, tuple(t.argv), **t.model_dump(exclude={"argv"})) for name, t in parsed.commands.items()]

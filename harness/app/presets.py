"""Command presets: the only commands `run_command` can run, named by the operator, never by the model."""

from __future__ import annotations

import shlex
import tomllib
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from harness.app.userfiles import read_text
from harness.core.config import CommandPreset
from harness.errors import ConfigError
from wire.types import first_error


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
MOST_NESTING = 64  # arrays and inline tables within each other


def load_presets(path: str | Path) -> list[CommandPreset]:
    """Presets from a TOML file: a [commands.NAME] table each, with argv, cwd, timeout_s, max_output_bytes,
    needs_approval and description, checked against their types."""
    try:
        text = read_text(path, MAX_PRESETS_BYTES, "commands file")
        if deepest(text) > MOST_NESTING:  # refused before tomllib recurses to the end of the stack
            raise ConfigError(f"{path}: nested too deeply to read as TOML")
        raw = tomllib.loads(text)
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


def deepest(text: str) -> int:
    """How deep arrays and inline tables nest in TOML text, brackets in strings and comments not counted. A
    parser that recurses once a level and is stopped by RecursionError leaves the stack full, and an object
    the collector finalises just then fails in its finaliser."""
    depth = most = i = 0
    while i < len(text):
        char = text[i]
        if char == "#":
            i = text.find("\n", i)
            if i < 0:
                break
        elif char in "\"'":
            quote = char * 3 if text.startswith(char * 3, i) else char
            i += len(quote)
            while i < len(text) and not text.startswith(quote, i):
                i += 2 if char == '"' and text[i] == "\\" else 1
            i += len(quote) - 1
        elif char in "[{":
            depth += 1
            most = max(most, depth)
        elif char in "]}":
            depth -= 1
        i += 1
    return most

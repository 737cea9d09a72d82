"""What a tool returns: the text the model reads, and what the harness knows of it without reading the text
back (its kind, the files it shows, the window of a file it read, whether it left something out)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

ResultKind = Literal["names", "lines", "found", "nothing", "symbols", "facts", "count", "changed", "other"]
"""names: a listing of files; lines: what one file says (a read); found: the lines a search found, each after
its file; nothing: a search that found no line of its pattern; symbols: where names are defined and used;
facts: what manifests declare; count: numbers a tool counted; changed: a file a tool wrote or deleted."""


@dataclass(frozen=True)
class Shown:
    """What a result shows, for the harness."""

    kind: ResultKind = "other"
    paths: tuple[str, ...] = ()  # the files it shows: listed, read, holding what was found, changed
    window: tuple[int, int, int] | None = None  # a read of part of a file: first line, last line, lines in all
    cut: bool = False  # it left out what did not fit (files of a listing, lines of a search)
    whole: bool = False  # a listing of the whole workspace that showed every file


@dataclass(frozen=True)
class ToolResult:
    text: str
    shown: Shown = field(default_factory=Shown)


def as_result(output: str | ToolResult) -> ToolResult:
    """A tool's output as a result: a tool that returns only text shows nothing the harness can know."""
    return output if isinstance(output, ToolResult) else ToolResult(str(output))

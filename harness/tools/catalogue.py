"""The catalogue: the tools a run gets over one workspace."""

from __future__ import annotations

from collections.abc import Sequence

from harness.limits import Limits
from harness.protocols import Model, Tool, TraceSink
from harness.tools.archive import ScanArchive
from harness.tools.base import Registry
from harness.tools.commands import CommandPreset, RunCommand
from harness.tools.files import DeleteFile, ListFiles, ReadFile
from harness.tools.research import Research
from harness.tools.workspace import Workspace
from harness.tools.writes import WriteFile


def reading_tools(workspace: Workspace) -> list[Tool]:
    return [ListFiles(workspace), ReadFile(workspace)]


def catalogue(
    workspace: Workspace,
    *,
    research_model: Model | None = None,
    research_limits: Limits | None = None,
    presets: Sequence[CommandPreset] = (),
    approve_writes: bool = True,
    trace: TraceSink | None = None,
    scan: ScanArchive | None = None,
) -> Registry:
    """list_files, read_file, delete_file, write_file, scan_archive; research with a model; run_command with presets."""
    tools: list[Tool] = [
        *reading_tools(workspace),
        DeleteFile(workspace),
        WriteFile(workspace, needs_approval=approve_writes),
        scan or ScanArchive(),
    ]
    if research_model is not None:
        child = Registry(reading_tools(workspace))
        tools.append(
            Research(research_model, child, research_limits or Limits(max_turns=6, max_budget_usd=0.05), trace=trace)
        )
    if presets:
        tools.append(RunCommand(workspace, presets))
    return Registry(tools)

"""The catalogue: the tools a run gets over one workspace, chosen by name."""

from __future__ import annotations

from collections.abc import Sequence

from harness.controls import Control
from harness.errors import ConfigError
from harness.limits import Limits
from harness.presets import CommandPreset
from harness.protocols import Model, Tool, TraceSink
from harness.tools.archive import ScanArchive
from harness.tools.base import Registry
from harness.tools.commands import RunCommand
from harness.tools.files import DeleteFile, ListFiles, ReadFile
from harness.tools.research import Research
from harness.tools.workspace import Workspace
from harness.tools.writes import WriteFile

EVERY_TOOL = ("list_files", "read_file", "delete_file", "write_file", "scan_archive", "research", "run_command")


def reading_tools(workspace: Workspace) -> list[Tool]:
    return [ListFiles(workspace), ReadFile(workspace)]


def catalogue(
    workspace: Workspace,
    *,
    names: Sequence[str] = EVERY_TOOL,
    research_model: Model | None = None,
    research_limits: Limits | None = None,
    presets: Sequence[CommandPreset] = (),
    approve_writes: bool = True,
    approve_deletes: bool = True,
    trace: TraceSink | None = None,
    scan: ScanArchive | None = None,
    controls: Sequence[Control] = (),
) -> Registry:
    """The named tools (research only with a model, run_command only with presets), in catalogue order."""
    unknown = set(names) - set(EVERY_TOOL)
    if unknown:
        raise ConfigError(f"unknown tools {sorted(unknown)}; the tools are {', '.join(EVERY_TOOL)}")
    made: dict[str, Tool] = {
        "list_files": ListFiles(workspace),
        "read_file": ReadFile(workspace),
        "delete_file": DeleteFile(workspace, needs_approval=approve_deletes),
        "write_file": WriteFile(workspace, needs_approval=approve_writes),
        "scan_archive": scan or ScanArchive(),
    }
    if research_model is not None:
        limits = research_limits or Limits(max_turns=6, max_budget_usd=0.05)
        child_tools = Registry(reading_tools(workspace))
        made["research"] = Research(research_model, child_tools, limits, trace=trace, controls=controls)
    if presets:
        made["run_command"] = RunCommand(workspace, presets)
    return Registry(made[name] for name in EVERY_TOOL if name in names and name in made)

"""The catalogue: the tools a run gets over one workspace, chosen by name."""

from __future__ import annotations

import json
from collections.abc import Sequence

from harness.core.config import ALL_TOOLS, LOOKING_TOOLS, CommandPreset, known_tools
from harness.core.config import research_limits as default_research_limits
from harness.core.limits import Limits
from harness.core.protocols import Model, Tool, TraceSink
from harness.core.registry import Registry
from harness.core.turn import Control
from harness.fs.workspace import Workspace
from harness.index.index import WorkspaceIndex
from harness.tools.archive import ScanArchive
from harness.tools.commands import RunCommand
from harness.tools.files import DeleteFile, ListFiles, ReadFile
from harness.tools.knowing import CountLines, FindSymbol, ProjectInfo, RepoMap
from harness.tools.research import Research
from harness.tools.search import Search
from harness.tools.views import output_chars
from harness.tools.writes import AppendFile, EditFile, WriteFile


def reading_tools(
    workspace: Workspace, chars: int = output_chars(None), index: WorkspaceIndex | None = None
) -> list[Tool]:
    """The looking tools, each result at most `chars` characters, those that answer from the index over `index`
    (a new index of the workspace when none is given)."""
    index = index or WorkspaceIndex(workspace)
    return [
        ListFiles(workspace, chars),
        ReadFile(workspace, chars),
        Search(workspace, chars, index=index),
        FindSymbol(index),
        ProjectInfo(index),
        CountLines(index),
        RepoMap(index, chars),
    ]


def catalogue(
    workspace: Workspace,
    *,
    names: Sequence[str] = LOOKING_TOOLS,
    research_model: Model | None = None,
    research_limits: Limits | None = None,
    presets: Sequence[CommandPreset] = (),
    approve_writes: bool = True,
    approve_deletes: bool = True,
    trace: TraceSink | None = None,
    scan: ScanArchive | None = None,
    controls: Sequence[Control] = (),
    window: int | None = None,
    index: WorkspaceIndex | None = None,
) -> Registry:
    """The named tools (research only with a model, run_command only with presets), in catalogue order, each
    result sized to the model's `window` (tokens) when it is known, and the index's tools left out where their
    definitions would crowd that window (`fitted`); the looking tools answer from `index` (one is made when
    none is given), and the tools that change files refresh it."""
    known_tools(names)
    chars = output_chars(window)
    index = index or WorkspaceIndex(workspace)
    looking = reading_tools(workspace, chars, index)
    made: dict[str, Tool] = {
        **{tool.name: tool for tool in looking},
        "delete_file": DeleteFile(workspace, needs_approval=approve_deletes, index=index),
        "write_file": WriteFile(workspace, needs_approval=approve_writes, index=index),
        "edit_file": EditFile(workspace, needs_approval=approve_writes, index=index),
        "append_file": AppendFile(workspace, needs_approval=approve_writes, index=index),
        "scan_archive": scan or ScanArchive(),
    }
    if research_model is not None:
        limits = research_limits or default_research_limits()
        child_tools = Registry(looking)
        made["research"] = Research(research_model, child_tools, limits, trace=trace, controls=controls)
    if presets:
        made["run_command"] = RunCommand(workspace, presets)
    return fitted([made[name] for name in ALL_TOOLS if name in names and name in made], window)


# the index's tools, in the order they are left out when the definitions would not leave a small model's window
# room to work in (the three a user knows, list_files, read_file and search, and every tool that changes
# something, always stay)
OPTIONAL = ("repo_map", "count_lines", "project_info", "find_symbol")
DEFINITIONS_SHARE = 4  # the tools' definitions may take at most a quarter of the window
CHARS_PER_TOKEN = 3  # a definition's JSON takes about a token per three or four characters; three errs long


def fitted(tools: list[Tool], window: int | None) -> Registry:
    """The tools, less the index's tools (last first) while their definitions would take more than a quarter
    of the model's `window` (a server of a 1,024-token window would otherwise refuse the first request)."""
    if window:
        for name in OPTIONAL:
            size = len(json.dumps(Registry(tools).definitions())) // CHARS_PER_TOKEN
            if size * DEFINITIONS_SHARE <= window:
                break
            tools = [tool for tool in tools if tool.name != name]
    return Registry(tools)

"""unread_paths: a read-only tool's path may only name a file that exists and that it has not read yet."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, Protocol, runtime_checkable

from harness.controls.base import Hooks, RunContext, Turn
from harness.protocols import Tool, ToolChoice
from harness.tools.workspace import Workspace
from wire.types import ToolCall, ToolDefinition


@runtime_checkable
class ReadsWorkspaceFiles(Protocol):
    """A tool whose `path_parameter` names an existing file of its workspace."""

    workspace: Workspace
    path_parameter: str


@dataclass
class Read:
    paths: dict[str, list[str]] = field(default_factory=dict)  # tool name -> paths it has read, in order


@dataclass(frozen=True)
class UnreadPaths(Hooks):
    """The schema sent for a read-only file tool gives its path an `enum`: the workspace's files this tool
    has not read yet (at most `most` of them; a larger folder is left open). A constrained server then
    cannot produce an invented path or a read it already has; any server shows the model which files
    exist. A tool that has read every file is not offered; a tool that changes files makes every file
    unread again."""

    name: ClassVar[str] = "unread_paths"
    most: int = 200

    def before_request(self, run: RunContext, turn: Turn) -> None:
        request = turn.request
        if not request.tools:
            return
        read = self.recall(run, Read).paths
        offered: list[ToolDefinition] = []
        for definition in request.tools:
            tool = run.tools.get(definition["function"]["name"])
            if tool is None or not tool.read_only or not isinstance(tool, ReadsWorkspaceFiles):
                offered.append(definition)
                continue
            entries, _ = tool.workspace.entries(limit=self.most + 1)
            if len(entries) > self.most:
                offered.append(definition)
                continue
            unread = [e.path for e in entries if e.path not in read.get(tool.name, [])]
            if unread:
                offered.append(narrowed(definition, tool.path_parameter, unread))
        if len(offered) != len(request.tools):
            turn.request = replace(request, tools=offered, tool_choice=still_valid(request.tool_choice, offered))
        else:
            turn.request = replace(request, tools=offered)

    def after_call(
        self, run: RunContext, call: ToolCall, tool: Tool, args: dict[str, Any], result: str, ok: bool
    ) -> None:
        memory = self.recall(run, Read)
        if not tool.read_only:
            memory.paths = {}
        elif ok and isinstance(tool, ReadsWorkspaceFiles) and isinstance(path := args.get(tool.path_parameter), str):
            memory.paths.setdefault(tool.name, []).append(path)
        self.keep(run, memory)


def narrowed(definition: ToolDefinition, parameter: str, paths: list[str]) -> ToolDefinition:
    schema = copy.deepcopy(dict(definition["function"].get("parameters") or {}))
    properties = schema.setdefault("properties", {})
    properties[parameter] = {**properties.get(parameter, {"type": "string"}), "enum": paths}
    return {**definition, "function": {**definition["function"], "parameters": schema}}


def still_valid(choice: ToolChoice | None, offered: list[ToolDefinition]) -> ToolChoice | None:
    """A tool_choice that can still be honoured once some tools are no longer offered."""
    names = {d["function"]["name"] for d in offered}
    if isinstance(choice, dict) and choice["function"]["name"] not in names:
        choice = "required"
    if not offered and choice in ("required", "none"):
        return None
    return choice

"""unread_paths: a read-only tool's path may only name a file that exists and that it has not read yet."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol, runtime_checkable

from harness.controls.base import Hooks, RunContext, Turn, offer, still_valid
from harness.protocols import Tool
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
    unread again. With `look_while_unread` N, the first N turns must call a tool while some file is unread
    (a small model stops after one file; a search needs them all)."""

    name: ClassVar[str] = "unread_paths"
    most: int = 200
    look_while_unread: int = 0

    def before_request(self, run: RunContext, turn: Turn) -> None:
        request = turn.request
        if not request.tools:
            return
        read = self.recall(run, Read).paths
        offered: list[ToolDefinition] = []
        unread_left = False
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
                unread_left = True
        choice = (
            still_valid(request.tool_choice, offered) if len(offered) != len(request.tools) else request.tool_choice
        )
        looked = sum(1 for m in run.state.messages if m["role"] == "assistant" and m.get("tool_calls"))
        if choice is None and turn.answer is None and unread_left and looked < self.look_while_unread:
            choice = "required"
        offer(turn, offered, choice)

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

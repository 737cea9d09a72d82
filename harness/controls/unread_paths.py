"""unread_paths: a read-only tool's path may only name a file that exists and that it has not read yet."""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, Protocol, runtime_checkable

from harness.controls.base import Hooks, RunContext, Turn, set_aside
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
    """A read-only file tool's path may only name a file of the workspace that it has not read yet (when
    the folder has at most `most` files; a larger one is left open): a constrained server then cannot
    produce an invented path or a read it already has, and any server shows the model which files exist.
    A tool that has read every file is set aside; a tool that changes files makes every file unread again.
    With `look_while_unread` N, the first N turns must call a tool while some file is unread (a small model
    stops after one file; a search needs them all), unless the question names files and every one of them
    has been read: a question about a file is answered from that file.

    Where the narrowing goes: a server that takes `tool_parameters` (this project's) gets the unread files
    there, and the tools sent list every file, the same at every turn, so the prompt's prefix stays cached
    (chat templates write the tools near its top). Any other server gets the unread files in the tools sent,
    and reads the conversation again from them at each turn."""

    name: ClassVar[str] = "unread_paths"
    most: int = 200
    look_while_unread: int = 0
    tool_parameters: bool = False  # the server narrows calls by the `tool_parameters` field

    def before_request(self, run: RunContext, turn: Turn) -> None:
        request = turn.request
        if not request.tools:
            return
        read = self.recall(run, Read).paths
        tools: list[ToolDefinition] = []
        narrowing: dict[str, object] = {}
        done: set[str] = set()
        unread_left = False
        named: set[str] = set()
        for definition in request.tools:
            tool = run.tools.get(definition["function"]["name"])
            if tool is None or not tool.read_only or not isinstance(tool, ReadsWorkspaceFiles):
                tools.append(definition)
                continue
            entries, _ = tool.workspace.entries(limit=self.most + 1)
            if len(entries) > self.most:
                tools.append(definition)
                continue
            every = [e.path for e in entries]
            named |= {p for p in every if mentions(run.state.question, p)}
            unread = [p for p in every if p not in read.get(tool.name, [])]
            if not unread:
                done.add(tool.name)
            unread_left = unread_left or bool(unread)
            if self.tool_parameters:
                tools.append(narrowed(definition, tool.path_parameter, every))
                if unread:
                    narrowing[tool.name] = narrowed(definition, tool.path_parameter, unread)["function"]["parameters"]
            else:
                tools.append(narrowed(definition, tool.path_parameter, unread or every))
        extra = {**request.extra, "tool_parameters": narrowing} if narrowing else request.extra
        turn.request = replace(request, tools=tools, extra=extra)
        set_aside(turn, done)
        looked = sum(1 for m in run.state.messages if m["role"] == "assistant" and m.get("tool_calls"))
        searching = unread_left and not (named and named <= {p for paths in read.values() for p in paths})
        if turn.request.tool_choice is None and turn.answer is None and searching and looked < self.look_while_unread:
            turn.request = replace(turn.request, tool_choice="required")

    def after_call(
        self, run: RunContext, call: ToolCall, tool: Tool, args: dict[str, Any], result: str, ok: bool
    ) -> None:
        memory = self.recall(run, Read)
        if not tool.read_only:
            memory.paths = {}
        elif ok and isinstance(tool, ReadsWorkspaceFiles) and isinstance(path := args.get(tool.path_parameter), str):
            memory.paths.setdefault(tool.name, []).append(path)
        self.keep(run, memory)


def mentions(question: str, path: str) -> bool:
    """Whether the question names this file by its path (`docs/todo.md`, not `todo.md` inside `old/todo.md`)."""
    return re.search(rf"(?<![\w/.-]){re.escape(path)}(?![\w/-])", question) is not None


def narrowed(definition: ToolDefinition, parameter: str, paths: list[str]) -> ToolDefinition:
    schema = copy.deepcopy(dict(definition["function"].get("parameters") or {}))
    properties = schema.setdefault("properties", {})
    properties[parameter] = {**properties.get(parameter, {"type": "string"}), "enum": paths}
    return {**definition, "function": {**definition["function"], "parameters": schema}}

"""unread_paths: a read-only tool's path may only name a file that exists and that it has not read yet."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

from harness.controls.base import Hooks
from harness.core.policy import signature
from harness.core.protocols import Tool
from harness.core.results import ToolResult
from harness.core.turn import NamedPaths, RunContext, Turn
from harness.fs.workspace import Entry, Workspace
from harness.index.index import Named, writes
from harness.tools.roles import OverWorkspace, ReadsOneFile
from wire.types import ToolCall, ToolDefinition, decoded_arguments


@dataclass
class Read:
    paths: dict[str, list[str]] = field(default_factory=dict)  # tool name -> paths it has read, in order
    listed: list[str] = field(default_factory=list)  # workspace tools whose bare listing showed every file


DEFAULT_CONTEXT = 8192  # tokens, where the server does not say
MAX_WALK = 20_000  # a bigger workspace's folders are not narrowed to


@dataclass
class Narrowing:
    """What narrowing one request's tools found: the server's narrowing by tool, the tools with nothing left to
    read, whether any file is left unread, and the files the question names."""

    paths: dict[str, Mapping[str, Any]] = field(default_factory=dict)
    done: set[str] = field(default_factory=set)
    unread_left: bool = False
    unread_bytes: int = 0
    named: set[str] = field(default_factory=set)


@dataclass(frozen=True)
class UnreadPaths(Hooks):
    """A read-only file tool's path may only name a file of the workspace that it has not read yet (when
    the folder has at most `most` files; a larger one is left open): a constrained server then cannot
    produce an invented path or a read it already has, and any server shows the model which files exist.
    A tool that has read every file is set aside, and so is a listing of the workspace that ran without
    arguments (it showed every file) and, once every file is read, every read-only tool of the workspace
    that needs arguments (a search); a tool that changes files makes every file unread again.
    With `look_while_unread` N, the first N turns must call a tool while some file is unread and the unread
    files could be read whole (at most twice the model's window, as characters): a small model stops after
    one file, and a question about what the files say needs them all. A folder too large to read whole is
    left to the model and its search. Nor is it forced once the question names files and every one of them
    has been read: a question about a file is answered from that file, nor once the model's last calls all
    repeat calls it made before: it has nothing new it wants to see. While a file the question names (by
    its path, or a folder of it by a path of two names or more) is unread, a read may name only such files,
    and while the question names by its path a file the reading tool has not been asked for, those first N
    turns call the reading tool (when it is the one reading tool offered, no tool that changes files is, and
    no other control chose a tool).
    A read that showed a window of a long file leaves it unread (the rest may be read on).

    Where the narrowing goes: a server that takes `tool_parameters` (this project's) gets the unread files
    there, and the tools sent list every file, the same at every turn, so the prompt's prefix stays cached
    (chat templates write the tools near its top). Any other server gets the unread files in the tools sent,
    and reads the conversation again from them at each turn."""

    name: ClassVar[str] = "unread_paths"
    most: int = 200
    look_while_unread: int = 0
    tool_parameters: bool = False  # the server narrows calls by the `tool_parameters` field
    context: int = 0  # the model's context window in tokens, when the server said

    def before_request(self, run: RunContext, turn: Turn) -> None:
        request = turn.request
        if not request.tools:
            return
        memory = self.recall(run, Read)
        narrowing = Narrowing()
        tools = [self.narrowed(run, definition, memory, narrowing) for definition in request.tools]
        turn.request = replace(request, tools=tools)
        turn.narrow(narrowing.paths)
        done = narrowing.done | self.looked_enough(run, memory, narrowing)
        turn.set_aside(done)
        looked = sum(1 for m in run.state.messages if m["role"] == "assistant" and m.get("tool_calls"))
        read = {p for paths in memory.paths.values() for p in paths}
        searching = narrowing.unread_left and not (narrowing.named and narrowing.named <= read)
        searching = searching and narrowing.unread_bytes <= 2 * (self.context or DEFAULT_CONTEXT)
        if looked >= self.look_while_unread or repeated(run):
            return
        reader = self.named_reader(run, turn)
        if reader is not None:
            turn.require(reader)
        elif searching:
            turn.require()

    def named_reader(self, run: RunContext, turn: Turn) -> str | None:
        """The reading tool, when it is the only one offered and the question names by its path a file of the
        workspace it has not been asked to read yet (a window of a long file counts): a small model asked about
        `TODO.md` searches for "TODO", or for the question's words, and answers from what that finds. Not while
        a tool that changes files is offered: the model's own choice may be the change asked for. (Offered: in
        the request; what other controls set aside this turn does not change the answer.)"""
        offered = {d["function"]["name"] for d in turn.request.tools}
        readers = [t for t in run.tools if t.name in offered and t.read_only and isinstance(t, ReadsOneFile)]
        if len(readers) != 1 or any(not t.read_only for t in run.tools if t.name in offered):
            return None  # a task that changes files may be done without a read first (a delete)
        reader = readers[0]
        asked = {
            path
            for m in run.state.messages
            if m["role"] == "assistant"
            for c in m.get("tool_calls", [])
            if c["function"]["name"] == reader.name
            and isinstance(args := decoded_arguments(c["function"]["arguments"]), dict)
            and isinstance(path := args.get(reader.path_parameter), str)
        }
        entries = files_of(run, reader.workspace, MAX_WALK)
        unread = [path for path in named_in(run, entries).files if path not in asked]
        return reader.name if unread else None

    def narrowed(self, run: RunContext, definition: ToolDefinition, memory: Read, into: Narrowing) -> ToolDefinition:
        """A reading tool's definition with its path kept to the files (the server's narrowing noted)."""
        tool = run.tools.get(definition["function"]["name"])
        if tool is not None and tool.read_only and not isinstance(tool, ReadsOneFile):
            return self.folders_kept(run, tool, definition, into) if isinstance(tool, OverWorkspace) else definition
        if tool is None or not tool.read_only or not isinstance(tool, ReadsOneFile):
            return definition
        entries = files_of(run, tool.workspace, self.most + 1)
        if len(entries) > self.most:
            return definition
        every = [e.path for e in entries]
        names = named_in(run, entries)
        named = [p for p in every if names.holds(p)]
        into.named |= set(named)
        unread = [p for p in every if p not in memory.paths.get(tool.name, [])]
        unread = [p for p in named if p in unread] or unread  # the files the question names are read first
        into.unread_bytes = max(into.unread_bytes, sum(e.size for e in entries if e.path in set(unread)))
        if not unread:
            into.done.add(tool.name)
        into.unread_left = into.unread_left or bool(unread)
        if not self.tool_parameters:
            return narrowed(definition, tool.path_parameter, unread or every)
        if unread:
            into.paths[tool.name] = narrowed(definition, tool.path_parameter, unread)["function"]["parameters"]
        return narrowed(definition, tool.path_parameter, every)

    def folders_kept(
        self, run: RunContext, tool: OverWorkspace, definition: ToolDefinition, into: Narrowing
    ) -> ToolDefinition:
        """A listing's folder (a search's folder or file) kept to the workspace's folders (and files), when
        there are at most `most` of them: a small model passes a file to a listing, or a folder that is not
        there."""
        folder, scope = getattr(tool, "folder_parameter", None), getattr(tool, "scope_parameter", None)
        parameter = folder or scope
        if not isinstance(parameter, str):
            return definition
        entries = files_of(run, tool.workspace, MAX_WALK)
        folders = sorted({e.path.rsplit("/", 1)[0] for e in entries if "/" in e.path})
        allowed = [".", *folders] + ([] if folder else [e.path for e in entries])
        if len(allowed) > self.most + 1 or len(entries) >= MAX_WALK:
            return definition
        if not self.tool_parameters:
            return narrowed(definition, parameter, allowed)
        into.paths[definition["function"]["name"]] = narrowed(definition, parameter, allowed)["function"]["parameters"]
        return definition

    def looked_enough(self, run: RunContext, memory: Read, narrowing: Narrowing) -> set[str]:
        """The read-only tools over a small workspace with nothing left to show: a listing once it ran without
        arguments, and any tool that needs arguments (a search) once every file is read. A listing stays until
        it ran: reading every file does not tell their sizes."""
        every_read = bool(narrowing.done) and not narrowing.unread_left
        return {
            tool.name
            for tool in run.tools
            if tool.read_only
            and self.small(run, tool)
            and (tool.name in memory.listed or (every_read and bool(tool.parameters.get("required"))))
        }

    def after_call(
        self, run: RunContext, call: ToolCall, tool: Tool, args: dict[str, Any], result: ToolResult, ok: bool
    ) -> None:
        with self.remember(run, Read) as memory:
            if not tool.read_only:
                memory.paths, memory.listed = {}, []
            elif ok and result.shown.whole and tool.name not in memory.listed:
                memory.listed.append(tool.name)  # a listing that showed every file (not one left for a folder)
            elif (
                ok
                and isinstance(tool, ReadsOneFile)
                and isinstance(path := args.get(tool.path_parameter), str)
                and result.shown.kind == "lines"
                and result.shown.window is None
            ):
                memory.paths.setdefault(tool.name, []).append(path)  # read whole: nothing of it left to read on

    def small(self, run: RunContext, tool: object) -> bool:
        """Whether a listing tool's workspace has at most `most` files."""
        if not isinstance(tool, OverWorkspace):
            return False
        return len(files_of(run, tool.workspace, self.most + 1)) <= self.most


def files_of(run: RunContext, workspace: Workspace, limit: int) -> list[Entry]:
    """The workspace's files, at most `limit`, from the run's index (walked once a run) when it has one over
    that workspace."""
    index = run.index
    if index is not None and index.root == workspace.root:
        return [Entry(r.path, r.size, r.modified) for r in index.files()[:limit]]
    return workspace.entries(limit=limit)[0]


def named_in(run: RunContext, entries: list[Entry]) -> NamedPaths:
    """What the question names of the folder by path, as the run's index finds it (without an index, among
    `entries`)."""
    if run.index is not None:
        return run.index.named(run.state.question)
    question = run.state.question
    files = [e.path for e in entries if e.path in question and writes(question, e.path)]
    folders = {"/".join(e.path.split("/")[:end]) for e in entries for end in range(2, e.path.count("/") + 1)}
    return Named(files, sorted(f for f in folders if f in question and writes(question, f)))


def narrowed(definition: ToolDefinition, parameter: str, paths: list[str]) -> ToolDefinition:
    schema = copy.deepcopy(dict(definition["function"].get("parameters") or {}))
    properties = schema.setdefault("properties", {})
    properties[parameter] = {**properties.get(parameter, {"type": "string"}), "enum": paths}
    return {**definition, "function": {**definition["function"], "parameters": schema}}


def repeated(run: RunContext) -> bool:
    """Whether every call of the last reply repeats (same tool, same arguments) a call of an earlier reply."""
    replies = [m.get("tool_calls", []) for m in run.state.messages if m["role"] == "assistant"]
    if not replies or not replies[-1]:
        return False
    earlier = {sig(c) for calls in replies[:-1] for c in calls}
    return all(sig(c) in earlier for c in replies[-1])


def sig(call: ToolCall) -> str:
    return signature(call["function"]["name"], decoded_arguments(call["function"]["arguments"]))

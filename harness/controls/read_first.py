"""read_first: a file that exists is changed only after the run has read it (as Claude Code's Edit and Write)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from harness.controls.base import Hooks, batch_of
from harness.core.policy import signature
from harness.core.protocols import Tool
from harness.core.results import Shown, ToolResult
from harness.core.turn import RunContext
from harness.errors import ToolError
from harness.fs.sniff import SNIFF_BYTES, binary_kind
from harness.fs.workspace import Workspace
from harness.prompts import changed_since, read_first, refused_again
from harness.tools.files import MAX_READ_BYTES
from harness.tools.roles import ChangesWhatItRead, OverWorkspace, ReadsOneFile
from harness.tools.views import described, window
from harness.tools.writes import digest_of
from wire.types import ToolCall


@dataclass
class Known:
    paths: dict[str, str] = field(default_factory=dict)  # a file read, changed or shown -> the call that first did
    refused: list[str] = field(default_factory=list)  # the signatures of the calls refused for want of reading
    seen: dict[str, str | None] = field(default_factory=dict)  # a file -> its sha256 when the run last saw it


@dataclass(frozen=True)
class ReadFirst(Hooks):
    """A call that would replace or edit a file that exists, which the run has neither read nor changed, is
    not run (as Claude Code's Edit and Write refuse a file not read): its slot shows what the file holds, as
    read_file would, and what the tool may do next, so a call made knowing it runs. A small model asked to
    change one value or add one line writes the file whole from the question alone (its content: the new
    line) or edits a guess at its text, and the rest of the file is lost; shown the file, it often makes
    the same call again. A write made again is refused again, with the advice: it would still replace the
    file whole. An edit made again runs: it changes only the text it quotes, and when that text is not in
    the file the tool says so, with the line most like it. What it has read, changed or been shown
    in an earlier reply it may change (a read in the same reply as the change had not been seen when the
    change was written); a new file may be written unread; an append or a delete is not such a change.
    A file that changed on disk since the run last saw it (a person saved it meanwhile) is not replaced or
    edited either: the slot says so and shows it as it is now, as Claude Code's Write refuses a stale file."""

    name: ClassVar[str] = "read_first"

    def before_call(self, run: RunContext, call: ToolCall, tool: Tool, args: dict[str, Any]) -> str | ToolResult | None:
        if not isinstance(tool, ChangesWhatItRead):
            return None
        path, call_made = tool.reads_first(args), signature(tool.name, args)
        key, memory = known_as(tool.workspace, path), self.recall(run, Known)
        if path is not None and call_made in memory.refused and tool.replaces_whole:
            return refused_again(path, tool.name, tool.unread_advice(run.tools.names()))
        seen_by = memory.paths.get(key or "")
        if path is None or key is None or not tool.workspace.exists(path):
            return None
        if seen_by and seen_by not in batch_of(run, call):
            return self.stale(run, tool, path, key, memory)
        try:
            holds = shown(tool.workspace, path)
        except ToolError:
            return None  # the tool says why it cannot change this path
        with self.remember(run, Known) as memory:
            memory.paths.setdefault(key, call["id"])
            memory.refused.append(call_made)
        slot = read_first(path, tool.name, holds, tool.unread_advice(run.tools.names()))
        return ToolResult(slot, Shown("lines", (key,)))  # it shows the file, as a read would

    def stale(self, run: RunContext, tool: ChangesWhatItRead, path: str, key: str, known: Known) -> ToolResult | None:
        name = getattr(tool, "name", "the change")
        """The slot of a change to a file that changed on disk since the run last saw it, or None (it did not)."""
        if key not in known.seen or digest_of(tool.workspace, path) == known.seen[key]:
            return None
        try:
            holds = shown(tool.workspace, path)
        except ToolError:
            return None
        with self.remember(run, Known) as memory:
            memory.seen[key] = digest_of(tool.workspace, path)  # shown now: a change made again may go ahead
        return ToolResult(changed_since(path, name, holds), Shown("lines", (key,)))

    def after_call(
        self, run: RunContext, call: ToolCall, tool: Tool, args: dict[str, Any], result: ToolResult, ok: bool
    ) -> None:
        if not ok:
            return
        if result.shown.kind == "changed" and isinstance(tool, OverWorkspace):  # the run's own change
            with self.remember(run, Known) as memory:
                for changed in result.shown.paths:
                    memory.seen[changed] = digest_of(tool.workspace, changed)
        if isinstance(tool, ReadsOneFile) and tool.read_only:
            path = args.get(tool.path_parameter)
        elif isinstance(tool, ChangesWhatItRead):
            path = tool.reads_first(args)
        else:
            return
        key = known_as(tool.workspace, path)
        if key is not None:
            with self.remember(run, Known) as memory:
                memory.paths.setdefault(key, call["id"])
                try:
                    memory.seen[key] = digest_of(tool.workspace, key)
                except ToolError:
                    memory.seen.pop(key, None)


def known_as(workspace: Workspace, path: object) -> str | None:
    """The path as its components (`./a//b.md` is `a/b.md`), or None when it names no file of the workspace."""
    try:
        return "/".join(workspace.components(path))
    except ToolError:
        return None


SHOWN_CHARS = 4_000  # of the file, in the slot of a change refused for want of reading


def shown(workspace: Workspace, path: str) -> str:
    """What the file holds, as read_file shows it: whole, or its first lines and how many follow."""
    data, size = workspace.read_bytes(path, MAX_READ_BYTES)
    kind = binary_kind(data[:SNIFF_BYTES])
    if kind is not None:
        return described(path, kind, size)
    seen = window(data.decode("utf-8", errors="replace"), 1, None, SHOWN_CHARS)
    more = "" if seen.last >= seen.total else f"\n[{seen.total - seen.last:,} more lines; read_file shows them]"
    return seen.text.rstrip("\n") + more

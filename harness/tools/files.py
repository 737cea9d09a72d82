"""The file tools: list_files, read_file, delete_file, all confined to one workspace (search: search.py)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from harness.core.protocols import ToolContext
from harness.core.results import Shown, ToolResult
from harness.errors import ToolError
from harness.fs.patterns import glob_matcher
from harness.fs.sniff import SNIFF_BYTES, binary_kind
from harness.fs.workspace import Entry, Workspace, within
from harness.index.index import WorkspaceIndex
from harness.tools.roles import OnlyLooks
from harness.tools.views import described, named, output_chars, window

PATH_ONLY: Mapping[str, Any] = {
    "type": "object",
    "properties": {"path": {"type": "string", "description": "file path relative to the workspace"}},
    "required": ["path"],
    "additionalProperties": False,
}
LISTING: Mapping[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "a folder to list (default: the whole workspace)"},
        "glob": {"type": "string", "description": "only files whose name matches, e.g. *.py or docs/**/*.md"},
        "sort": {
            "type": "string",
            "enum": ["largest", "smallest", "newest", "oldest"],
            "default": "largest",
            "description": "the order: largest first (the default), smallest first, or by last change, newest or "
            "oldest first",
        },
    },
    "additionalProperties": False,
}
READING: Mapping[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "file path relative to the workspace"},
        "offset": {"type": "integer", "minimum": 1, "description": "the first line to read (default 1)"},
        "limit": {"type": "integer", "minimum": 1, "description": "how many lines to read (default: what fits)"},
    },
    "required": ["path"],
    "additionalProperties": False,
}
MAX_READ_BYTES = 8 << 20
READ_ON = "read on with offset="  # how a window of a long file says where the rest begins
NOT_SHOWN = "more files not shown"  # how a listing too long for the window says it left files out
MAX_LISTED = 100_000
ORDERS: Mapping[str, Callable[[Entry], tuple[float, str]]] = {  # as `ls -S`, `ls -Sr`, `ls -t`, `ls -tr`
    "largest": lambda e: (-e.size, e.path),
    "smallest": lambda e: (e.size, e.path),
    "newest": lambda e: (-e.modified, e.path),
    "oldest": lambda e: (e.modified, e.path),
}


@dataclass
class ListFiles(OnlyLooks):
    """The files of the workspace or of one folder, largest first (or smallest, newest or oldest first), with
    their sizes (and when each last changed, in an order by time): as many as fit in the result, then a line
    per folder (how many files, how many bytes) and how to narrow."""

    workspace: Workspace
    output_chars: int = output_chars(None)
    folder_parameter: str = "path"  # names a folder of `workspace`
    seconds: float = 10.0  # the walk's time bound: past it the listing shows what it reached and says so
    name: str = "list_files"
    description: str = (
        "List the names and sizes of the files (all of them, or those in one folder, or those matching a glob), "
        "largest first unless sorted otherwise. It does not show what a file says: read_file does."
    )
    parameters: Mapping[str, Any] = field(default_factory=lambda: LISTING)

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return await asyncio.to_thread(self.listing, args, lambda: ctx.signal.is_set)

    def listing(self, args: dict[str, Any], stop: Callable[[], bool] | None = None) -> ToolResult:
        where = str(args.get("path") or ".")
        if not self.workspace.is_folder(where):
            path = "/".join(self.workspace.folder_parts(where))
            raise ToolError(f"{path} is a file, not a folder: call read_file with path {path} to see what it says")
        matches = glob_matcher(args["glob"]) if args.get("glob") else None
        over = within(self.seconds, stop)
        walked = self.workspace.walk(MAX_LISTED, under=where, match=matches, over=over)
        entries = walked.entries
        scope = ("" if where in (".", "") else f" in {where}") + (
            f" matching {args['glob']}" if args.get("glob") else ""
        )
        # the count first and the order's first file first (as `ls -S`): read without counting lines or comparing
        order = args["sort"] if args.get("sort") in ORDERS else "largest"
        ordered = sorted(entries, key=ORDERS[order])
        at_least = "more than " if walked.more else "at least " if walked.stopped else ""
        count = f"{at_least}{len(entries):,} file" + ("" if len(entries) == 1 else "s")
        if scope:  # a part of the folder: said beside the whole, so its count is not taken for the folder's
            whole = self.workspace.walk(MAX_LISTED, over=over)
            scope += f" (of {'more than ' if whole.more else ''}{len(whole.entries):,} in the whole folder)"
        shown_count = 0
        if not entries and walked.stopped:
            lines = [f"No file{scope} was reached before the listing stopped."]
        elif not entries:
            lines = [f"No files{scope}." if scope else "The workspace has no files."]
        else:
            leader = f"; {leading(ordered, order)}" if args.get("sort") in ORDERS else ""
            lines = [f"{count}{scope}, {order} first{leader}:"]
            listed, shown_count = fitted(ordered, order, len(self.workspace.folder_parts(where)), self.output_chars)
            lines += listed
        if walked.skipped:
            lines.append(
                f"({walked.skipped} other entries not shown: links, special files or files with several names)"
            )
        if walked.ignored:
            lines.append(f"({walked.ignored} entries not shown: version-control folders and what .gitignore names)")
        if walked.more:
            lines.append(f"(the folder holds more than {MAX_LISTED:,} such files: these are the first by path; "
                         "list a folder or a glob to see the others)")  # fmt: skip
        if walked.stopped:
            lines.append(f"(the listing stopped after {self.seconds:g} s, before it had seen every folder: these "
                         "are the files it reached, by path; list a folder or a glob to see the others)")  # fmt: skip
        cut = shown_count < len(ordered) or walked.more or walked.stopped
        facts = Shown("names", tuple(e.path for e in ordered[:shown_count]), cut=cut, whole=not scope and not cut)
        return ToolResult("\n".join(lines), facts)


def folders(entries: list[Entry]) -> list[str]:
    """A line per top folder of the listing (the first folder below the listed one): files and bytes."""
    common = len(min(entries, key=lambda e: e.path.count("/")).path.split("/")) - 1
    totals: dict[str, list[int]] = {}
    for entry in entries:
        parts = entry.path.split("/")
        key = "/".join(parts[: common + 1]) + ("/" if len(parts) > common + 1 else "")
        total = totals.setdefault(key, [0, 0])
        total[0] += 1
        total[1] += entry.size
    ordered = sorted(totals.items(), key=lambda item: (-item[1][0], item[0]))
    return [f"{name} ({n:,} file{'s' * (n != 1)}, {size:,} bytes)" for name, (n, size) in ordered if name.endswith("/")]


TOP_ROOM = 600  # characters kept for the listed folder's own files that the cut left out


def fitted(ordered: list[Entry], order: str, level: int, chars: int) -> tuple[list[str], int]:
    """Every file line when they fit in `chars`; else the first in the order that fit, a line per folder, and
    the listed folder's own files (`level` folders deep) that were left out: `ls` shows a folder's own files
    first, and a project's LICENSE, pyproject.toml and README are small files at its top, below every large
    one. With the lines, how many of the files (the first in the order) have a line of their own."""
    files = [line_of(e, order) for e in ordered]
    if sum(len(line) + 1 for line in files) <= chars:
        return files, len(files)
    by_folder = folders(ordered)
    summary = ["By folder:", *by_folder] if by_folder else []
    reserve = sum(len(line) + 1 for line in own_files(ordered, level))  # at most TOP_ROOM
    room = chars - sum(len(line) + 1 for line in summary) - 200 - reserve
    shown_lines: list[str] = []
    for line in files:
        if room - len(line) - 1 < 0:
            break
        shown_lines.append(line)
        room -= len(line) + 1
    hint = (f"[{len(files) - len(shown_lines):,} {NOT_SHOWN}; call list_files with path set to a folder, "
            "or with a glob such as *.py, to list them]")  # fmt: skip
    return [*shown_lines, hint, *summary, *own_files(ordered[len(shown_lines) :], level)], len(shown_lines)


def own_files(left_out: list[Entry], level: int) -> list[str]:
    """A line naming the files directly in the listed folder that the cut left out, as many as fit TOP_ROOM."""
    own = [e for e in left_out if e.path.count("/") == level]
    if not own:
        return []
    head = "Files directly in the listed folder, not shown above: "
    names: list[str] = []
    room = TOP_ROOM - len(head) - 40
    for entry in own:
        name = f"{named(entry.path)} ({entry.size:,} bytes)"
        if room - len(name) - 2 < 0:
            break
        names.append(name)
        room -= len(name) + 2
    more = f" and {len(own) - len(names):,} more" if len(names) < len(own) else ""
    return [head + ", ".join(names) + more]


MOST_LEADERS = 3  # files sharing the first place that the first line names


def leading(ordered: list[Entry], order: str) -> str:
    """The first file in the order asked for, or the files that share its place, named on the listing's first
    line ("the smallest is a.txt (0 bytes)"): a model asked for the smallest file reads the answer where it
    reads the order, not by finding the first of many lines."""
    timed = order in TIMED
    key = (lambda e: int(e.modified)) if timed else (lambda e: e.size)  # times as shown, to the second
    tied = [e for e in ordered if key(e) == key(ordered[0])]
    first = tied[0]
    value = f"changed {changed(first.modified)}" if timed else f"{first.size:,} bytes"
    if len(tied) == 1:
        return f"the {order} is {named(first.path)} ({value})"
    names = ", ".join(named(e.path) for e in tied[:MOST_LEADERS])
    more = f" and {len(tied) - MOST_LEADERS:,} more" if len(tied) > MOST_LEADERS else ""
    return f"the {order} are {len(tied):,} files ({value} each): {names}{more}"


def changed(modified: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(modified))


def line_of(entry: Entry, order: str) -> str:
    """A file's listing line: its path and size, and when it last changed in an order by time."""
    when = f", changed {changed(entry.modified)}" if order in TIMED else ""
    return f"{named(entry.path)} ({entry.size:,} bytes{when})"


TIMED = frozenset(("newest", "oldest"))


@dataclass
class ReadFile(OnlyLooks):
    """A text file, whole when it fits in the result; else a window of numbered lines (`offset` and `limit`
    choose it) that says where it ends and how to read on. A binary file is described, never shown."""

    workspace: Workspace
    output_chars: int = output_chars(None)
    path_parameter: str = "path"  # names an existing file of `workspace`
    name: str = "read_file"
    description: str = (
        "Read what a file says. A long file comes in numbered lines, a window at a time: offset is the first line "
        "to read and limit how many."
    )
    parameters: Mapping[str, Any] = field(default_factory=lambda: READING)

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        path = args[self.path_parameter]
        data, size = await asyncio.to_thread(self.workspace.read_bytes, path, MAX_READ_BYTES)
        named = ("/".join(self.workspace.components(path)),)
        kind = binary_kind(data[:SNIFF_BYTES])
        if kind is not None:
            return ToolResult(described(path, kind, size), Shown("other", named))
        text = data.decode("utf-8", errors="replace")
        seen = window(text, int(args.get("offset") or 1), args.get("limit"), self.output_chars)
        if seen.whole and size <= len(data):
            return ToolResult(seen.text, Shown("lines", named))
        if seen.total == 0:
            return ToolResult(f"{path} is empty.", Shown("lines", named))
        out = f"[{path}: lines {seen.first:,}-{seen.last:,} of {seen.total:,}]\n{seen.text}"
        if seen.last < seen.total:
            out += f"\n[{seen.total - seen.last:,} more lines; {READ_ON}{seen.last + 1}]"
        if size > len(data):
            out += f"\n[only the first {len(data):,} of {size:,} bytes were read]"
        partial = seen.first > 1 or seen.last < seen.total or size > len(data)
        return ToolResult(out, Shown("lines", named, (seen.first, seen.last, seen.total) if partial else None))


@dataclass
class DeleteFile:
    workspace: Workspace
    path_parameter: str = "path"  # names an existing file of `workspace`
    name: str = "delete_file"
    description: str = "Delete a file from the workspace. A person must approve each deletion."
    parameters: Mapping[str, Any] = field(default_factory=lambda: PATH_ONLY)
    index: WorkspaceIndex | None = None  # read again for the file deleted
    read_only: bool = False
    needs_approval: bool = True
    honours_idempotency_key: bool = True  # a retried delete whose file is gone reports the earlier attempt's success

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        path = args[self.path_parameter]
        changed = Shown("changed", ("/".join(self.workspace.components(path)),))
        try:
            await asyncio.to_thread(self.workspace.delete, path)
        except ToolError:
            if ctx.retry and not await asyncio.to_thread(self.workspace.exists, path):
                said = f"Deleted {path} (the attempt before the run stopped had already deleted it)."
                return ToolResult(said, changed)
            raise
        if self.index is not None:
            await asyncio.to_thread(self.index.refresh, changed.paths)
        return ToolResult(f"Deleted {path}.", changed)

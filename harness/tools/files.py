"""The file tools: list_files, read_file, delete_file, all confined to one workspace."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from harness.errors import ToolError
from harness.protocols import ToolContext
from harness.tools.base import NO_ARGUMENTS
from harness.tools.workspace import Workspace

PATH_ONLY: Mapping[str, Any] = {
    "type": "object",
    "properties": {"path": {"type": "string", "description": "file path relative to the workspace"}},
    "required": ["path"],
    "additionalProperties": False,
}
MAX_READ_BYTES = 1_000_000


@dataclass
class ListFiles:
    workspace: Workspace
    name: str = "list_files"
    description: str = "List the files in the workspace with their sizes in bytes."
    parameters: Mapping[str, Any] = field(default_factory=lambda: NO_ARGUMENTS)
    read_only: bool = True
    needs_approval: bool = False
    honours_idempotency_key: bool = True

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> str:
        entries, skipped = await asyncio.to_thread(self.workspace.entries)
        # the count first and the largest first (as `ls -S`): read without counting lines or comparing numbers
        ordered = sorted(entries, key=lambda e: (-e.size, e.path))
        count = f"{len(entries)} file" + ("" if len(entries) == 1 else "s")
        lines = [f"{count}, largest first:"] + [f"{shown(e.path)} ({e.size:,} bytes)" for e in ordered]
        if not entries:
            lines = ["The workspace has no files."]
        if skipped:
            lines.append(f"({skipped} other entries not shown: links, special files or files with several names)")
        return "\n".join(lines)


def shown(path: str) -> str:
    """A path as one listing line: a name holding anything unprintable (a newline, an escape code) is written as
    a JSON string, escapes and all, so it can add no line of its own and can still be passed back as a path."""
    return path if path.isprintable() and not path.startswith('"') else json.dumps(path)


@dataclass
class ReadFile:
    workspace: Workspace
    path_parameter: str = "path"  # names an existing file of `workspace`
    name: str = "read_file"
    description: str = "Read a text file from the workspace."
    parameters: Mapping[str, Any] = field(default_factory=lambda: PATH_ONLY)
    read_only: bool = True
    needs_approval: bool = False
    honours_idempotency_key: bool = True

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> str:
        data, size = await asyncio.to_thread(self.workspace.read_bytes, args["path"], MAX_READ_BYTES)
        text = data.decode("utf-8", errors="replace")
        if size > len(data):
            text += f"\n[file truncated: showed {len(data):,} of {size:,} bytes]"
        return text


@dataclass
class DeleteFile:
    workspace: Workspace
    path_parameter: str = "path"  # names an existing file of `workspace`
    name: str = "delete_file"
    description: str = "Delete a file from the workspace. A person must approve each deletion."
    parameters: Mapping[str, Any] = field(default_factory=lambda: PATH_ONLY)
    read_only: bool = False
    needs_approval: bool = True
    honours_idempotency_key: bool = True  # a retried delete whose file is gone reports the earlier attempt's success

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> str:
        try:
            await asyncio.to_thread(self.workspace.delete, args["path"])
        except ToolError:
            if ctx.retry and not await asyncio.to_thread(self.workspace.exists, args["path"]):
                return f"Deleted {args['path']} (the attempt before the run stopped had already deleted it)."
            raise
        return f"Deleted {args['path']}."

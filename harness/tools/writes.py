"""write_file: an atomic, confined write that a retry after a crash does not repeat."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from harness.core.protocols import ToolContext
from harness.errors import ToolError
from harness.tools.workspace import Workspace

PATH_AND_CONTENT: Mapping[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "file path relative to the workspace; its folder must exist"},
        "content": {"type": "string", "description": "the whole new content of the file"},
    },
    "required": ["path", "content"],
    "additionalProperties": False,
}


@dataclass
class WriteFile:
    """Writes are atomic (temp file, fsync, rename); a call whose content already landed is a no-op,
    which is how it honours the idempotency key: the same call retried after a crash never writes twice."""

    workspace: Workspace
    max_bytes: int = 1_000_000
    needs_approval: bool = True
    name: str = "write_file"
    description: str = "Write a text file in the workspace, replacing it if it exists. Its folder must exist."
    parameters: Mapping[str, Any] = field(default_factory=lambda: PATH_AND_CONTENT)
    read_only: bool = False
    honours_idempotency_key: bool = True

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> str:
        path, data = args["path"], args["content"].encode("utf-8")
        if len(data) > self.max_bytes:
            raise ToolError(f"the content is {len(data):,} bytes; the limit per write is {self.max_bytes:,} bytes")
        wrote = await asyncio.to_thread(self.workspace.write_atomic, path, data)
        if not wrote:
            return f"{path} already has this content ({len(data):,} bytes); nothing was written."
        return f"Wrote {len(data):,} bytes to {path}."

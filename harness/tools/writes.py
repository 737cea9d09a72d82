"""write_file and edit_file: atomic, confined writes that a retry after a crash does not repeat."""

from __future__ import annotations

import asyncio
import difflib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from harness.core.protocols import ToolContext
from harness.errors import ToolError
from harness.tools.views import SNIFF_BYTES, binary_kind
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
EDITING: Mapping[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "file path relative to the workspace"},
        "old_text": {
            "type": "string",
            "description": "the exact text to replace, as the file has it; it must occur once",
        },
        "new_text": {"type": "string", "description": "the text that takes its place"},
    },
    "required": ["path", "old_text", "new_text"],
    "additionalProperties": False,
}
NUMBERED = re.compile(r"(?m)^\d+: ")  # how read_file numbers the lines of a window


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


@dataclass
class EditFile:
    """One exact replacement in a text file (as Claude Code's Edit and SWE-agent's str_replace): `old_text`
    must occur exactly once, so the change lands where the model meant it and nowhere else; the rest of
    the file is kept byte for byte. Written like write_file (atomic, confined); a retried call whose
    change already landed reports it instead of failing."""

    workspace: Workspace
    max_bytes: int = 1_000_000
    needs_approval: bool = True
    name: str = "edit_file"
    description: str = (
        "Change part of a text file: the one place where old_text occurs becomes new_text, and nothing else "
        "changes. To add a line, give a line next to it as old_text and both lines as new_text."
    )
    parameters: Mapping[str, Any] = field(default_factory=lambda: EDITING)
    read_only: bool = False
    honours_idempotency_key: bool = True

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> str:
        path, old, new = args["path"], args["old_text"], args["new_text"]
        text = await asyncio.to_thread(self.text_of, path)
        if not old:
            raise ToolError("old_text is empty: give the exact text to replace, as read_file shows it" + at_end(text))
        if old not in text and NUMBERED.search(old):
            old = NUMBERED.sub("", old)  # copied from a window with its line numbers
        count = text.count(old)
        if count == 0:
            if ctx.retry and new and new in text:
                return f"{path} already has this change (the attempt before the run stopped made it)."
            raise ToolError(
                f"old_text is not in {path}: read_file shows what it says; copy the text exactly" + nearest(text, old)
            )
        if count > 1:
            lines = ", ".join(str(n) for n in lines_holding(text, old)[:10])
            raise ToolError(f"old_text occurs {count} times in {path} (lines {lines}): give more of the text "
                            "around the place to change, so that it occurs once")  # fmt: skip
        updated = text.replace(old, new, 1).encode("utf-8")
        if len(updated) > self.max_bytes:
            raise ToolError(f"the file would be {len(updated):,} bytes; the limit is {self.max_bytes:,} bytes")
        await asyncio.to_thread(self.workspace.write_atomic, path, updated)
        line = line_at(text, text.index(old))
        return f"Edited {path} at line {line}: replaced {plural_lines(old)} with {plural_lines(new)}."

    def text_of(self, path: str) -> str:
        data, size = self.workspace.read_bytes(path, self.max_bytes + 1)
        if size > self.max_bytes:
            raise ToolError(f"{path} is {size:,} bytes; edit_file changes files of at most {self.max_bytes:,} bytes")
        if binary_kind(data[:SNIFF_BYTES]) is not None:
            raise ToolError(f"{path} is a binary file; edit_file changes text files")
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ToolError(f"{path} is not UTF-8 text; edit_file changes UTF-8 text files") from exc


MOST_LINES_COMPARED = 5_000  # a longer file gets no suggestion: comparing every line would take too long
SHOWN_CHARS = 200


def at_end(text: str) -> str:
    """How to add text at the end of this file with an edit: its last line, when that line occurs once."""
    last = next((line for line in reversed(text.split("\n")) if line.strip()), None)
    if last is None or text.count(last) != 1 or len(last) > SHOWN_CHARS:
        return ""
    return (f". To add text after the end, give the last line as old_text, {json.dumps(last, ensure_ascii=False)}, "
            "and that line followed by the new text as new_text")  # fmt: skip


def nearest(text: str, old: str) -> str:
    """The file's line most like the first line of old_text (a model's copy with a letter or a space changed)."""
    first = next((line for line in old.split("\n") if line.strip()), "")
    lines = text.split("\n")
    if not first or len(lines) > MOST_LINES_COMPARED:
        return ""
    close = difflib.get_close_matches(first, lines, n=1, cutoff=0.6)
    if not close or len(close[0]) > SHOWN_CHARS:
        return ""
    return f". The line most like it is line {lines.index(close[0]) + 1}: {json.dumps(close[0], ensure_ascii=False)}"


def lines_holding(text: str, old: str) -> list[int]:
    found, at = [], text.find(old)
    while at != -1:
        found.append(line_at(text, at))
        at = text.find(old, at + 1)
    return found


def line_at(text: str, at: int) -> int:
    """The 1-based line on which character `at` of the text stands."""
    return text.count("\n", 0, at) + 1


def plural_lines(text: str) -> str:
    count = len(text.splitlines()) or 1
    return f"{count} line" + ("" if count == 1 else "s") if text else "nothing"

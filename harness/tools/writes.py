"""write_file, append_file and edit_file: atomic, confined writes that a retry after a crash does not repeat."""

from __future__ import annotations

import asyncio
import difflib
import hashlib
import json
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from harness.core.protocols import ToolContext
from harness.core.results import Shown, ToolResult
from harness.core.state import Intent
from harness.errors import ToolError
from harness.fs.sniff import SNIFF_BYTES, binary_kind
from harness.fs.workspace import Workspace
from harness.index.index import WorkspaceIndex
from harness.tools.views import window

PATH_AND_CONTENT: Mapping[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "file path relative to the workspace; its folder must exist"},
        "content": {"type": "string", "description": "the whole new content of the file"},
    },
    "required": ["path", "content"],
    "additionalProperties": False,
}
APPENDING: Mapping[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "file path relative to the workspace; its folder must exist"},
        "content": {"type": "string", "description": "the text to add after the file's last line"},
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


class ChangesOneFile:
    """A tool that changes the one file its `path` names; its result says the file changed, and the workspace
    index (when it has one) reads that file again.

    Exactly once across a kill: before it writes, a change notes what the file holds and what it will hold
    (`ctx.intend`, saved with the run's state). A retry of the call after the run stopped compares the file
    with that note: it holds the change (the write landed before the kill: reported, not made again), or
    what it held before (made now), or something else (a person changed it since: refused, nothing made)."""

    workspace: Workspace
    index: WorkspaceIndex | None

    async def change(self, args: dict[str, Any], ctx: ToolContext) -> str:
        raise NotImplementedError

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        path = "/".join(self.workspace.components(args["path"]))
        if ctx.intended is not None:
            now = await asyncio.to_thread(digest_of, self.workspace, path)
            if now == ctx.intended.after:
                said = f"{path} already has this change (the attempt before the run stopped made it)."
                return ToolResult(said, Shown("changed", (path,)))
            if now != ctx.intended.before:
                raise ToolError(f"{path} changed since this call began, before the run stopped, so the change was "
                                "not made: read it again and make the change anew")  # fmt: skip
        said = await self.change(args, ctx)
        if self.index is not None:
            await asyncio.to_thread(self.index.refresh, [path])
        return ToolResult(said, Shown("changed", (path,)))

    def landing(self, ctx: ToolContext, path: str, before: bytes | None, after: bytes) -> None:
        """Note what the file holds and will hold, before it is written."""
        ctx.intend(Intent("/".join(self.workspace.components(path)), sha(before), sha(after)))


@dataclass
class WriteFile(ChangesOneFile):
    """Writes are atomic (temp file, fsync, rename); a call whose content already landed is a no-op,
    which is how it honours the idempotency key: the same call retried after a crash never writes twice."""

    workspace: Workspace
    max_bytes: int = 1_000_000
    needs_approval: bool = True
    name: str = "write_file"
    description: str = "Write a text file in the workspace, replacing it if it exists. Its folder must exist."
    parameters: Mapping[str, Any] = field(default_factory=lambda: PATH_AND_CONTENT)
    index: WorkspaceIndex | None = None
    read_only: bool = False
    honours_idempotency_key: bool = True
    replaces_whole: bool = True  # a call gives the whole file: made again unread, the rest would be lost

    def unread_advice(self, offered: Collection[str]) -> str:
        """What to call once shown the file a call would have replaced unseen."""
        append = "To add lines at its end, call append_file; to" if "append_file" in offered else "To"
        return f"{append} replace it, call write_file again with the whole new content."

    def reads_first(self, args: dict[str, Any]) -> str | None:
        """The file to read before this call replaces it."""
        return args.get("path")

    async def change(self, args: dict[str, Any], ctx: ToolContext) -> str:
        path, data = args["path"], args["content"].encode("utf-8")
        if len(data) > self.max_bytes:
            raise ToolError(f"the content is {len(data):,} bytes; the limit per write is {self.max_bytes:,} bytes")
        self.landing(ctx, path, await asyncio.to_thread(bytes_or_none, self.workspace, path), data)
        wrote = await asyncio.to_thread(self.workspace.write_atomic, path, data)
        if not wrote:
            return f"{path} already has this content ({len(data):,} bytes); nothing was written."
        return f"Wrote {len(data):,} bytes to {path}."


@dataclass
class AppendFile(ChangesOneFile):
    """Text added at the end of a file (created when missing) on a line of its own, the file keeping its final
    newline if it had one (as AutoGPT's append_to_file and a shell's `>>`): a small model asked to add a line
    cannot copy a whole file back, or an edit's exact neighbouring line, without losing or changing one.
    Written like write_file (atomic, confined, approval); a retried append whose text already ends the file
    is not added again."""

    workspace: Workspace
    max_bytes: int = 1_000_000
    needs_approval: bool = True
    name: str = "append_file"
    description: str = (
        "Add text at the end of a text file in the workspace, as new lines; what the file holds is kept. A file "
        "that does not exist is created; its folder must exist."
    )
    parameters: Mapping[str, Any] = field(default_factory=lambda: APPENDING)
    index: WorkspaceIndex | None = None
    read_only: bool = False
    honours_idempotency_key: bool = True

    async def change(self, args: dict[str, Any], ctx: ToolContext) -> str:
        path, content = args["path"], args["content"]
        if not content.strip("\n"):
            raise ToolError("content is empty: give the text to add at the end of " + path)
        old = await asyncio.to_thread(self.text_or_nothing, path)
        _, content = line_endings(old, "", content)
        newline = "\r\n" if "\r\n" in content or old.endswith("\r\n") else "\n"
        ending = newline if old.endswith("\n") and not content.endswith("\n") else ""
        updated = old + (newline if old and not old.endswith("\n") else "") + content + ending
        existed = await asyncio.to_thread(self.workspace.exists, path)
        self.landing(ctx, path, old.encode("utf-8") if existed else None, updated.encode("utf-8"))
        size = await asyncio.to_thread(rewrite, self.workspace, path, updated, self.max_bytes)
        return f"Added {plural_lines(content.strip(chr(10)))} at the end of {path} (now {size:,} bytes)."

    def text_or_nothing(self, path: str) -> str:
        """The file's text, or "" when there is no file at the path yet."""
        if not self.workspace.exists(path):
            return ""
        return text_in(self.workspace, path, self.max_bytes, "append_file adds to")


@dataclass
class EditFile(ChangesOneFile):
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
    index: WorkspaceIndex | None = None
    read_only: bool = False
    honours_idempotency_key: bool = True
    replaces_whole: bool = False  # a call changes only the text it quotes, found exactly once

    def unread_advice(self, offered: Collection[str]) -> str:
        """What to call once shown the file a call would have edited unseen."""
        return (
            "Call edit_file again with old_text set to only the line or lines to change, copied exactly from "
            "these, and new_text set to what they become."
        )

    def reads_first(self, args: dict[str, Any]) -> str | None:
        """The file to read before this call edits it."""
        return args.get("path")

    async def change(self, args: dict[str, Any], ctx: ToolContext) -> str:
        path, old, new = args["path"], args["old_text"], args["new_text"]
        text = await asyncio.to_thread(text_in, self.workspace, path, self.max_bytes, "edit_file changes")
        if not old:
            raise ToolError("old_text is empty: give the exact text to replace, as read_file shows it" + at_end(text))
        if old == new:
            raise ToolError("old_text and new_text are the same, so nothing would change: new_text is what old_text "
                            "becomes")  # fmt: skip
        old, new = line_endings(text, old, new)
        if old not in text and numbered_as_in(text, path, old):  # copied from a window or a search, numbers and all
            numbered = numbering(path)
            old, new = numbered.sub("", old), numbered.sub("", new)
        count = text.count(old)
        if count == 0:
            raise ToolError(
                f"old_text is not in {path}: read_file shows what it says; copy the text exactly" + nearest(text, old)
            )
        at = text.index(old)
        split = splits_line(text, at, old, new)
        if split:
            raise ToolError(split)
        if count > 1:
            lines = ", ".join(str(n) for n in lines_holding(text, old)[:10])
            raise ToolError(f"old_text occurs {count} times in {path} (lines {lines}): give more of the text "
                            "around the place to change, so that it occurs once")  # fmt: skip
        after = text.replace(old, new, 1)
        self.landing(ctx, path, text.encode("utf-8"), after.encode("utf-8"))
        await asyncio.to_thread(rewrite, self.workspace, path, after, self.max_bytes)
        first, last = line_at(text, at), line_at(after, at + len(new))
        changed = f"Edited {path} at line {first}: replaced {plural_lines(old)} with {plural_lines(new)}."
        start, end = text.rfind("\n", 0, at) + 1, line_end(text, at + len(old))
        gone = removed(text[start:end], after[start : end - len(old) + len(new)])
        return f"{changed}{gone} {around(path, after, first, last)}"


def text_in(workspace: Workspace, path: str, max_bytes: int, changes: str) -> str:
    """A text file's content, for a tool that `changes` (its words: "edit_file changes") such files."""
    data, size = workspace.read_bytes(path, max_bytes + 1)
    if size > max_bytes:
        raise ToolError(f"{path} is {size:,} bytes; {changes} files of at most {max_bytes:,} bytes")
    if binary_kind(data[:SNIFF_BYTES]) is not None:
        raise ToolError(f"{path} is a binary file; {changes} text files")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ToolError(f"{path} is not UTF-8 text; {changes} UTF-8 text files") from exc


DIGEST_BYTES = 64 << 20  # a longer file is compared by its first 64 MB and its size


def sha(data: bytes | None) -> str | None:
    return None if data is None else hashlib.sha256(data).hexdigest()


def bytes_or_none(workspace: Workspace, path: str) -> bytes | None:
    """The file's bytes (its first DIGEST_BYTES), or None when nothing is at the path."""
    if not workspace.exists(path):
        return None
    data, size = workspace.read_bytes(path, DIGEST_BYTES)
    return data if size <= len(data) else data + f"\x00{size}".encode()


def digest_of(workspace: Workspace, path: str) -> str | None:
    return sha(bytes_or_none(workspace, path))


def rewrite(workspace: Workspace, path: str, text: str, max_bytes: int) -> int:
    """Write the changed text of a file atomically, when it stays within `max_bytes`; its size in bytes."""
    data = text.encode("utf-8")
    if len(data) > max_bytes:
        raise ToolError(f"the file would be {len(data):,} bytes; the limit is {max_bytes:,} bytes")
    workspace.write_atomic(path, data)
    return len(data)


def numbered_as_in(text: str, path: str, old: str) -> bool:
    """Whether every line of `old` is a line of the file after its number, as a window or a search shows it
    (`7: port = 1`, `a.ini:7: port = 1`); a text that only begins like a number (`2: x`) is not."""
    lines = text.split("\n")
    found = [numbering(path).match(line) for line in old.split("\n") if line.strip()]
    if not found or not all(found):
        return False
    for line in (line for line in old.split("\n") if line.strip()):
        head = numbering(path).match(line)
        assert head is not None
        number = int(head.group(0).rstrip(": ").rsplit(":", 1)[-1])
        if not (0 < number <= len(lines) and lines[number - 1].rstrip("\r") == line[head.end() :].rstrip("\r")):
            return False
    return True


def line_endings(text: str, old: str, new: str) -> tuple[str, str]:
    """old_text and new_text with the file's line endings: a file of CRLF lines is matched and edited in CRLF
    (a model copies lines without their `\r`, and its new lines would end the file's lines two ways)."""
    if "\r\n" not in text or text.count("\r\n") < text.count("\n") // 2:
        return old, new
    return (crlf(old) if old not in text else old), crlf(new)


def crlf(value: str) -> str:
    return value.replace("\r\n", "\n").replace("\n", "\r\n")


def numbering(path: str) -> re.Pattern[str]:
    """What read_file (`7: `) and search (`docs/a.md:7: `) put before each line of the file they show."""
    return re.compile(rf"(?m)^(?:{re.escape(path)}:)?\d+: ")


AROUND_LINES = 2  # lines shown before and after the ones an edit wrote
AROUND_CHARS = 1_500


def around(path: str, text: str, first: int, last: int) -> str:
    """The lines an edit wrote, with a few either side (as SWE-agent's editor and Claude Code's Edit show
    them): a model that replaced part of a line, or added a line break it did not mean, sees what it did."""
    start = max(1, first - AROUND_LINES)
    shown = window(text, start, last + AROUND_LINES - start + 1, AROUND_CHARS)
    if shown.whole:
        return f"{path} now reads:\n{shown.text}"
    return f"Lines {shown.first:,}-{shown.last:,} now read:\n{shown.text}"


MOST_LINES_COMPARED = 200  # lines like old_text's first that are compared with it, at most
SHOWN_CHARS = 200
MOST_REMOVED_SHOWN = 3  # lines quoted of those an edit removed; the rest are counted


def at_end(text: str) -> str:
    """How to add text at the end of this file with an edit: its last line, when that line occurs once."""
    last = next((line for line in reversed(text.split("\n")) if line.strip()), None)
    if last is None or text.count(last) != 1 or len(last) > SHOWN_CHARS:
        return ""
    return (f". To add text after the end, give the last line as old_text, {json.dumps(last, ensure_ascii=False)}, "
            "and that line followed by the new text as new_text")  # fmt: skip


def line_end(text: str, at: int) -> int:
    """Where the line holding `at` ends (its newline, or the end of the text)."""
    end = text.find("\n", at)
    return len(text) if end < 0 else end


PAIRS = 10_000  # old and new lines of one rewritten block compared pairwise, at most


def removed(old: str, new: str) -> str:
    """The lines an edit took out, named as a diff's minus lines are: of the whole lines it touched (`old`) and
    what they became (`new`), those deleted outright, and in a block rewritten into fewer lines those that
    no new line rewrites (each new line rewrites the old line most like it). An edit that rewrites a line (a
    value changed) removes none; a model that copied a neighbouring line into old_text and left it out of
    new_text has deleted a line it was never asked to touch, and the lines shown after the edit do not say
    which."""
    before = [line.rstrip("\r") for line in old.split("\n")]
    after = [line.rstrip("\r") for line in new.split("\n")]
    gone: list[str] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, before, after, autojunk=False).get_opcodes():
        if tag == "delete":
            gone += before[i1:i2]
        elif tag == "replace" and i2 - i1 > j2 - j1:
            gone += unpaired(before[i1:i2], after[j1:j2])
    gone = [line for line in gone if line.strip()]
    if not gone:
        return ""
    quoted = ", ".join(json.dumps(line[:SHOWN_CHARS], ensure_ascii=False) for line in gone[:MOST_REMOVED_SHOWN])
    more = f" and {len(gone) - MOST_REMOVED_SHOWN:,} more" if len(gone) > MOST_REMOVED_SHOWN else ""
    return f" It removed {plural_lines(chr(10).join(gone))}: {quoted}{more}; if any was to stay, put it back."


def unpaired(olds: list[str], news: list[str]) -> list[str]:
    """The old lines of a block rewritten into fewer that no new line rewrites (each takes the old line most like
    it); past PAIRS comparisons, the old lines beyond the new ones' count."""
    if len(olds) * len(news) > PAIRS:
        return olds[len(news) :]
    taken: set[int] = set()
    for line in news:
        left = [k for k in range(len(olds)) if k not in taken]
        taken.add(max(left, key=lambda k: difflib.SequenceMatcher(None, olds[k], line).quick_ratio()))
    return [line for k, line in enumerate(olds) if k not in taken]


def nearest(text: str, old: str) -> str:
    """The file's line most like the first line of old_text (a model's copy with a letter or a space changed),
    compared only with the lines of about its length that share a word with it (at most MOST_LINES_COMPARED)."""
    first = next((line for line in old.split("\n") if line.strip()), "").strip()
    if not first or len(first) > SHOWN_CHARS:
        return ""
    words = set(first.split())
    lines = text.split("\n")
    candidates = [
        (number, line.strip())
        for number, line in enumerate(lines, start=1)
        if abs(len(line.strip()) - len(first)) <= len(first) // 2 + 2 and words & set(line.split())
    ][:MOST_LINES_COMPARED]
    close = difflib.get_close_matches(first, [line for _, line in candidates], n=1, cutoff=0.6)
    if not close:
        return ""
    number = next(n for n, line in candidates if line == close[0])
    return f". The line most like it is line {number}: {json.dumps(lines[number - 1], ensure_ascii=False)}"


def splits_line(text: str, at: int, old: str, new: str) -> str:
    """Why an edit of `old` (found at `at`) would break a line in two (old_text ends inside a line, new_text ends
    with a line break: the model took a line's beginning for the whole line), or "" when it would not."""
    end = at + len(old)
    if old.endswith("\n") or not new.endswith("\n") or end >= len(text) or text[end] in "\r\n":
        return ""
    line = text[text.rfind("\n", 0, at) + 1 : line_end(text, end)]
    if len(line) > SHOWN_CHARS:
        return ""
    return (f"old_text ends inside line {line_at(text, at)}, {json.dumps(line, ensure_ascii=False)}, and new_text "
            "ends with a line break, so the rest of that line would be left on a line of its own: give the whole "
            "line as old_text")  # fmt: skip


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

"""search: the lines of the workspace's files that match a pattern, as `path:line: text`, bounded.

Confined as read_file is: the files come from the workspace's walk (no link followed, only plain files with
one name) and each is opened the same way, so a link, a pipe or a device swapped in mid-search is refused.
Patterns are RE2's (`patterns.py`), linear in the text. Bounded: at most MAX_FILE_BYTES of each file, at
most `seconds` in all (it then says how far it got), binary files skipped, and the result sized to the
model's window, saying how many matches it left out and where, and how to narrow the search. A pattern that
matches no line is answered with the lines the workspace index ranks most like it (its words in another
form, its identifiers' parts), said not to hold it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import re2

from harness.core.protocols import ToolContext
from harness.core.results import Shown, ToolResult
from harness.errors import ToolError
from harness.fs.patterns import glob_matcher, search_pattern
from harness.fs.sniff import binary_kind
from harness.fs.workspace import Entry, Workspace, within
from harness.index.index import WorkspaceIndex
from harness.tools.roles import OnlyLooks
from harness.tools.views import named, output_chars

MAX_FILE_BYTES = 4 << 20
MAX_FILES = 100_000
PER_FILE = 8  # lines shown of one file before the next file's
PER_FILE_COUNTS = 5  # files whose count of matching lines the first line gives
NO_MATCH = "No line matches "
CHECK_EVERY = 4096  # matches between two looks at the time bound and Stop inside one file
RANKED_LINES = 8  # lines the index ranks like a pattern that matched nothing
LINE_CHARS = 200
DEFINITIONS_SHOWN = 10  # lines that define what matched, shown before the rest (whole names first, then parts)
# A line defines what matched when the match is in the name a declaration keyword introduces (`class
# InvalidVersion`, `export function parse`, `fn main`) or in the key of an assignment or a mapping
# (`__version__ = "24.1"`, `requires-python = ">=3.8"`, `License: MIT`). Fixed patterns, run by RE2 too.
NAME_TAIL = re2.compile(rb"^[\w$.-]*")
DECLARES = re2.compile(
    rb"^\s*(?:@[\w.]+\s+)*(?:(?:export|public|private|protected|internal|static|async|abstract|final|pub|default"
    rb"|extern|inline|virtual|override|sealed|data|open|local)\s+)*(?:class|def|function|func|fn|struct|interface"
    rb"|type|enum|trait|impl|module|object|const|let|var|val|macro|record|namespace|sub|proc)\s+[\w$.]+$"
)
KEY = re2.compile(rb"^\s*[\"']?[\w$.-]+$")  # `a.b = 1` (INI, TOML, properties)
PLAIN_KEY = re2.compile(rb"^\s*[\"']?[\w$-]+$")  # `key: value` (YAML, headers): `a.b.Error: text` is output
ASSIGNED = re2.compile(rb"^[\"']?\s*=(?:[^=]|$)")
MAPPED = re2.compile(rb"^[\"']?\s*:(?:[^:]|$)")
SEARCH_PARAMETERS: Mapping[str, Any] = {
    "type": "object",
    "properties": {
        "pattern": {"type": "string", "description": "the text to look for (matched within one line)"},
        "path": {"type": "string", "description": "a folder or file to search in (default: the whole workspace)"},
        "glob": {"type": "string", "description": "only files whose name matches, e.g. *.py or docs/**/*.md"},
        "regex": {"type": "boolean", "description": "the pattern is a regular expression (default: literal text)"},
    },
    "required": ["pattern"],
    "additionalProperties": False,
}


@dataclass
class Found:
    """What a search found: every matching line's count per file, the lines it can show, what it skipped."""

    lines: dict[str, list[tuple[int, str]]] = field(default_factory=dict)
    whole: list[tuple[str, int, str]] = field(default_factory=list)  # (path, line, text) defining the match itself
    part: list[tuple[str, int, str]] = field(default_factory=list)  # ... defining a longer name that holds it
    counts: dict[str, int] = field(default_factory=dict)
    searched: int = 0
    binary: int = 0
    unreadable: int = 0
    partial: int = 0
    files: int = 0
    stopped: bool = False
    more_files: bool = False  # the folder holds more files than a search covers

    @property
    def defined(self) -> list[tuple[str, int, str]]:
        """The lines that define what matched: whole names first, and of each, the project's own code and
        settings before its tests and its documents (`def echo(` in an example of a guide is not where
        `echo` is defined), each in the order walked."""
        return [*sorted(self.whole, key=lambda d: place(d[0])), *sorted(self.part, key=lambda d: place(d[0]))]


DOCUMENTS = (".md", ".rst", ".txt", ".adoc", ".html", ".htm", ".tex", ".org")
TEST_NAMES = ("test_", "tests_")
TEST_FOLDERS = ("test", "tests", "testing", "spec", "specs", "__tests__")


def place(path: str) -> int:
    """Where a file's definitions rank: the project's code and settings (0), its tests (1), its documents (2)."""
    *folders, name = path.lower().split("/")
    if name.endswith(DOCUMENTS):
        return 2
    stem = name.rsplit(".", 1)[0]
    tests = (
        name.startswith(TEST_NAMES)
        or stem.endswith(("_test", ".test", ".spec"))
        or any(folder in TEST_FOLDERS for folder in folders)
    )
    return 1 if tests else 0


@dataclass
class Search(OnlyLooks):
    workspace: Workspace
    output_chars: int = output_chars(None)
    seconds: float = 10.0
    scope_parameter: str = "path"  # names a folder or a file of `workspace`
    pattern_parameter: str = "pattern"  # the text looked for
    name: str = "search"
    description: str = (
        "Find which files say something: every line of every file that contains a text, as path:line: text. "
        "Use it to find where a name is defined, which file mentions a thing, or whether any file does."
    )
    parameters: Mapping[str, Any] = field(default_factory=lambda: SEARCH_PARAMETERS)
    index: WorkspaceIndex | None = None  # ranks the lines most like a pattern that matched nothing

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return await asyncio.to_thread(self.search, args, lambda: ctx.signal.is_set)

    def search(self, args: dict[str, Any], stop: Callable[[], bool] = lambda: False) -> ToolResult:
        regex = bool(args.get("regex", False))
        pattern = search_pattern(args.get("pattern"), regex)
        matches = glob_matcher(args["glob"]) if args.get("glob") else None
        where = str(args.get("path") or ".")
        entries, more = self.files(where, matches, stop)
        found = self.scan(entries, pattern, within(self.seconds, stop))
        found.more_files = more
        if found.counts or found.stopped or self.index is None:
            return self.written(args, where, found)
        return self.missed(args, where, found, {e.path for e in entries})

    def missed(self, args: dict[str, Any], where: str, found: Found, within: set[str]) -> ToolResult:
        """No line matches: the lines the workspace index ranks most like the pattern (its words in another form,
        its identifiers' parts), when there are any, said not to hold it."""
        assert self.index is not None
        pattern = str(args["pattern"])
        scope = "" if where in (".", "") else f" in {where}"
        scope += f" (files matching {args['glob']})" if args.get("glob") else ""
        missed = f"{NO_MATCH}{pattern!r}{scope} (searched {plural(found.searched, 'file')}{skipped(found)})."
        lines: list[str] = []
        shown: list[str] = []
        for passage in self.index.passages_for(pattern, 20):
            if passage.path not in within:
                continue
            for number, text in self.index.lines_of(passage, pattern, 1):
                lines.append(f"{named(passage.path)}:{number}: {clipped(text.strip())}")
                shown.append(passage.path)
            if len(lines) >= RANKED_LINES or sum(map(len, lines)) > self.output_chars - 400:
                break
        if not lines:
            return ToolResult(missed, Shown("nothing"))
        head = f"{missed} The lines most like it, as the workspace index ranks them (none holds {pattern!r}):"
        return ToolResult("\n".join([head, *lines]), Shown("nothing", tuple(dict.fromkeys(shown))))

    def scan(self, entries: list[Entry], pattern: Any, over: Callable[[], bool]) -> Found:
        """Each file in turn until `over` (the time bound, or Stop) says to stop; checked inside a file too."""
        found = Found(files=len(entries))
        for entry in entries:
            if over():
                found.stopped = True
                break
            self.search_file(entry, pattern, found, over)
            if found.stopped:
                break
        return found

    def files(
        self, where: str, matches: Callable[[str], bool] | None, stop: Callable[[], bool] = lambda: False
    ) -> tuple[list[Entry], bool]:
        """The files a search covers, a folder's (the root's by default; those `matches` takes) or the one file
        named, and whether the folder holds more than MAX_FILES of them."""
        if self.workspace.is_folder(where):
            walked = self.workspace.walk(MAX_FILES, under=where, match=matches, over=stop)
            return walked.entries, walked.more
        return [Entry("/".join(self.workspace.folder_parts(where)), 0)], False

    def search_file(self, entry: Entry, pattern: Any, found: Found, over: Callable[[], bool]) -> None:
        try:
            data, size = self.workspace.read_bytes(entry.path, MAX_FILE_BYTES)
        except ToolError:
            found.unreadable += 1
            return
        if binary_kind(data[:8192]) is not None:
            found.binary += 1
            return
        found.searched += 1
        found.partial += size > len(data)
        line, at, last = 1, 0, 0
        for seen, match in enumerate(pattern.finditer(data)):
            if seen % CHECK_EVERY == CHECK_EVERY - 1 and over():
                found.stopped = True  # what was found so far is shown, and the result says where it stopped
                return
            start = match.start()
            line += data.count(b"\n", at, start)
            at = start
            if line == last:
                continue  # one line, counted once
            last = line
            found.counts[entry.path] = found.counts.get(entry.path, 0) + 1
            shown = found.lines.setdefault(entry.path, [])
            looking = len(found.whole) + len(found.part) < 2 * DEFINITIONS_SHOWN
            if not looking and len(shown) >= PER_FILE:
                continue  # nothing of this line is shown: its text is not needed
            begin = data.rfind(b"\n", 0, start) + 1
            end = data.find(b"\n", start)
            text = data[begin : len(data) if end == -1 else end]
            kind = definition(text, start - begin, match.end() - begin) if looking else None
            parts_left = len(found.part) < DEFINITIONS_SHOWN
            into = found.whole if kind == "whole" else found.part if kind == "part" and parts_left else None
            if into is None and len(shown) >= PER_FILE:
                continue
            words = clipped(text.decode("utf-8", errors="replace").strip())
            if into is not None:
                into.append((entry.path, line, words))
            if len(shown) < PER_FILE:
                shown.append((line, words))

    def written(self, args: dict[str, Any], where: str, found: Found) -> ToolResult:
        pattern = args["pattern"]
        scope = "" if where in (".", "") else f" in {where}"
        scope += f" (files matching {args['glob']})" if args.get("glob") else ""
        notes = skipped(found)
        if not found.counts:
            searched = plural(found.searched, "file")
            return ToolResult(f"{NO_MATCH}{pattern!r}{scope} (searched {searched}{notes})." + stopped(found),
                              Shown("nothing", cut=found.stopped))  # fmt: skip
        total, files = sum(found.counts.values()), len(found.counts)
        first = per_file(found) + (" (the lines that define it first)" if found.defined else "")
        head = f"{plural(total, 'matching line')} in {plural(files, 'file')} for {pattern!r}{scope}{first}:"
        text, shown, cut = self.listed(head, found, notes)
        return ToolResult(text + stopped(found), Shown("found", shown, cut=cut or found.stopped))

    def listed(self, head: str, found: Found, notes: str) -> tuple[str, tuple[str, ...], bool]:
        """The head, then the lines found (those that define it first) as fit, and what was left out; with the
        files whose lines are shown, and whether any matching line was left out."""
        out, used, left = [head], len(head), dict(found.counts)
        defined = {(path, number) for path, number, _ in found.defined}
        rest = [(p, n, t) for p, lines in found.lines.items() for n, t in lines if (p, n) not in defined]
        ordered = [*found.defined, *rest]
        shown: dict[str, None] = {}
        full: set[str] = set()  # files one of whose lines did not fit: the rest of them is left out too
        for path, number, text in ordered:
            entry = f"{named(path)}:{number}: {text}"
            if path in full or used + len(entry) + 200 > self.output_chars:
                full.add(path)
                continue
            out.append(entry)
            shown[path] = None
            used += len(entry) + 1
            left[path] -= 1
        more = {path: n for path, n in left.items() if n}
        if more:
            where_more = ", ".join(f"{p} ({n})" for p, n in sorted(more.items(), key=lambda i: -i[1])[:5])
            others = len(more) - 5
            where_more += f" and {others} other files" if others > 0 else ""
            out.append(f"[{sum(more.values()):,} more matching lines not shown: {where_more}; narrow the search "
                       "with path or glob, or a longer pattern]")  # fmt: skip
        if notes:
            out.append(f"[{notes.removeprefix('; ')}]")
        return "\n".join(out), tuple(shown), bool(more)


def definition(line: bytes, start: int, end: int) -> Literal["whole", "part"] | None:
    """Whether the line defines what matched at [start, end): the match is in the name a declaration keyword
    introduces, or in the key of an assignment or a mapping (see DECLARES, KEY and PLAIN_KEY); "whole" when
    that name is the match itself (`Version` in `class Version(...)`), "part" when a longer name holds it
    (`class _MuslVersion`)."""
    name_end = end + NAME_TAIL.search(line[end:]).end()
    head, rest = line[:name_end], line[name_end:]
    declared = DECLARES.search(head)
    assigned = (KEY.search(head) and ASSIGNED.search(rest)) or (PLAIN_KEY.search(head) and MAPPED.search(rest))
    if not (declared or assigned):
        return None
    before = line[start - 1 : start] if start else b""
    return "whole" if name_end == end and not (before.isalnum() or before in (b"_", b"$", b".", b"-")) else "part"


def clipped(line: str) -> str:
    return line if len(line) <= LINE_CHARS else line[:LINE_CHARS] + " [...]"


def per_file(found: Found) -> str:
    """How many lines matched in each file, most first (as `rg --count`), when several files matched and one of
    them more than once: a count asked of one file is then read off, not added up from lines."""
    if len(found.counts) < 2 or max(found.counts.values()) < 2:
        return ""
    ordered = sorted(found.counts.items(), key=lambda item: (-item[1], item[0]))
    shown = ", ".join(f"{n:,} in {path}" for path, n in ordered[:PER_FILE_COUNTS])
    others = len(ordered) - PER_FILE_COUNTS
    return f" ({shown}" + (f" and {plural(others, 'other file')}" if others > 0 else "") + ")"


def plural(count: int, noun: str) -> str:
    return f"{count:,} {noun}" + ("" if count == 1 else "s")


def skipped(found: Found) -> str:
    parts = []
    if found.binary:
        parts.append(f"{plural(found.binary, 'binary file')} skipped")
    if found.unreadable:
        parts.append(f"{plural(found.unreadable, 'file')} could not be read")
    if found.partial:
        parts.append(f"{plural(found.partial, 'file')} searched in their first {MAX_FILE_BYTES >> 20} MB only")
    if found.more_files:
        parts.append(f"the folder holds more than {MAX_FILES:,} files: the first by path were searched")
    return "".join(f"; {part}" for part in parts)


def stopped(found: Found) -> str:
    if not found.stopped:
        return ""
    done = found.searched + found.binary + found.unreadable
    return (
        f"\n[the search stopped at its time limit after {done:,} of {found.files:,} files; narrow it with path or glob]"
    )

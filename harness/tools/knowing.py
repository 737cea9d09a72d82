"""The tools that answer from the workspace index: where a name is defined and used (find_symbol), a map of the
code fitted to the result (repo_map, as Aider's repository map), what the manifests declare (project_info),
and counts made by a tool rather than added up by a model (count_lines)."""

from __future__ import annotations

import asyncio
import csv
import difflib
import io
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from harness.core.protocols import ToolContext
from harness.core.results import Shown, ToolResult
from harness.errors import ToolError
from harness.fs.patterns import search_pattern
from harness.fs.sniff import SNIFF_BYTES, binary_kind
from harness.index.index import WorkspaceIndex
from harness.index.manifests import Manifest
from harness.index.symbols import Definition
from harness.tools.roles import OnlyLooks
from harness.tools.views import output_chars

NAME_ONLY: Mapping[str, Any] = {
    "type": "object",
    "properties": {"name": {"type": "string", "description": "the name as the code writes it, e.g. parse_config"}},
    "required": ["name"],
    "additionalProperties": False,
}
FOLDER_ONLY: Mapping[str, Any] = {
    "type": "object",
    "properties": {"path": {"type": "string", "description": "a folder to map (default: the whole workspace)"}},
    "additionalProperties": False,
}
NOTHING: Mapping[str, Any] = {"type": "object", "properties": {}, "additionalProperties": False}
COUNTING: Mapping[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "the file to count in"},
        "pattern": {"type": "string", "description": "count only the lines holding this text"},
        "regex": {"type": "boolean", "description": "the pattern is a regular expression (default: literal text)"},
    },
    "required": ["path"],
    "additionalProperties": False,
}
MOST_DEFINITIONS = 10
MOST_USERS = 15
LINE_CHARS = 160
COUNT_BYTES = 64 << 20


def clip(line: str) -> str:
    line = line.strip()
    return line if len(line) <= LINE_CHARS else line[:LINE_CHARS] + " [...]"


def plural(count: int, noun: str) -> str:
    return f"{count:,} {noun}" + ("" if count == 1 else "s")


@dataclass
class FindSymbol(OnlyLooks):
    """Where a name is defined (file, line, kind, the line itself) and which files use it, from tree-sitter's
    parse of the workspace's code; a name nothing defines is answered with the defined names most like it."""

    index: WorkspaceIndex
    symbol_parameter: str = "name"  # a name the code defines
    name: str = "find_symbol"
    description: str = (
        "Find where a function, class, method or type is defined (file and line) and which files use it. "
        "Faster and surer than searching for the name."
    )
    parameters: Mapping[str, Any] = field(default_factory=lambda: NAME_ONLY)

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return await asyncio.to_thread(self.find, str(args["name"]).strip())

    def find(self, name: str) -> ToolResult:
        if not name:
            raise ToolError("name is empty: give the name of a function, class or type as the code writes it")
        definitions = self.index.definitions(name)
        exact = definitions[0][1].name if definitions else name
        definers = {path for path, _ in definitions}
        users = {path: at for path, at in self.index.uses(exact).items() if path not in definers}
        lines = self.defined(name, definitions) + self.used(users, bool(definitions))
        stopped = self.index.symbols().stopped
        if stopped:
            lines.append(f"[the code is too large to parse whole: {stopped}]")
        return ToolResult("\n".join(lines), Shown("symbols", tuple(dict.fromkeys([*definers, *users]))))

    def defined(self, name: str, definitions: list[tuple[str, Definition]]) -> list[str]:
        if not definitions:
            parsed = len(self.index.symbols().by_file)
            alike = difflib.get_close_matches(name, sorted(self.index.defined_names()), n=5, cutoff=0.7)
            like = [f"Names defined here that are like it: {', '.join(alike)}."] if alike else []
            return [f"Nothing in the code defines {name!r} ({plural(parsed, 'code file')} parsed).", *like]
        lines = [f"{definitions[0][1].name} is defined in {plural(len(definitions), 'place')}:"]
        for path, found in definitions[:MOST_DEFINITIONS]:
            lines.append(f"  {path}:{found.line}: {clip(self.line(path, found.line))}  ({found.kind})")
        if len(definitions) > MOST_DEFINITIONS:
            lines.append(f"  [and {len(definitions) - MOST_DEFINITIONS} more]")
        return lines

    @staticmethod
    def used(users: dict[str, list[int]], defined: bool) -> list[str]:
        if not users:
            return ["No other file uses it."] if defined else []
        lines = [f"Used in {plural(len(users), 'other file')}:"]
        for path, at in sorted(users.items())[:MOST_USERS]:
            lines.append(f"  {path}: line{'s' * (len(at) > 1)} {', '.join(map(str, at))}")
        if len(users) > MOST_USERS:
            lines.append(f"  [and {len(users) - MOST_USERS} more files]")
        return lines

    def line(self, path: str, number: int) -> str:
        try:
            data, _ = self.index.workspace.read_bytes(path, 1 << 20)
        except ToolError:
            return ""
        lines = data.decode("utf-8", errors="replace").split("\n")
        return lines[number - 1] if 0 < number <= len(lines) else ""


@dataclass
class RepoMap(OnlyLooks):
    """The code's files, most referred to first (PageRank over which file uses the names another defines, as
    Aider ranks its repository map), each with the lines that define its names, as many as fit."""

    index: WorkspaceIndex
    output_chars: int = output_chars(None)
    name: str = "repo_map"
    description: str = (
        "Show a map of the code: its most important files, each with the functions, classes and types it "
        "defines (line numbers and signatures)."
    )
    parameters: Mapping[str, Any] = field(default_factory=lambda: FOLDER_ONLY)

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return await asyncio.to_thread(self.map, str(args.get("path") or ".").strip().rstrip("/"))

    def map(self, folder: str) -> ToolResult:
        prefix = "" if folder in ("", ".") else folder + "/"
        found = {p: s for p, s in self.index.symbols().by_file.items() if p.startswith(prefix) and s.definitions}
        if not found:
            where = f" in {folder}" if prefix else ""
            return ToolResult(f"No code file{where} defines a function, class or type.", Shown("symbols"))
        rank = file_rank(found)
        out, shown, used = [], [], 0
        for path in sorted(found, key=lambda p: (-rank[p], p)):
            block = [path] + [f"  {d.line}: {clip(self.line_of(path, d.line))}" for d in found[path].definitions[:12]]
            size = sum(len(line) + 1 for line in block)
            if used + size > self.output_chars - 200:
                break
            out += block
            shown.append(path)
            used += size
        if len(shown) < len(found):
            out.append(f"[{plural(len(found) - len(shown), 'more code file')} not shown; map a folder with path]")
        return ToolResult("\n".join(out), Shown("symbols", tuple(shown), cut=len(shown) < len(found)))

    def line_of(self, path: str, number: int) -> str:
        return FindSymbol(self.index).line(path, number)


def file_rank(found: Mapping[str, Any], rounds: int = 20, damping: float = 0.85) -> dict[str, float]:
    """PageRank over the files: a file that uses a name another defines links to it (written out: a few dozen
    files' ranks take a few lines of arithmetic, not a graph library)."""
    defines: dict[str, set[str]] = {}
    for path, symbols in found.items():
        for definition in symbols.definitions:
            defines.setdefault(definition.name, set()).add(path)
    links = {
        path: {target for name in symbols.uses for target in defines.get(name, ()) if target != path}
        for path, symbols in found.items()
    }
    paths = list(found)
    rank = dict.fromkeys(paths, 1 / len(paths))
    for _ in range(rounds):
        flowing = dict.fromkeys(paths, (1 - damping) / len(paths))
        for path, targets in links.items():
            share = rank[path] / len(targets) if targets else rank[path] / len(paths)
            for target in targets or paths:
                flowing[target] += damping * share
        rank = flowing
    return rank


@dataclass
class ProjectInfo(OnlyLooks):
    """What the project's manifests declare, as written: name, version, license, the runtime it needs,
    dependencies and scripts (PKG-INFO, pyproject.toml, setup.cfg, package.json, composer.json, Cargo.toml,
    go.mod, pom.xml, at the top of the folder and one folder down)."""

    index: WorkspaceIndex
    name: str = "project_info"
    description: str = (
        "Show what the project's manifest files (pyproject.toml, package.json, Cargo.toml, go.mod, ...) declare: "
        "name, version, license, required runtime version, dependencies with their versions, scripts."
    )
    parameters: Mapping[str, Any] = field(default_factory=lambda: NOTHING)

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        manifests = await asyncio.to_thread(self.index.manifests)
        if not manifests:
            return ToolResult("No manifest file (pyproject.toml, package.json, Cargo.toml, go.mod, ...) was found.",
                              Shown("facts"))  # fmt: skip
        return ToolResult("\n".join(described(m) for m in manifests), Shown("facts", tuple(m.path for m in manifests)))


def described(manifest: Manifest) -> str:
    facts = [
        f"name {manifest.name}" if manifest.name else "",
        f"version {manifest.version}" if manifest.version else "",
        f"license {manifest.license}" if manifest.license else "",
        f"requires {manifest.runtime[0]} {manifest.runtime[1]}" if manifest.runtime else "",
    ]
    lines = [f"{manifest.path}: " + (", ".join(f for f in facts if f) or "declares no name or version")]
    for label, table in (("dependencies", manifest.dependencies), ("development dependencies",
                                                                   manifest.dev_dependencies)):  # fmt: skip
        if table:
            listed = ", ".join(f"{name} {spec}".strip() for name, spec in list(table.items())[:40])
            more = f" and {len(table) - 40} more" if len(table) > 40 else ""
            lines.append(f"  {label}: {listed}{more}")
    if manifest.scripts:
        lines.append("  scripts: " + "; ".join(f"{k}: {v}" for k, v in list(manifest.scripts.items())[:20]))
    return "\n".join(lines)


@dataclass
class CountLines(OnlyLooks):
    """How many lines a file has, and how many of them hold a text (case-insensitive unless it has a capital;
    RE2 when `regex`); of a CSV or TSV file, how many data rows follow its header."""

    index: WorkspaceIndex
    name: str = "count_lines"
    description: str = (
        "Count the lines of a file, or the lines that contain a text, and the rows of a CSV table: use it "
        "rather than counting lines yourself."
    )
    parameters: Mapping[str, Any] = field(default_factory=lambda: COUNTING)

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return await asyncio.to_thread(self.count, args)

    def count(self, args: dict[str, Any]) -> ToolResult:
        path = str(args["path"])
        data, size = self.index.workspace.read_bytes(path, COUNT_BYTES)
        if binary_kind(data[:SNIFF_BYTES]) is not None:
            raise ToolError(f"{path} is a binary file; count_lines counts the lines of text files")
        text = data.decode("utf-8", errors="replace")
        lines = text.splitlines()
        said = [f"{path} has {plural(len(lines), 'line')}"]
        if args.get("pattern"):
            pattern = search_pattern(args["pattern"], bool(args.get("regex", False)))
            holding = sum(1 for line in lines if pattern.search(line.encode("utf-8")))
            said.append(f"{plural(holding, 'line')} {'holds' if holding == 1 else 'hold'} {args['pattern']!r}")
        if path.lower().endswith((".csv", ".tsv")):
            rows = [r for r in csv.reader(io.StringIO(text), delimiter="\t" if path.lower().endswith(".tsv") else ",")
                    if any(cell.strip() for cell in r)]  # fmt: skip
            said.append(f"as a table: a header and {plural(max(0, len(rows) - 1), 'data row')}")
        partial = f" (in its first {len(data):,} of {size:,} bytes)" if size > len(data) else ""
        return ToolResult("; ".join(said) + partial + ".", Shown("count", (path,)))

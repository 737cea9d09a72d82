"""Ground truth, computed from the workspace's files (sizes, times, contents), never typed in by hand.

Each check kind reads what it needs: a config file is parsed, a changelog's first version found, a
checklist's open items collected, a Makefile's recipe read. A suite's patterns (`files_matching`) are
compiled for RE2, linear in the text, whoever wrote the suite file. A change task's truth holds the files
as they were before the run, so the end state can be compared with them.
"""

from __future__ import annotations

import ast
import configparser
import csv
import hashlib
import io
import json
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import re2

from evals.manifests import FAMILIES, declared
from evals.suite import Check
from evals.symbols import symbols_of
from harness.fs.patterns import glob_matcher
from harness.fs.workspace import Workspace

MAX_TRUTH_BYTES = 1 << 20  # a check reads at most this much of a file
VERSION = re2.compile(r"\b\d+\.\d+(?:\.\d+)?(?:[a-z]+\d*)?\b")


class TruthError(ValueError):
    """A check that cannot be answered from the workspace (a path it names is not there, a key is missing)."""


@dataclass(frozen=True)
class Truth:
    """What a right answer (or end state) holds; each kind fills the fields it needs."""

    names: frozenset[str] = frozenset()  # the files to name: any one of them (all of them: `every`)
    allowed: frozenset[str] = frozenset()  # files an answer may name beside them without being wrong
    every: bool = False
    count: int | None = None
    quote: str | None = None
    expect_yes: bool | None = None
    value: str | None = None  # a value the answer must state
    also: frozenset[str] = frozenset()  # other ways of writing that value (`Apache-2.0`, `Apache 2.0`)
    others: frozenset[str] = frozenset()  # values that are wrong if stated (another file's, another item's)
    items: tuple[str, ...] = ()  # phrases the answer must hold each of
    not_items: tuple[str, ...] = ()  # phrases it must hold none of
    before: dict[str, str] = field(default_factory=dict)  # change tasks: each file's digest before the run


def files_of(workspace: Path) -> dict[str, str]:
    """The workspace's files as its listing shows them (no links, no version-control folders, nothing
    .gitignore names), each as text."""
    jail = Workspace(workspace)
    return {e.path: read_text(workspace, e.path) for e in jail.walk(limit=1_000_000).entries}


def read_text(workspace: Path, name: str) -> str:
    with open(workspace / name, "rb") as handle:
        return handle.read(MAX_TRUTH_BYTES).decode("utf-8", errors="replace")


def digests(workspace: Path) -> dict[str, str]:
    return {
        e.path: hashlib.sha256((workspace / e.path).read_bytes()).hexdigest()
        for e in Workspace(workspace).walk(limit=1_000_000).entries
    }


def pattern(text: str | None) -> Any:
    options = re2.Options()
    options.case_sensitive, options.log_errors = False, False
    try:
        return re2.compile(f"(?m){text or ''}", options)
    except re2.error as exc:
        raise TruthError(f"files_matching {text!r} is not a regular expression RE2 can use") from exc


def needed(files: dict[str, str], path: str | None) -> str:
    if path is None or path not in files:
        raise TruthError(f"the check names {path!r}, which is not a file of the workspace")
    return files[path]


def truth_for(check: Check, workspace: Path) -> Truth:
    files = files_of(workspace)
    kind = check.kind
    if kind in CHANGES:  # what the folder held, and the text of the file to change
        return Truth(before=digests(workspace), quote=files.get(check.path or ""))
    maker = KINDS.get(kind)
    if maker is None:
        raise TruthError(f"no truth for check kind {kind}")
    return maker(check, workspace, files)


def matching_names(check: Check, workspace: Path, files: dict[str, str]) -> Truth:
    found = pattern(check.files_matching)
    names = frozenset(name for name, text in files.items() if found.search(text))
    expect = bool(names) if check.kind == "yes_names_file" else None
    return Truth(names=names, expect_yes=expect, every=check.kind == "names_all")


def defining(check: Check, workspace: Path, files: dict[str, str]) -> Truth:
    """The files that define the name (tree-sitter, evals/symbols.py), within `path` when it names a folder."""
    scope = (check.path or "").rstrip("/")
    within = {n: t for n, t in files.items() if not scope or n.startswith(scope + "/")}
    names = frozenset(symbols_of(within).definers(check.symbol or ""))
    if not names:
        raise TruthError(f"no file defines {check.symbol}")
    return Truth(names=names)


def using(check: Check, workspace: Path, files: dict[str, str]) -> Truth:
    """The files that use the name, other than those that define it (which an answer may name too)."""
    found = symbols_of(files)
    users = found.users(check.symbol or "")
    if not users:
        raise TruthError(f"no file uses {check.symbol} outside its definition")
    return Truth(names=frozenset(users), allowed=frozenset(found.definers(check.symbol or "")), every=True)


def manifest_value(check: Check, workspace: Path, files: dict[str, str]) -> Truth:
    """What the manifest `path` declares: `key` version, runtime (the oldest it supports), dependency (the
    version `target` is required at), or license (its families)."""
    made = declared({check.path or "": needed(files, check.path)})
    if made is None:
        raise TruthError(f"{check.path} is not a manifest that can be read")
    if check.key == "license":
        if not made.licenses:
            raise TruthError(f"{check.path} declares no license")
        return Truth(items=made.licenses, not_items=tuple(f for f in FAMILIES if f not in made.licenses))
    value = {"version": made.version, "runtime": made.runtime}.get(check.key or "")
    if check.key == "dependency":
        value = made.dependencies.get(check.target or "")
    if not value:
        raise TruthError(f"{check.path} declares no {check.key} {check.target or ''}".rstrip())
    bare = value.removeprefix("v")
    return Truth(value=value, also=frozenset({bare} - {value}))


def counting_files(check: Check, workspace: Path, files: dict[str, str]) -> Truth:
    names = [n for n in files if not check.path or n.startswith(check.path.rstrip("/") + "/")]
    if check.glob:
        matches = glob_matcher(check.glob)
        names = [n for n in names if matches(n)]
    return Truth(count=len(names))


def by_size(check: Check, workspace: Path, files: dict[str, str]) -> Truth:
    def measure(name: str) -> float:
        info = (workspace / name).stat()
        return {"largest_file": info.st_size, "smallest_file": -info.st_size}.get(check.kind, info.st_mtime)

    values = {name: measure(name) for name in files}
    top = max(values.values())
    return Truth(names=frozenset(n for n, v in values.items() if v == top))


def quoting(check: Check, workspace: Path, files: dict[str, str]) -> Truth:
    return Truth(quote=needed(files, check.path).strip())


def quoting_line(check: Check, workspace: Path, files: dict[str, str]) -> Truth:
    lines = [line for line in needed(files, check.path).splitlines() if pattern(check.files_matching).search(line)]
    if not lines:
        raise TruthError(f"no line of {check.path} matches {check.files_matching!r}")
    return Truth(quote=lines[0].strip())


def counting_lines(check: Check, workspace: Path, files: dict[str, str]) -> Truth:
    found = pattern(check.files_matching)
    return Truth(count=sum(1 for line in needed(files, check.path).splitlines() if found.search(line)))


def counting_rows(check: Check, workspace: Path, files: dict[str, str]) -> Truth:
    rows = [row for row in csv.reader(io.StringIO(needed(files, check.path))) if any(cell.strip() for cell in row)]
    return Truth(count=max(0, len(rows) - 1))


def config_values(text: str, path: str, key: str) -> list[str]:
    """The values `key` has in a config file, by its format: a dotted key (`server.port`, `project.version`)
    for INI and TOML, a key at any depth for JSON and YAML's `key: value` lines, `KEY=value` otherwise."""
    suffix = path.rsplit(".", 1)[-1].lower() if "." in path else ""
    if suffix in ("ini", "cfg", "bak") or path.endswith((".ini.bak", ".cfg.bak")):
        parser = configparser.ConfigParser(interpolation=None)
        try:
            parser.read_string(text)
        except configparser.Error:
            return []
        section, _, name = key.rpartition(".")
        sections = [section] if section else parser.sections()
        return [parser[s][name] for s in sections if parser.has_option(s, name)]
    if suffix == "toml":
        try:
            value: object = tomllib.loads(text)
        except tomllib.TOMLDecodeError:
            return []
        for part in key.split("."):
            value = value.get(part) if isinstance(value, dict) else None
        return [str(value)] if value is not None and not isinstance(value, dict | list) else []
    if suffix == "json":
        try:
            return [str(v) for v in json_values(json.loads(text), key.rsplit(".", 1)[-1])]
        except ValueError:
            return []
    name = re2.escape(key.rsplit(".", 1)[-1])
    found = re2.compile(rf"(?m)^\s*{name}\s*[:=]\s*(.+?)\s*$")
    return [match.group(1).strip().strip("\"'") for match in found.finditer(text)]


def json_values(value: object, key: str) -> list[object]:
    if isinstance(value, dict):
        return [v for k, v in value.items() if k == key] + [x for v in value.values() for x in json_values(v, key)]
    if isinstance(value, list):
        return [x for v in value for x in json_values(v, key)]
    return []


def config_value(check: Check, workspace: Path, files: dict[str, str]) -> Truth:
    key = check.key or ""
    values = config_values(needed(files, check.path), check.path or "", key)
    if not values:
        raise TruthError(f"{check.path} sets no {key}")
    others = {v for name, text in files.items() if name != check.path for v in config_values(text, name, key)}
    return Truth(value=values[0], others=frozenset(others - {values[0]}))


def latest_version(check: Check, workspace: Path, files: dict[str, str]) -> Truth:
    text = needed(files, check.path)
    headings = [line for line in text.splitlines() if line.lstrip().startswith("#") or line.startswith("v")]
    versions = [m.group(0) for line in headings for m in VERSION.finditer(line)]
    if not versions:
        raise TruthError(f"{check.path} names no version in a heading")
    return Truth(value=versions[0], others=frozenset(versions[1:]) - {versions[0]})


CHECKBOX = re2.compile(r"(?m)^\s*[-*]\s+\[([ xX])\]\s+(.+?)\s*$")


def open_items(check: Check, workspace: Path, files: dict[str, str]) -> Truth:
    items = [(mark, text) for mark, text in CHECKBOX.findall(needed(files, check.path))]
    if not items:
        raise TruthError(f"{check.path} has no checklist")
    return Truth(items=tuple(t for m, t in items if m == " "), not_items=tuple(t for m, t in items if m != " "))


def folder_files(check: Check, workspace: Path, files: dict[str, str]) -> Truth:
    folder = (check.path or "").rstrip("/") + "/"
    names = frozenset(n for n in files if n.startswith(folder))
    if not names:
        raise TruthError(f"no file is under {folder}")
    return Truth(names=names, every=True)


def shared_tokens(check: Check, workspace: Path, files: dict[str, str]) -> Truth:
    """The names (4 characters or more: a letter, and a digit, dot, dash or underscore among them: a host, a
    version, an identifier) both files hold and no other file does."""
    paths = [p.strip() for p in (check.path or "").split(",")]
    tokens = re2.compile(r"[A-Za-z0-9][\w.-]*[A-Za-z0-9]")

    def of(text: str) -> set[str]:
        return {
            t.lower()
            for t in tokens.findall(text)
            if len(t) >= 4 and any(c.isalpha() for c in t) and any(c.isdigit() or c in ".-_" for c in t)
        }

    both = of(needed(files, paths[0])) & of(needed(files, paths[-1]))
    elsewhere = {t for name, text in files.items() if name not in paths for t in of(text)}
    shared = both - elsewhere
    if not shared:
        raise TruthError(f"{' and '.join(paths)} share no word that only they hold")
    return Truth(names=frozenset(shared))


def joined(check: Check, workspace: Path, files: dict[str, str]) -> Truth:
    """A value found in one file (`files_matching`'s group) looked up in another (`target_pattern`, where
    `{value}` stands for it and the group is the answer): e.g. the service that listens on a refused port."""
    found = pattern(check.files_matching).search(needed(files, check.path))
    if found is None or not found.groups():
        raise TruthError(f"no line of {check.path} matches {check.files_matching!r} with a group")
    target = needed(files, check.target)
    template = check.target_pattern or ""
    answer = pattern(template.replace("{value}", re2.escape(found.group(1)))).search(target)
    if answer is None:
        raise TruthError(f"{check.target} has nothing for {found.group(1)}")
    candidates = {m.group(1) for m in pattern(template.replace("{value}", r"[^\n]+?")).finditer(target)}
    return Truth(value=answer.group(1), others=frozenset(candidates - {answer.group(1)}))


def recipe(check: Check, workspace: Path, files: dict[str, str]) -> Truth:
    """A Makefile target's recipe (its tab-indented lines), and the other targets' recipes."""
    recipes: dict[str, list[str]] = {}
    current = None
    for line in needed(files, check.path).splitlines():
        if line.startswith("\t") and current is not None:
            recipes[current].append(line.strip())
        elif (head := re2.match(r"^([\w.-]+)\s*:([^=]|$)", line)) is not None:
            current = head.group(1)
            recipes.setdefault(current, [])
        elif line.strip():
            current = None
    wanted = recipes.get(check.key or "")
    if not wanted:
        raise TruthError(f"{check.path} has no recipe for {check.key}")
    others = {" ".join(lines) for name, lines in recipes.items() if name != check.key and lines}
    return Truth(quote=" ".join(wanted), others=frozenset(others))


def first_heading(check: Check, workspace: Path, files: dict[str, str]) -> Truth:
    for line in needed(files, check.path).splitlines():
        if line.startswith("#"):
            return Truth(quote=line.lstrip("#").strip())
    raise TruthError(f"{check.path} has no heading")


def raising(check: Check, workspace: Path, files: dict[str, str]) -> Truth:
    """What the function `symbol` raises in its own body (parsed, never run), and what else its file raises."""
    name = (check.symbol or "").rsplit(".", 1)[-1]
    sources = [check.path] if check.path else [n for n in files if n.endswith(".py")]
    for path in sources:
        try:
            tree = ast.parse(needed(files, path))
        except (SyntaxError, ValueError):
            continue
        every = raised_in(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == name:
                own = raised_in(node)
                if own:
                    return Truth(value=own[0], others=frozenset(every) - set(own))
    raise TruthError(f"no function {name} that raises an exception")


def raised_in(node: ast.AST) -> list[str]:
    """The exception names a tree raises (`raise X(...)`, `raise X`), in order, each once."""
    found: list[str] = []
    for sub in ast.walk(node):
        if isinstance(sub, ast.Raise) and sub.exc is not None:
            target = sub.exc.func if isinstance(sub.exc, ast.Call) else sub.exc
            label = ast.unparse(target).rsplit(".", 1)[-1]
            if label not in found:
                found.append(label)
    return found


def every_file(check: Check, workspace: Path, files: dict[str, str]) -> Truth:
    return Truth(names=frozenset(files), every=True)


KINDS = {
    "names_file": matching_names,
    "yes_names_file": matching_names,
    "names_all": matching_names,
    "defines": defining,
    "uses": using,
    "manifest_value": manifest_value,
    "license": manifest_value,
    "file_count": counting_files,
    "largest_file": by_size,
    "smallest_file": by_size,
    "newest_file": by_size,
    "quotes_file": quoting,
    "quotes_line": quoting_line,
    "line_count": counting_lines,
    "row_count": counting_rows,
    "config_value": config_value,
    "latest_version": latest_version,
    "open_items": open_items,
    "folder_files": folder_files,
    "shared_word": shared_tokens,
    "joined": joined,
    "recipe": recipe,
    "first_heading": first_heading,
    "reads_every_file": every_file,
    "raises": raising,
}
CHANGES = frozenset(("writes_summary", "sets_value", "appends_line", "deletes_file"))

"""manifest_first: a question about the project itself reads the project's manifest right after the listing."""

from __future__ import annotations

import configparser
import json
import re
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from email.parser import HeaderParser
from typing import Any, ClassVar

from harness.controls.base import Hooks, RunContext, Turn
from harness.controls.digest import words
from harness.controls.read_first import ReadsOneFile
from harness.controls.search_first import calls_of, lists
from harness.errors import ToolError
from harness.fs.workspace import Workspace
from wire.types import ToolChoice


@dataclass(frozen=True)
class Manifest:
    """What a project's manifest declares of it: its name (None when it says none) and the words of its keys."""

    path: str
    name: str | None
    keys: frozenset[str]


def core_metadata(text: str) -> tuple[str | None, list[str]]:
    """A PKG-INFO's name and field names (the built package's metadata, versions resolved)."""
    fields = HeaderParser().parsestr(text)
    return fields.get("Name"), list(fields.keys())


def toml_table(*tables: str) -> Callable[[str], tuple[str | None, list[str]]]:
    """The name and keys of the first of these tables (`project`, `tool.poetry`) a TOML manifest has, with the
    names of its top-level tables (`dependencies`)."""

    def read(text: str) -> tuple[str | None, list[str]]:
        data = tomllib.loads(text)
        for dotted in tables:
            table: Any = data
            for part in dotted.split("."):
                table = table.get(part) if isinstance(table, dict) else None
            if isinstance(table, dict):
                dynamic = [v for v in table.get("dynamic", []) if isinstance(v, str)]
                name = table.get("name")
                return (name if isinstance(name, str) else None), [*table, *dynamic, *data]
        return None, list(data)

    return read


def setup_cfg(text: str) -> tuple[str | None, list[str]]:
    parser = configparser.ConfigParser(interpolation=None)
    parser.read_string(text)
    if not parser.has_section("metadata"):
        return None, []
    return parser.get("metadata", "name", fallback=None), [*parser["metadata"], *parser.sections()]


def json_manifest(text: str) -> tuple[str | None, list[str]]:
    data = json.loads(text)
    if not isinstance(data, dict):
        return None, []
    name = data.get("name")
    return (name if isinstance(name, str) else None), list(data)


# The manifests read, in the order preferred: built metadata first (its version is resolved), then the
# sources each ecosystem's tools read (pip, npm, cargo, composer).
MANIFESTS: Mapping[str, Callable[[str], tuple[str | None, list[str]]]] = {
    "PKG-INFO": core_metadata,
    "pyproject.toml": toml_table("project", "tool.poetry"),
    "setup.cfg": setup_cfg,
    "package.json": json_manifest,
    "Cargo.toml": toml_table("package"),
    "composer.json": json_manifest,
}
MOST_MANIFEST_BYTES = 200_000
PROJECT_WORDS = frozenset(("project", "package", "library"))  # what a person calls the project they are in


def manifests(workspace: Workspace) -> list[Manifest]:
    """The manifests at the top of the workspace that parse, in the order preferred."""
    found = []
    for path, parse in MANIFESTS.items():
        try:
            if not workspace.exists(path):
                continue
            data, _ = workspace.read_bytes(path, MOST_MANIFEST_BYTES)
            name, keys = parse(data.decode("utf-8"))
        except (ToolError, ValueError, configparser.Error, tomllib.TOMLDecodeError, UnicodeDecodeError):
            continue  # not there as a file, too large, or not what its name says: nothing to read first
        found.append(Manifest(path, name, frozenset(words(" ".join(keys).replace("_", " ")))))
    return found


def about_project(question: str, manifest: Manifest) -> bool:
    """Whether the question asks the project itself for something its manifest declares: it names the project
    (by the manifest's name, `-` and `_` alike, or as "the project", "this package") and asks for a word of
    one of its keys (`version`, `requires-python`, `license`, `dependencies`)."""
    text, named = question.lower(), 0
    if manifest.name:
        spelled = "[-_]".join(re.escape(part) for part in re.split(r"[-_]", manifest.name.lower()))
        text, named = re.subn(rf"(?<![\w@/.-]){spelled}(?![\w/-])", " ", text)
    if not named and not PROJECT_WORDS & set(re.findall(r"[a-z]+", text)):
        return False
    asked = words(text.replace("_", " ").replace("-", " ")) - words(" ".join(PROJECT_WORDS))
    return bool(asked & manifest.keys)


@dataclass(frozen=True)
class ManifestFirst(Hooks):
    """The turn after the first listing reads the project's manifest (PKG-INFO, pyproject.toml, setup.cfg,
    package.json, Cargo.toml, composer.json at the top of the folder; the first of them, in that order,
    that declares what is asked), when the question asks the project itself for something a manifest
    declares: it names the project, by the name the manifest gives it or as "the project", and a word of
    one of the manifest's keys (`version`, `requires-python`, `license`, `dependencies`). A small model
    asked which version or which Python a project supports searches for the project's name, which every
    file says, and answers with a number from one of two thousand lines; the manifest says it in one.
    Once a run; only on a server that takes `tool_parameters` (the path is narrowed there); inert when
    another control has chosen the call or the run has read a file already."""

    name: ClassVar[str] = "manifest_first"
    tool_parameters: bool = False  # the server narrows calls by the `tool_parameters` field

    def before_request(self, run: RunContext, turn: Turn) -> None:
        request = turn.request
        if not self.tool_parameters or not request.tools or request.tool_choice not in (None, "required"):
            return
        made = [c["function"] for m in run.state.messages for c in calls_of(m)]
        if len(made) != 1 or not lists(run.tools.get(made[0]["name"])):
            return  # only right after the first look, a listing
        offered = set(turn.left())
        readers = [t for t in run.tools if t.name in offered and t.read_only and isinstance(t, ReadsOneFile)]
        if len(readers) != 1:
            return
        reader = readers[0]
        chosen = next((m for m in manifests(reader.workspace) if about_project(run.state.question, m)), None)
        if chosen is None:
            return
        path = {"type": "object", "properties": {reader.path_parameter: {"enum": [chosen.path]}},
                "required": [reader.path_parameter], "additionalProperties": False}  # fmt: skip
        narrowing = {**dict(request.extra.get("tool_parameters") or {}), reader.name: path}
        choice: ToolChoice = {"type": "function", "function": {"name": reader.name}}
        turn.request = replace(request, tool_choice=choice, extra={**request.extra, "tool_parameters": narrowing})

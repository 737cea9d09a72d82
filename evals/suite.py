"""Suites are data: a JSON file of tasks, how to build their workspace, and the check for each task."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Annotated, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    ValidationError,
    field_validator,
    model_validator,
)

from evals.languages import Language
from evals.project import project
from evals.sources import Archive, source_tree, tree
from evals.workspace import DEFAULT_FILES, LOG_NAMES, family_files, generated_files, write_files
from harness.core.config import ALL_TOOLS, LOOKING_TOOLS
from wire.types import first_error

SUITES = Path(__file__).parent / "suites"
DEFAULT_SUITE = SUITES / "default.json"


class SuiteError(ValueError):
    """A suite file that cannot be used; the message names the file and the bad field."""


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


NAME = r"^[A-Za-z0-9_.-]{1,100}$"  # a suite's name becomes a folder name: one component (and not . or ..)


def inside(path: str) -> str:
    """A path relative to where it is used and inside it: no absolute path, no `..`, no empty component."""
    parts = path.replace("\\", "/").split("/")
    if path.startswith(("/", "~")) or ".." in parts or any(p in ("", ".") for p in parts[:-1]) or ":" in parts[0]:
        raise ValueError(f"{path!r} must be a relative path inside the folder, without '..'")
    return path


class Builder(Strict):
    builder: Literal["default", "generated", "family", "project"]
    seed: int = 0
    files: int = Field(default=3, ge=3, le=5000)  # family, project: how many files
    nested: bool = False  # family: some files in subfolders
    quote: str = "notes.txt"  # family: the file holding a short note (a task asks what it says)

    @field_validator("quote")
    @classmethod
    def relative(cls, value: str) -> str:
        return inside(value)

    @model_validator(mode="after")
    def fits(self) -> Builder:
        if self.builder == "family" and self.files > len(LOG_NAMES):
            raise ValueError(f"a family folder has at most {len(LOG_NAMES)} files")
        return self


class Package(Strict):
    """A package's source distribution from the package index, pinned (evals/sources.py)."""

    package: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
    version: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9.+!-]*$")
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")


class Source(Strict):
    """A project's source archive from a registry (the index, npm, Debian), pinned (evals/sources.py)."""

    registry: Literal["pypi", "npm", "debian"]
    name: str = Field(pattern=r"^[A-Za-z0-9@][A-Za-z0-9._/+-]*$")
    version: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9.+!~:-]*$")
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    path: str = Field(default="", pattern=r"^(?:pool/[A-Za-z0-9._/+~-]+\.deb)?$")
    root: str = Field(default="", pattern=r"^(?:[A-Za-z0-9._+~-]+(?:/[A-Za-z0-9._+~-]+)*)?$")

    def archive(self) -> Archive:
        return Archive(self.registry, self.name, self.version, self.sha256, self.path, self.root)


class Folder(Strict):
    path: str  # relative to the suite file and inside its folder; copied, so no task can change the original

    @field_validator("path")
    @classmethod
    def relative(cls, value: str) -> str:
        return inside(value)


CheckKind = Literal[
    # questions, scored on the answer
    "names_file", "yes_names_file", "names_all", "defines", "file_count", "largest_file", "smallest_file",
    "newest_file", "quotes_file", "quotes_line", "line_count", "row_count", "config_value", "latest_version",
    "open_items", "folder_files", "shared_word", "joined", "recipe", "first_heading", "reads_every_file", "raises",
    "uses", "manifest_value", "license",
    # changes, scored on the folder's end state
    "writes_summary", "sets_value", "appends_line", "deletes_file",
]  # fmt: skip


class Check(Strict):
    kind: CheckKind
    files_matching: str | None = None  # a regular expression (RE2) over file contents or lines
    path: str | None = None  # the file (or folder) the check is about; two files: "a, b"
    key: str | None = None  # a config key (`server.port`), a Makefile target
    symbol: str | None = None  # a function or class name
    glob: str | None = None  # files by name, for a count
    target: str | None = None  # the file a joined value is looked up in
    target_pattern: str | None = None  # how: `{value}` stands for the value, the group is the answer
    value: str | None = None  # a change's value: the new setting, the line to append


def known_tool(name: str) -> str:
    if name not in ALL_TOOLS:
        raise ValueError(f"unknown tool {name!r}; the tools are {', '.join(ALL_TOOLS)}")
    return name


ToolName = Annotated[str, AfterValidator(known_tool)]
READING: tuple[str, ...] = LOOKING_TOOLS


class Task(Strict):
    id: str = Field(pattern=r"^[A-Za-z0-9_.-]+$")
    prompt: str = Field(min_length=1)
    check: Check
    needs: list[ToolName] = Field(default_factory=list)
    tools: list[ToolName] | None = None  # this task's tools, when not the suite's (a change offers writes)
    kind: str | None = None  # the kind of question (a family's), for scores per kind
    language: Language = "en"  # the language the question is asked in


def workspace_kind(value: object) -> str:
    """Which kind of workspace a suite's `workspace` is, by the key it holds (a builder, a package, a folder)."""
    keys = value.keys() if isinstance(value, dict) else vars(value).keys() if hasattr(value, "__dict__") else ()
    return next((key for key in ("package", "registry", "path") if key in keys), "builder")


class Suite(Strict):
    name: str = Field(pattern=NAME)
    description: str = ""
    workspace: Annotated[
        Annotated[Builder, Tag("builder")]
        | Annotated[Package, Tag("package")]
        | Annotated[Source, Tag("registry")]
        | Annotated[Folder, Tag("path")],
        Discriminator(workspace_kind),
    ]
    split: Literal["dev", "test"] | None = None  # a split's suite: which split drew it
    code: str | None = None  # a real project's: the language of its code
    tools: list[ToolName] = Field(default_factory=lambda: list(READING), min_length=1)
    tasks: list[Task] = Field(min_length=1)
    source: Path | None = Field(default=None, exclude=True)

    @field_validator("name")
    @classmethod
    def one_component(cls, value: str) -> str:
        if value in (".", ".."):
            raise ValueError("a suite's name may not be . or ..")
        return value

    def build(self, root: Path) -> Path:
        """A fresh copy of the suite's workspace under `root`."""
        if isinstance(self.workspace, Package):
            pinned = self.workspace
            shutil.copytree(source_tree(pinned.package, pinned.version, pinned.sha256), root, symlinks=True)
            return root
        if isinstance(self.workspace, Source):
            shutil.copytree(tree(self.workspace.archive()), root, symlinks=True)
            return root
        if isinstance(self.workspace, Folder):
            base = (self.source.parent if self.source else Path.cwd()).resolve()
            folder = (base / self.workspace.path).resolve()
            if not folder.is_relative_to(base) or not folder.is_dir():
                raise SuiteError(f"workspace.path {self.workspace.path!r} is not a folder inside {base}")
            shutil.copytree(folder, root, symlinks=True)
            return root
        spec = self.workspace
        if spec.builder == "project":
            made = project(spec.seed, spec.files)
            return write_files(root, made.files, made.mtimes)
        if spec.builder == "family":
            return write_files(root, family_files(spec.seed, spec.files, spec.nested, spec.quote))
        return write_files(root, DEFAULT_FILES if spec.builder == "default" else generated_files(spec.seed))


def load_suite(path: str | Path) -> Suite:
    path = Path(path)
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise SuiteError(f"{path}: no such suite file") from exc
    except json.JSONDecodeError as exc:
        raise SuiteError(f"{path}: not valid JSON ({exc.msg}, line {exc.lineno})") from exc
    try:
        suite = Suite.model_validate(raw)
    except ValidationError as exc:
        raise SuiteError(f"{path}: {first_error(exc)}") from exc
    checks_need = {"quotes_file": "path", "names_file": "files_matching", "yes_names_file": "files_matching"}
    for index, task in enumerate(suite.tasks):
        needed = checks_need.get(task.check.kind)
        if needed and getattr(task.check, needed) is None:
            raise SuiteError(f"{path}: tasks.{index}.check.{needed}: required for a {task.check.kind} check")
    if len({t.id for t in suite.tasks}) != len(suite.tasks):
        raise SuiteError(f"{path}: tasks: two tasks share an id")
    return suite.model_copy(update={"source": path})

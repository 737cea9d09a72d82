"""Suites are data: a JSON file of tasks, how to build their workspace, and the check for each task."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from evals.workspace import DEFAULT_FILES, family_files, generated_files, write_files
from wire.types import first_error

SUITES = Path(__file__).parent / "suites"
DEFAULT_SUITE = SUITES / "default.json"


class SuiteError(ValueError):
    """A suite file that cannot be used; the message names the file and the bad field."""


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Builder(Strict):
    builder: Literal["default", "generated", "family"]
    seed: int = 0
    files: int = Field(default=3, ge=3, le=40)  # family: how many files
    nested: bool = False  # family: some files in subfolders
    quote: str = "notes.txt"  # family: the file holding a short note (a task asks what it says)


class Folder(Strict):
    path: str  # relative to the suite file; copied, so no task can change the original


class Check(Strict):
    kind: Literal["names_file", "file_count", "quotes_file", "reads_every_file", "largest_file", "yes_names_file"]
    files_matching: str | None = None  # a regular expression over file contents
    path: str | None = None


class Task(Strict):
    id: str = Field(pattern=r"^[A-Za-z0-9_.-]+$")
    prompt: str = Field(min_length=1)
    check: Check
    needs: list[Literal["list_files", "read_file"]] = Field(default_factory=list)


ToolName = Literal["list_files", "read_file", "delete_file", "scan_archive"]
READING: tuple[ToolName, ...] = ("list_files", "read_file")


class Suite(Strict):
    name: str
    description: str = ""
    workspace: Annotated[Builder | Folder, Field(union_mode="left_to_right")]
    tools: list[ToolName] = Field(default_factory=lambda: list(READING), min_length=1)
    tasks: list[Task] = Field(min_length=1)
    source: Path | None = Field(default=None, exclude=True)

    def build(self, root: Path) -> Path:
        """A fresh copy of the suite's workspace under `root`."""
        if isinstance(self.workspace, Folder):
            base = self.source.parent if self.source else Path.cwd()
            shutil.copytree(base / self.workspace.path, root, symlinks=True)
            return root
        spec = self.workspace
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

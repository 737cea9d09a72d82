"""look_first: the first turns must call a tool, so the model looks before it answers."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, ClassVar, Protocol, runtime_checkable

from harness.controls.base import Hooks, RunContext, Turn
from harness.controls.unread_paths import MAX_WALK, mentions
from harness.fs.workspace import Workspace
from harness.tools.base import NO_ARGUMENTS
from harness.tools.patterns import glob_matcher
from wire.types import ToolChoice


@runtime_checkable
class ListsFolders(Protocol):
    """A listing over a workspace whose `folder_parameter` names a folder to list, with a `glob` of names."""

    workspace: Workspace
    folder_parameter: str


@dataclass(frozen=True)
class LookFirst(Hooks):
    """The first `turns` turns must call a tool (tool_choice required): small models otherwise announce a
    call in words, or guess, and stop. The first such call goes to the one tool that needs no arguments, if
    there is exactly one: a look around needs no guess. A server that takes `tool_parameters` is told to
    decode that call with no arguments at all (a small model fills a listing's optional folder with a file's
    path it saw in another tool's schema), or, when the question names one folder of the workspace or one
    kind of file by its extension or by a pattern of names (`test_*.py`), and no file, with exactly that
    folder and glob: a small model answers a question about one folder from the first count and the first
    names it sees. So too an optional choice of the listing's (an `enum` value, its default too)
    that the question names as a word: a small model answers with the first line it sees, so the order the
    question asks for comes first."""

    name: ClassVar[str] = "look_first"
    turns: int = 2  # a listing and a read
    tool_parameters: bool = False  # the server narrows calls by the `tool_parameters` field

    def before_request(self, run: RunContext, turn: Turn) -> None:
        request = turn.request
        if not request.tools or request.tool_choice is not None:
            return
        looked = sum(1 for m in run.state.messages if m["role"] == "assistant" and m.get("tool_calls"))
        if looked >= self.turns:
            return
        bare = [t["function"]["name"] for t in request.tools if not t["function"].get("parameters", {}).get("required")]
        choice: ToolChoice = "required"
        extra = request.extra
        if looked == 0 and len(bare) == 1:
            choice = {"type": "function", "function": {"name": bare[0]}}
            if self.tool_parameters:
                arguments = first_look(run.tools.get(bare[0]), run.state.question)
                narrowing = {**dict(extra.get("tool_parameters") or {}), bare[0]: arguments}
                extra = {**extra, "tool_parameters": narrowing}
        turn.request = replace(request, tool_choice=choice, extra=extra)


def first_look(tool: object, question: str) -> Mapping[str, Any]:
    """The arguments the first listing is decoded with: the folder and the kind of file the question names,
    or none."""
    if not isinstance(tool, ListsFolders):
        return NO_ARGUMENTS
    entries, _ = tool.workspace.entries(limit=MAX_WALK)
    if any(mentions(question, e.path) for e in entries):
        return NO_ARGUMENTS  # a file named is read, not listed
    folders = {"/".join(e.path.split("/")[:end]) for e in entries for end in range(1, e.path.count("/") + 1)}
    named = [f for f in folders if names_folder(question, f)]
    globs = [g for g in globs_named(question) if any(map(glob_matcher(g), (e.path for e in entries)))]
    chosen = {tool.folder_parameter: named, "glob": globs, **named_options(tool, question)}
    if any(len(values) > 1 for values in chosen.values()) or not any(chosen.values()):
        return NO_ARGUMENTS
    properties = {key: {"enum": values} for key, values in chosen.items() if values}
    return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}


def named_options(tool: object, question: str) -> dict[str, list[str]]:
    """Per optional parameter that offers a choice (a string `enum`), the values the question holds as words,
    its default among them: a listing asked for its order says which file leads it ("the largest is …"), a
    line the digest repeats last."""
    schema = getattr(tool, "parameters", None)
    if not isinstance(schema, Mapping) or not isinstance(schema.get("properties"), Mapping):
        return {}
    words = set(re.findall(r"[a-z]+", question.lower()))
    required = schema.get("required") or ()
    choices = {
        key: [v for v in spec["enum"] if isinstance(v, str) and v.lower() in words]
        for key, spec in schema["properties"].items()
        if key not in required and isinstance(spec, Mapping) and isinstance(spec.get("enum"), list)
    }
    return {key: values for key, values in choices.items() if values}


# an extension, after a pattern of names (`test_*.py`) or alone (`.py`, `*.py`)
KIND_OF_FILE = re.compile(r"(?<![\w/.*?-])([\w-]*[*?][\w*?-]*)?\.([A-Za-z][A-Za-z0-9]{0,7})(?![\w.-])")


# a language's own extensions, as ripgrep's file types name them (`rg --type-list`), where the language's name
# before a word for files (`Python modules`, `YAML files`) says which files a question is about
LANGUAGE_GLOBS: dict[str, tuple[str, ...]] = {
    "python": ("*.py",), "markdown": ("*.md",), "json": ("*.json",), "toml": ("*.toml",), "yaml": ("*.yaml", "*.yml"),
    "javascript": ("*.js",), "typescript": ("*.ts",), "rust": ("*.rs",), "go": ("*.go",), "java": ("*.java",),
    "ruby": ("*.rb",), "php": ("*.php",), "kotlin": ("*.kt",), "swift": ("*.swift",), "shell": ("*.sh",),
    "bash": ("*.sh",), "css": ("*.css",), "html": ("*.html", "*.htm"), "sql": ("*.sql",), "csv": ("*.csv",),
    "lua": ("*.lua",), "perl": ("*.pl",), "scala": ("*.scala",), "haskell": ("*.hs",), "restructuredtext": ("*.rst",),
}  # fmt: skip
FILES_WORD = r"(?:source\s+|test\s+)?(?:files?|modules?|scripts?|sources?|documents?|programs?|stylesheets?)\b"
LANGUAGE_FILES = re.compile(rf"\b({'|'.join(LANGUAGE_GLOBS)})\s+{FILES_WORD}", re.IGNORECASE)


def globs_named(question: str) -> set[str]:
    """The kinds of file the question names: by an extension alone (`.py`, `*.py`: `*.py`), by a pattern of
    names it writes (`test_*.py`, as written), or by a language's name before a word for files (`Python
    modules`: `*.py`; YAML, which has two, by both)."""
    written = {f"{m.group(1) or '*'}.{m.group(2)}" for m in KIND_OF_FILE.finditer(question)}
    return written | {g for m in LANGUAGE_FILES.finditer(question) for g in LANGUAGE_GLOBS[m.group(1).lower()]}


FOLDER_WORD = r"(?:folder|directory|dir)"


def names_folder(question: str, folder: str) -> bool:
    """Whether the question names this folder: by a path of two names or more (`docs/guide`), or by one name
    written as a folder (`tests/`, in backticks, or followed by the word folder or directory); a lone word such
    as `logs` is too often an ordinary word."""
    name = re.escape(folder)
    alone = rf"(?<![\w/.-]){name}/?(?![\w/-]|\.\w)"
    if "/" in folder:
        return re.search(alone, question) is not None
    written = (
        rf"(?<![\w/.-]){name}/(?![\w/-]|\.\w)",  # tests/
        rf"`{name}/?`",  # `tests`
        rf"{alone}\s+{FOLDER_WORD}\b",  # the tests folder
    )
    return re.search("|".join(written), question, re.IGNORECASE) is not None

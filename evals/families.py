"""Suites written from generated projects: the scaling family (the six kinds of question over folders of 15
to 1,000 files) and the open family (twenty-odd kinds of question and change). `python -m evals suites`
writes them to evals/suites; the tasks name files and keys, and every check computes its truth from the
files when it is scored.

Each kind has several phrasings; a suite picks one per task from its seed, so families written with
other seeds ask in other words about other files.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

from evals.project import PROJECT_FACTS, Planted, project

LOOKING = ["list_files", "read_file", "search"]
WRITING = [*LOOKING, "write_file", "edit_file", "append_file"]
DELETING = [*LOOKING, "delete_file"]

ROTATION = r"log rotation|rotat\w* (?:the |your )?logs"
Make = Callable[[Planted, random.Random], dict[str, Any]]  # a task's check (and needs, tools) from the facts


def task(check: dict[str, Any], needs: list[str], tools: list[str] | None = None) -> dict[str, Any]:
    return {"check": check, "needs": needs, **({"tools": tools} if tools else {})}


PHRASES: dict[str, tuple[str, ...]] = {
    "timeout": (
        "Which file mentions a timeout?",
        "Find the log that records a timeout and tell me its name.",
        "One of these files reports something timing out. Which one?",
        "Where is a timeout logged?",
    ),
    "count": (
        "How many files are in the directory?",
        "How many files are there in total?",
        "Count the files in this folder, subfolders included.",
        "What is the total number of files here?",
    ),
    "quote": (
        "Read {notes} and tell me what it says.",
        "Show me what {notes} says.",
        "What is written in {notes}?",
        "Quote the contents of {notes}.",
    ),
    "every": (
        "List the files and then read each one.",
        "Open every file and summarise each one.",
        "Go through all the files and tell me what each contains.",
    ),
    "largest": (
        "Which file is the largest?",
        "What is the biggest file here?",
        "Which file takes up the most space?",
        "Name the largest file in the folder.",
    ),
    "rotation": (
        "Is there a file about rotating logs?",
        "Does any file talk about log rotation? Which one?",
        "Is log rotation mentioned anywhere? Name the file.",
    ),
    "absent": (
        "Does any file mention {absent}?",
        "Is {absent} reported anywhere in these files?",
        "Which file talks about {absent}?",
    ),
    "config": (
        "What is {key} set to in {config}?",
        "In {config}, what value does {key} have?",
        "Tell me the {key} from {config}.",
    ),
    "python": (
        "What is the minimum Python version this project requires?",
        "Which Python versions does pyproject.toml allow?",
    ),
    "errors": (
        "How many ERROR lines does {error_log} have?",
        "Count the lines of {error_log} that report an ERROR.",
    ),
    "rows": (
        "How many data rows are in {csv}, not counting the header?",
        "How many records does {csv} hold?",
    ),
    "folder": (
        "Which files are in {folder}?",
        "List the files under {folder}/.",
        "What does the {folder} folder contain?",
    ),
    "latest": (
        "What is the latest version in CHANGELOG.md?",
        "Which release is the newest one in the changelog?",
    ),
    "defines": (
        "Which file defines the function {function}?",
        "Where is {function} defined?",
        "In which file is `{function}` implemented?",
    ),
    "klass": ("Which file defines the class {klass}?", "Where is the class `{klass}` declared?"),
    "todo": (
        "Which items in TODO.md are still open?",
        "What is left to do according to TODO.md?",
        "List the unchecked items of the checklist in TODO.md.",
    ),
    "smallest": ("Which file is the smallest?", "What is the smallest file here?"),
    "newest": ("Which file was modified most recently?", "What is the newest file in the folder?"),
    "shared": (
        "What do {first} and {second} have in common?",
        "Which host do {first} and {second} both mention?",
    ),
    "joined": (
        "{refused_log} reports a refused connection. Which service in {services} listens on that port?",
        "Look up the port that {refused_log} says was refused in {services}: which service is it?",
    ),
    "recipe": ("What command does `make test` run?", "What does the `test` target in the Makefile execute?"),
    "quote_line": (
        "Quote the line of {timeout} that reports the timeout.",
        "Which line in {timeout} mentions the timeout? Give it exactly.",
    ),
    "python_files": ("How many Python files are there?", "How many .py files does the project have?"),
    "heading": ("What is the title of CHANGELOG.md?", "What is the first heading in TODO.md?"),
    "mentions_host": ("Which files mention {host}?", "List every file that refers to {host}."),
    "summary": (
        "Write a file SUMMARY.md in {folder} that says in one line what each file there holds.",
        "Create {folder}/SUMMARY.md listing each file of {folder} with a line about what it contains.",
    ),
    "set": ("Change {key} in {config} to {value}.", "Set {key} to {value} in {config}, and change nothing else."),
    "append": (
        "Add the line '- [ ] {item}' to the end of TODO.md.",
        "Append '- [ ] {item}' as a new last line of TODO.md.",
    ),
    "delete": ("Delete {bak}.", "Remove the backup file {bak}."),
}


def six(p: Planted, size: int) -> dict[str, Make]:
    """The six kinds; a summary of every file only where a folder can be read whole."""
    kinds: dict[str, Make] = {
        "timeout": lambda p, r: task({"kind": "names_file", "files_matching": "timeout|timed out"}, ["read_file"]),
        "count": lambda p, r: task({"kind": "file_count"}, ["list_files"]),
        "quote": lambda p, r: task({"kind": "quotes_file", "path": p.notes}, ["read_file"]),
        "largest": lambda p, r: task({"kind": "largest_file"}, ["list_files"]),
        "rotation": lambda p, r: task({"kind": "yes_names_file", "files_matching": ROTATION}, ["read_file"]),
    }
    if size <= 15:
        kinds["every"] = lambda p, r: task({"kind": "reads_every_file"}, ["list_files", "read_file"])
    return kinds


def open_kinds(p: Planted) -> dict[str, Make]:
    """Twenty-odd kinds beyond the six, the changes among them."""
    host = {"kind": "names_all", "files_matching": p.shared_host.replace(".", "\\.")}
    join = r"refused on port (\d+)"
    service = r"^(\w+):\s*\n\s*port:\s*{value}\s*$"
    return {
        "absent": lambda p, r: task(
            {"kind": "yes_names_file", "files_matching": p.absent.removeprefix("a ")}, ["search"]
        ),
        "config": lambda p, r: task(
            {"kind": "config_value", "path": p.config, "key": f"{p.config_section}.{p.config_key}"}, ["read_file"]
        ),
        "python": lambda p, r: task(
            {"kind": "config_value", "path": p.toml, "key": "project.requires-python"}, ["read_file"]
        ),
        "errors": lambda p, r: task(
            {"kind": "line_count", "path": p.error_log, "files_matching": r"\bERROR\b"}, ["read_file"]
        ),
        "rows": lambda p, r: task({"kind": "row_count", "path": p.csv}, ["read_file"]),
        "folder": lambda p, r: task({"kind": "folder_files", "path": p.folder}, ["list_files"]),
        "latest": lambda p, r: task({"kind": "latest_version", "path": p.changelog}, ["read_file"]),
        "defines": lambda p, r: task({"kind": "defines", "symbol": p.function}, ["search"]),
        "klass": lambda p, r: task({"kind": "defines", "symbol": p.klass}, ["search"]),
        "todo": lambda p, r: task({"kind": "open_items", "path": p.checklist}, ["read_file"]),
        "smallest": lambda p, r: task({"kind": "smallest_file"}, ["list_files"]),
        "newest": lambda p, r: task({"kind": "newest_file"}, ["list_files"]),
        "shared": lambda p, r: task({"kind": "shared_word", "path": ", ".join(p.shared_files)}, ["read_file"]),
        "joined": lambda p, r: task(
            {
                "kind": "joined",
                "path": p.refused_log,
                "files_matching": join,
                "target": p.services,
                "target_pattern": service,
            },
            ["read_file"],
        ),
        "recipe": lambda p, r: task({"kind": "recipe", "path": p.makefile, "key": p.make_target}, ["read_file"]),
        "quote_line": lambda p, r: task(
            {"kind": "quotes_line", "path": p.timeout, "files_matching": "timeout|timed out"}, ["read_file"]
        ),
        "python_files": lambda p, r: task({"kind": "file_count", "glob": "*.py"}, ["list_files"]),
        "heading": lambda p, r: task({"kind": "first_heading", "path": p.changelog}, ["read_file"]),
        "mentions_host": lambda p, r: task(host, ["search"]),
        "summary": lambda p, r: task(
            {"kind": "writes_summary", "path": f"{p.folder}/SUMMARY.md", "target": p.folder}, ["write_file"], WRITING
        ),
        "set": lambda p, r: task(
            {
                "kind": "sets_value",
                "path": p.config,
                "key": f"{p.config_section}.{p.config_key}",
                "value": str(r.randint(10_000, 20_000)),
            },
            ["write_file"],
            WRITING,
        ),
        "append": lambda p, r: task(
            {"kind": "appends_line", "path": p.checklist, "value": "- [ ] check the backups"}, ["write_file"], WRITING
        ),
        "delete": lambda p, r: task({"kind": "deletes_file", "path": p.config + ".bak"}, ["delete_file"], DELETING),
    }


def worded(kind: str, made: dict[str, Any], p: Planted, rng: random.Random) -> str:
    check = made["check"]
    words = {
        "notes": p.notes, "absent": p.absent, "key": p.config_key, "config": p.config, "error_log": p.error_log,
        "csv": p.csv, "folder": p.folder, "function": p.function, "klass": p.klass, "first": p.shared_files[0],
        "second": p.shared_files[1], "refused_log": p.refused_log, "services": p.services, "timeout": p.timeout,
        "host": p.shared_host, "value": check.get("value", ""), "item": "check the backups", "bak": p.config + ".bak",
    }  # fmt: skip
    phrase = rng.choice(PHRASES[kind])
    if kind == "heading" and "TODO" in phrase:
        check["path"] = p.checklist
    return phrase.format(**words)


def suite(name: str, description: str, seed: int, files: int, kinds: dict[str, Make]) -> dict[str, Any]:
    planted = project(seed, files).planted
    rng = random.Random(seed * 7919 + files)
    tasks = []
    for kind, make in kinds.items():
        made = make(planted, rng)
        tasks.append({"id": kind, "prompt": worded(kind, made, planted, rng), **made})
    return {
        "name": name,
        "description": description,
        "workspace": {"builder": "project", "seed": seed, "files": files},
        "tools": LOOKING,
        "tasks": tasks,
    }


def scaling(seed: int, files: int) -> dict[str, Any]:
    planted = project(seed, files).planted
    description = f"The six kinds of question in other words, over a generated project of {files} files, nested."
    return suite(f"scale-{files}", description, seed, files, six(planted, files))


def opened(seed: int, files: int) -> dict[str, Any]:
    if files < PROJECT_FACTS:
        raise ValueError(f"an open-family project needs at least {PROJECT_FACTS} files")
    planted = project(seed, files).planted
    description = f"Twenty-odd kinds of question and change beyond the six, over a generated project of {files} files."
    return suite(f"open-{files}", description, seed, files, open_kinds(planted))


SCALES = (15, 60, 250, 1000)
OPEN = (40, 150)


def write(folder: Path) -> list[Path]:
    """Every generated suite as a JSON file in `folder` (the same files on every run)."""
    made = [scaling(10 + index, files) for index, files in enumerate(SCALES)]
    made += [opened(20 + index, files) for index, files in enumerate(OPEN)]
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for data in made:
        path = folder / f"{data['name']}.json"
        path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
        written.append(path)
    return written

"""Every check kind against right answers and near-miss wrong ones, over a generated project: an answer that
explains how to call tools, restates the question, names every file without saying what each holds, says
yes where the truth is no, quotes the wrong line, names two files where one is right, gives another
file's value. Each wrong answer here is one a small model gave or nearly gave; none may pass."""

from __future__ import annotations

import os
import random
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from evals.families import open_kinds, six
from evals.project import Planted, project
from evals.scoring import judge
from evals.suite import Check
from evals.truth import Truth, files_of, truth_for
from evals.workspace import write_files

SEED, FILES = 5, 40
INSTRUCTIONS = 'You can use the `list_files()` function to see the files, then call read_file(path="TODO.md").'


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Planted]:
    made = project(SEED, FILES)
    root = write_files(tmp_path_factory.mktemp("project") / "ws", made.files, made.mtimes)
    return root, made.planted


def check_of(kind: str, planted: Planted) -> Check:
    makers = {**six(planted, 15), **open_kinds(planted)}
    return Check.model_validate(makers[kind](planted, random.Random(1))["check"])


def verdict(root: Path, check: Check, answer: str, read: set[str] | None = None) -> bool:
    files = set(files_of(root))
    return judge(check, truth_for(check, root), answer, files, read if read is not None else files).correct


Answers = Callable[[Planted, Truth], list[tuple[str, bool]]]


def other_log(p: Planted) -> str:
    return p.largest


TABLE: dict[str, Answers] = {
    "timeout": lambda p, t: [
        (f"{p.timeout} mentions a timeout.", True),
        (f"Either {p.timeout} or {other_log(p)}.", False),  # two files where one is right
        (f"{other_log(p)} mentions a timeout.", False),
        ("Which file mentions a timeout?", False),  # the question restated
        (INSTRUCTIONS, False),
    ],
    "absent": lambda p, t: [
        (f"No. No file mentions {p.absent}.", True),
        (f"None of the files mention {p.absent}.", True),
        (f"Yes, {p.timeout} mentions {p.absent}.", False),  # yes where the truth is no
        (f"{p.notes} talks about {p.absent}.", False),
        (INSTRUCTIONS, False),
    ],
    "rotation": lambda p, t: [
        (f"Yes: {p.notes} is about rotating the logs.", True),
        ("No, there is no such file.", False),
        (f"Yes, {p.timeout}.", False),
    ],
    "count": lambda p, t: [
        (f"There are {t.count} files.", True),
        (f"There are {t.count} files, or maybe {(t.count or 0) + 1} files.", False),
        (f"{(t.count or 0) - 1} files.", False),
    ],
    "config": lambda p, t: [
        (f"{p.config_key} is set to {t.value}.", True),
        (f"{p.config_key} is {sorted(t.others)[0]}.", False),  # another file's value (the .bak, the old copy)
        (f"It is {t.value} or {sorted(t.others)[0]}.", False),
        (f"What is {p.config_key} set to in {p.config}?", False),
    ],
    "python": lambda p, t: [
        (f"It needs Python {str(t.value).lstrip('>=')} or newer.", True),
        ("It needs Python 3.6 or newer.", False),
    ],
    "errors": lambda p, t: [
        (f"{p.error_log} has {t.count} ERROR lines.", True),
        (f"{(t.count or 0) + 1} lines report an ERROR.", False),
        ("2026-10-03 12:00:01 ERROR load step failed: code 7", False),  # one of them quoted, not counted
    ],
    "rows": lambda p, t: [
        (f"It holds {t.count} records.", True),
        (f"It has {(t.count or 0) + 1} rows.", False),  # the header counted
    ],
    "folder": lambda p, t: [
        (f"{p.folder} holds " + ", ".join(sorted(t.names)) + ".", True),
        ("It holds " + ", ".join(n.rsplit("/", 1)[-1] for n in sorted(t.names)) + ".", True),
        ("It holds " + ", ".join(sorted(t.names)[:-1]) + ".", False),  # one left out
        ("It holds " + ", ".join([*sorted(t.names), p.notes]) + ".", False),  # a file from elsewhere
    ],
    "latest": lambda p, t: [
        (f"The latest release is {t.value}.", True),
        (f"The latest release is {sorted(t.others)[-1]}.", False),
        (f"{sorted(t.others)[-1]}, and before it {t.value}.", False),
    ],
    "defines": lambda p, t: [
        (f"{p.function} is defined in {p.function_file}.", True),
        (f"It is defined in {p.function_file} and in {p.notes}.", False),
        (f"It is called in {p.notes}.", False),
        (INSTRUCTIONS, False),
    ],
    "todo": lambda p, t: [
        ("Still open: " + "; ".join(t.items) + ".", True),
        ("The items are: " + "; ".join([*t.items, *t.not_items]) + ".", False),  # done ones included
        ("Still open: " + "; ".join(t.items[:-1]) + ".", False),
    ],
    "smallest": lambda p, t: [
        (f"The smallest file is {sorted(t.names)[0]}.", True),
        (f"The smallest file is {p.largest}.", False),
    ],
    "newest": lambda p, t: [
        (f"{sorted(t.names)[0]} was modified last.", True),
        (f"{p.notes} was modified last.", sorted(t.names)[0] == p.notes),
    ],
    "shared": lambda p, t: [
        (f"Both mention the host {sorted(t.names)[0]}.", True),
        ("Both are text files about the project.", False),
    ],
    "joined": lambda p, t: [
        (f"The {t.value} service listens on that port.", True),
        (f"The {sorted(t.others)[0]} service.", False),
        (f"{t.value} or {sorted(t.others)[0]}.", False),
    ],
    "recipe": lambda p, t: [
        (f"`make test` runs `{t.quote}`.", True),
        ("It runs `ruff check .`.", False),  # another target's recipe
        ("What command does `make test` run?", False),
    ],
    "quote_line": lambda p, t: [
        (f'The line is: "{t.quote}"', True),
        ("The line is: INFO request served in 120 ms", False),  # the wrong line
    ],
    "heading": lambda p, t: [(f"The title is {t.quote}.", True), ("The title is Release notes.", False)],
    "mentions_host": lambda p, t: [
        (" and ".join(sorted(t.names)) + " mention it.", True),
        (f"{sorted(t.names)[0]} mentions it.", False),  # one of the two
    ],
    "python_files": lambda p, t: [(f"There are {t.count} Python files.", True), ("There are 3 Python files.", False)],
    "every": lambda p, t: [
        ("Every file: " + ", ".join(sorted(t.names)) + ".", False),  # names every file, says nothing of each
        (INSTRUCTIONS, False),
    ],
}


@pytest.mark.parametrize("kind", sorted(TABLE))
def test_right_answers_pass_and_near_misses_fail(built: tuple[Path, Planted], kind: str) -> None:
    root, planted = built
    check = check_of(kind, planted)
    truth = truth_for(check, root)
    for answer, right in TABLE[kind](planted, truth):
        assert verdict(root, check, answer) is right, f"{kind}: {answer!r} should be {'right' if right else 'wrong'}"


def test_every_question_kind_has_near_misses() -> None:
    planted = project(SEED, FILES).planted
    kinds = {**six(planted, 15), **open_kinds(planted)}
    questions = {k for k, make in kinds.items() if make(planted, random.Random(1))["check"]["kind"]
                 not in ("writes_summary", "sets_value", "appends_line", "deletes_file")}  # fmt: skip
    assert questions - set(TABLE) == {"quote", "klass", "largest"}  # the kinds the older table covers (test_scoring)


def test_a_summary_of_every_file_says_something_of_each(tmp_path: Path) -> None:
    root = write_files(tmp_path / "ws", {"a.log": "worker 7 timed out\n", "b.txt": "rotate the logs\n"})
    check = Check(kind="reads_every_file")
    assert verdict(root, check, "a.log: worker 7 timed out. b.txt: a note to rotate the logs.")
    assert not verdict(root, check, "The files are a.log and b.txt.")
    assert not verdict(root, check, "a.log, b.txt: I read them both.")
    assert not verdict(root, check, "a.log: worker 7 timed out. b.txt: a note.", {"a.log"})  # b.txt never read


CHANGES: dict[str, Callable[[Path, Planted], list[tuple[Callable[[Path], object], bool]]]] = {
    "set": lambda root, p: [
        (lambda r: edit(r, p.config, lambda t: set_in(t, p.config_key, "{v}")), True),
        (lambda r: edit(r, p.config, lambda t: set_in(t, p.config_key, "1")), False),
        (lambda r: edit(r, p.config, lambda t: f"{p.config_key} = {{v}}\n"), False),  # everything else lost
        (lambda r: edit(r, p.config + ".bak", lambda t: set_in(t, p.config_key, "{v}")), False),  # the near-duplicate
        (lambda r: None, False),
    ],
    "append": lambda root, p: [
        (lambda r: edit(r, p.checklist, lambda t: t + "- [ ] check the backups\n"), True),
        (lambda r: edit(r, p.checklist, lambda t: "- [ ] check the backups\n" + t), False),  # at the top
        (lambda r: edit(r, p.checklist, lambda t: "- [ ] check the backups\n"), False),  # written over
        (
            each(
                lambda r: edit(r, p.checklist, lambda t: t + "- [ ] check the backups\n"),
                lambda r: edit(r, p.notes, lambda t: t + "x"),
            ),
            False,
        ),  # and another file touched
    ],
    "delete": lambda root, p: [
        (lambda r: os.remove(r / (p.config + ".bak")), True),
        (lambda r: os.remove(r / p.config), False),  # the original, not the backup
        (each(lambda r: os.remove(r / (p.config + ".bak")), lambda r: os.remove(r / p.notes)), False),
    ],
    "summary": lambda root, p: [
        (lambda r: (r / p.folder / "SUMMARY.md").write_text(summary_of(r, p.folder)), True),
        (lambda r: (r / p.folder / "SUMMARY.md").write_text("SUMMARY.md\n"), False),  # its own name
        (lambda r: (r / p.folder / "SUMMARY.md").write_text(names_only(r, p.folder)), False),
        (lambda r: (r / "SUMMARY.md").write_text(summary_of(r, p.folder)), False),  # in the wrong folder
    ],
}


NEW_ITEM = "- [ ] check the backups\n"


def set_in(text: str, key: str, value: str) -> str:
    line = next(line for line in text.splitlines() if line.startswith(key))
    return text.replace(line, f"{key} = {value}")


def each(*changes: Callable[[Path], object]) -> Callable[[Path], None]:
    """Several changes to the folder, made one after another."""

    def made(root: Path) -> None:
        for change in changes:
            change(root)

    return made


def edit(root: Path, path: str, change: Callable[[str], str]) -> None:
    target = root / path
    target.write_text(change(target.read_text()).replace("{v}", "12345"))


def summary_of(root: Path, folder: str) -> str:
    return "".join(f"- {p.name}: {p.read_text().splitlines()[2][:40]}\n" for p in sorted((root / folder).iterdir()))


def names_only(root: Path, folder: str) -> str:
    return "".join(f"- {p.name}\n" for p in sorted((root / folder).iterdir()))


@pytest.mark.parametrize("kind", sorted(CHANGES))
def test_a_change_is_scored_on_the_folders_end_state(built: tuple[Path, Planted], tmp_path: Path, kind: str) -> None:
    source, planted = built
    check = check_of(kind, planted)
    if kind == "set":
        check = check.model_copy(update={"value": "12345"})
    for index, (change, right) in enumerate(CHANGES[kind](source, planted)):
        root = tmp_path / f"ws{index}"
        shutil.copytree(source, root)
        truth = truth_for(check, root)
        change(root)
        got: Any = judge(check, truth, "Done.", set(), set(), root)
        assert got.correct is right, f"{kind} #{index}: {got.why}"

"""The scorer on hand-written answers, and the failure classes."""

from __future__ import annotations

from pathlib import Path

import pytest

from evals.languages import Language
from evals.scoring import Trajectory, Verdict, classify, judge, names_in, trajectory
from evals.suite import Check
from evals.truth import truth_for
from evals.workspace import default_workspace
from harness.core.registry import Registry
from harness.core.state import new_run
from harness.fs.workspace import Workspace
from harness.tools.catalogue import reading_tools
from tests.harness.helpers import calls

FILES = {"errors.log", "access.log", "notes.txt"}


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return default_workspace(tmp_path / "ws")


def verdict(ws: Path, check: Check, answer: str | None, read: set[str] = frozenset()) -> bool:  # type: ignore[assignment]
    return judge(check, truth_for(check, ws), answer, FILES, set(read)).correct


TIMEOUT = Check(kind="names_file", files_matching="timeout|timed out")


@pytest.mark.parametrize(
    ("answer", "right"),
    [
        ("errors.log mentions a timeout.", True),
        ("The file errors.log says worker 7 timed out after 30000 ms.", True),
        ("errors.log does; access.log and notes.txt do not mention any timeout.", True),
        ("It is errors.log, but access.log does not mention one.", True),
        ("access.log mentions a timeout.", False),
        ("Either errors.log or access.log.", False),  # hedged: names a wrong file as the answer
        ("The file timeout.txt does not exist, so I cannot say.", False),
        ("I could not read the file, so I do not know.", False),
        ("", False),
        (None, False),
    ],
)
def test_which_file_mentions_a_timeout(ws: Path, answer: str | None, right: bool) -> None:
    assert verdict(ws, TIMEOUT, answer) is right


@pytest.mark.parametrize(
    ("answer", "right"),
    [
        ("There are 3 files: access.log, errors.log, notes.txt.", True),
        ("There are three files in the directory.", True),
        ("3", True),
        ("The total number of files in this folder is 3.", True),
        ("The folder holds 3, the listing says.", True),
        ("The total is 4.", False),
        ("The newest is version 3.1.", False),
        ("Only 3.txt.", False),
        ("There are 4 files.", False),
        ("There are two files.", False),
        ("I see 3 files, or maybe 4 files.", False),
        ("Several.", False),
    ],
)
def test_how_many_files(ws: Path, answer: str, right: bool) -> None:
    assert verdict(ws, Check(kind="file_count"), answer) is right


@pytest.mark.parametrize(
    ("answer", "right"),
    [
        ("notes.txt says: Remember to rotate your logs.", True),
        ('It says "remember to rotate your logs"', True),
        ("It says to rotate the logs.", False),
        ("notes.txt is empty.", False),
    ],
)
def test_read_notes(ws: Path, answer: str, right: bool) -> None:
    assert verdict(ws, Check(kind="quotes_file", path="notes.txt"), answer) is right


def test_largest_and_about(ws: Path) -> None:
    largest = Check(kind="largest_file")
    assert verdict(ws, largest, "The largest file is errors.log (393 bytes).")
    assert not verdict(ws, largest, "The largest file is access.log.")
    assert not verdict(ws, largest, "errors.log or notes.txt, I am not sure.")
    about = Check(kind="yes_names_file", files_matching="rotat")
    assert verdict(ws, about, "Yes: notes.txt is about rotating logs.")
    assert not verdict(ws, about, "No, there is no such file.")
    assert not verdict(ws, about, "Yes, errors.log.")
    nothing = Check(kind="yes_names_file", files_matching="kubernetes")
    assert verdict(ws, nothing, "No, there is no file about that.")
    assert not verdict(ws, nothing, "Yes: notes.txt.")


def test_read_each_needs_every_file_read_and_reported(ws: Path) -> None:
    every = Check(kind="reads_every_file")
    answer = "access.log: requests. errors.log: a timeout. notes.txt: rotate logs."
    assert verdict(ws, every, answer, FILES)
    assert not verdict(ws, every, answer, {"errors.log", "notes.txt"})
    assert not verdict(ws, every, "errors.log: a timeout.", FILES)


def test_the_trajectory_flags_unknown_tools_bad_arguments_and_repeats(ws: Path) -> None:
    state = new_run("q")
    state.messages += [
        calls(
            ("a", "list_files", {}),
            ("b", "read_file", {"path": "notes.txt"}),
            ("c", "read_file", {"path": "notes.txt"}),
        ),
        calls(("d", "delete_everything", {}), ("e", "read_file", {"file": 3})),
    ]
    path = trajectory(state, Registry(reading_tools(Workspace(ws))), ["list_files", "read_file"])
    assert path.needed_called and path.unknown_tools == ["delete_everything"]
    assert path.invalid_args == 1 and path.repeated_calls == 1 and not path.sound


@pytest.mark.parametrize(
    ("status", "source", "reason", "right", "why", "unknown", "invalid", "failure"),
    [
        ("completed", None, "the model answered", True, "names the right file", [], 0, None),
        ("completed", None, "the model answered", False, "no answer", [], 0, "no_answer"),
        ("completed", None, "the model answered", False, "names access.log", [], 0, "wrong_answer"),
        ("completed", None, "the model answered", False, "names access.log", ["rm"], 0, "unknown_tool"),
        ("completed", None, "the model answered", False, "names access.log", [], 2, "bad_tool_args"),
        ("max_turns_exceeded", None, "reached the turn cap of 8", False, "no answer", [], 0, "max_turns"),
        ("budget_exceeded", None, "spent", False, "no answer", [], 0, "budget"),
        ("interrupted", None, "deadline of 300s reached", False, "no answer", [], 0, "timeout"),
        ("failed", "provider", "provider answered 500", False, "no answer", [], 0, "provider_error"),
    ],
)
def test_failure_classes(
    status: str,
    source: str | None,
    reason: str,
    right: bool,
    why: str,
    unknown: list[str],
    invalid: int,
    failure: str | None,
) -> None:
    state = new_run("q")
    state.status, state.error_source, state.reason = status, source, reason  # type: ignore[assignment]
    path = Trajectory([], True, invalid, unknown, 0)
    assert classify(state, Verdict(right, why), path) == failure


NESTED = {"dist/app.js", "dist/app.js.map", "app.js", "lib.app.js", "src/dist/app.js"}


@pytest.mark.parametrize(
    ("language", "answer"),
    [
        ("en", "The largest file is dist/app.js.map (82,313 bytes)."),
        ("es", "El fichero más grande es dist/app.js.map, con 82,313 bytes."),
        ("de", "Die größte Datei ist dist/app.js.map."),
        ("zh", "dist/app.js.map占用的磁盘空间最多。"),
        ("ru", "Самый большой файл — `dist/app.js.map`."),
    ],
)
def test_a_longer_name_is_not_read_as_the_shorter_one_it_starts_with(language: Language, answer: str) -> None:
    """Naming the source map is not naming the script beside it, in any language the answer is in."""
    assert names_in(answer, NESTED, language)[0] == {"dist/app.js.map"}


@pytest.mark.parametrize(
    ("answer", "affirmed"),
    [
        ("The largest file is dist/app.js.", {"dist/app.js"}),  # a full stop ends the sentence, not the name
        ("It is ./dist/app.js, 82 bytes.", {"dist/app.js"}),
        ("It is src/dist/app.js.", {"src/dist/app.js"}),  # not also the root's dist/app.js
        ("It is lib.app.js.", {"lib.app.js"}),
        ("app.js and dist/app.js.map", {"app.js", "dist/app.js.map"}),
    ],
)
def test_a_name_inside_a_longer_path_or_name_is_not_named(answer: str, affirmed: set[str]) -> None:
    assert names_in(answer, NESTED)[0] == affirmed

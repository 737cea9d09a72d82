"""Suite files: the default and generated suites load; a bad one gets a message naming the field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evals.suite import DEFAULT_SUITE, SUITES, SuiteError, load_suite
from evals.truth import truth_for


def write(tmp_path: Path, data: object) -> Path:
    path = tmp_path / "suite.json"
    path.write_text(json.dumps(data) if not isinstance(data, str) else data)
    return path


GOOD = {
    "name": "x",
    "workspace": {"builder": "default"},
    "tasks": [{"id": "t", "prompt": "How many files?", "check": {"kind": "file_count"}}],
}


def test_the_shipped_suites_load_and_their_answers_differ(tmp_path: Path) -> None:
    default, generated = load_suite(DEFAULT_SUITE), load_suite(SUITES / "generated.json")
    assert [t.prompt for t in default.tasks][:2] == [
        "Which file mentions a timeout?",
        "How many files are in the directory?",
    ]
    assert len(default.tasks) == len(generated.tasks) == 6
    a, b = default.build(tmp_path / "a"), generated.build(tmp_path / "b")
    for task_a, task_b in zip(default.tasks, generated.tasks, strict=True):
        assert truth_for(task_a.check, a) != truth_for(task_b.check, b), task_a.id


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ("{oops", "not valid JSON"),
        ({**GOOD, "name": 3}, "name: Input should be a valid string"),
        ({**GOOD, "tasks": []}, "tasks: List should have at least 1 item"),
        ({**GOOD, "workspace": {"builder": "cloud"}}, "workspace"),
        ({**GOOD, "tasks": [{"id": "t", "prompt": "p", "check": {"kind": "vibes"}}]}, "tasks.0.check.kind"),
        (
            {**GOOD, "tasks": [{"id": "t", "prompt": "p", "check": {"kind": "quotes_file"}}]},
            "tasks.0.check.path: required",
        ),
        ({**GOOD, "tasks": [{"id": "t", "prompt": "", "check": {"kind": "file_count"}}]}, "tasks.0.prompt"),
        ({**GOOD, "tasks": [{"id": "t", "prompt": "p", "check": {"kind": "file_count"}, "extra": 1}]}, "tasks.0.extra"),
        ({**GOOD, "tasks": GOOD["tasks"] * 2}, "two tasks share an id"),  # type: ignore[operator]
    ],
)
def test_a_bad_suite_names_the_file_and_the_field(tmp_path: Path, data: object, message: str) -> None:
    path = write(tmp_path, data)
    with pytest.raises(SuiteError) as caught:
        load_suite(path)
    assert str(caught.value).startswith(str(path)) and message in str(caught.value)


def test_a_suite_over_a_folder_copies_it(tmp_path: Path) -> None:
    folder = tmp_path / "files"
    folder.mkdir()
    (folder / "a.txt").write_text("hello")
    suite = load_suite(write(tmp_path, {**GOOD, "workspace": {"path": "files"}}))
    copy = suite.build(tmp_path / "copy")
    assert (copy / "a.txt").read_text() == "hello" and copy != folder
    with pytest.raises(SuiteError, match="no such suite file"):
        load_suite(tmp_path / "missing.json")


def test_a_workspace_is_never_built_over_another(tmp_path: Path) -> None:
    load_suite(DEFAULT_SUITE).build(tmp_path / "ws")
    with pytest.raises(FileExistsError, match="new folder"):
        load_suite(SUITES / "generated.json").build(tmp_path / "ws")

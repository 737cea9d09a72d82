"""Suite files: the default and generated suites load; a bad one gets a message naming the field."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

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
        ({**GOOD, "name": "../escape"}, "name: String should match pattern"),
        ({**GOOD, "name": ".."}, "name: Value error, a suite's name may not be"),
        ({**GOOD, "name": "/tmp/abs"}, "name: String should match pattern"),
        ({**GOOD, "workspace": {"builder": "family", "quote": "../../outside.txt"}}, "must be a relative path"),
        ({**GOOD, "workspace": {"builder": "family", "quote": "/etc/owned"}}, "must be a relative path"),
        ({**GOOD, "workspace": {"path": "/etc"}}, "must be a relative path"),
        ({**GOOD, "workspace": {"path": "../.."}}, "must be a relative path"),
        ({**GOOD, "workspace": {"builder": "family", "files": 41}}, "at most 18 files"),
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


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(name=st.text(max_size=12), quote=st.text(max_size=24), folder=st.text(max_size=24))
def test_no_suite_file_writes_or_reads_outside_its_folders(
    tmp_path_factory: Any, name: str, quote: str, folder: str
) -> None:
    """Whatever a suite file names (its name, a family's note, a folder to copy), the workspace is built inside
    the root given and only a folder inside the suite file's own is read."""
    top = tmp_path_factory.mktemp("suite")
    (top / "suites").mkdir()
    (top / "outside.txt").write_text("keep")
    for data in (
        {**GOOD, "name": name or "x", "workspace": {"builder": "family", "quote": quote or "n.txt"}},
        {**GOOD, "name": name or "x", "workspace": {"path": folder or "f"}},
    ):
        path = top / "suites" / "s.json"
        path.write_text(json.dumps(data))
        try:
            suite = load_suite(path)
            suite.build(top / "out" / suite.name / "ws")
        except (SuiteError, OSError, ValueError):
            pass
        made = [p for p in top.rglob("*") if not p.is_relative_to(top / "out") and not p.is_relative_to(top / "suites")]
        assert made == [top / "outside.txt"] and (top / "outside.txt").read_text() == "keep"
        for built in (top / "out").rglob("*") if (top / "out").exists() else []:
            assert built.resolve().is_relative_to((top / "out").resolve())

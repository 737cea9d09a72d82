"""python -m evals compare: the tasks whose outcome changed between two results, first and starred, a task one
side lacks shown as absent, and a file that is not a summary refused naming it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evals.compare import compare, write


def row(task: str, correct: bool, provider: str = "local") -> dict[str, Any]:
    return {"provider": provider, "task": task, "correct": correct, "turns": 3, "prompt_tokens": 900,
            "completion_tokens": 100, "wall_ms": 1500.0}  # fmt: skip


def summary(path: Path, *rows: dict[str, Any]) -> Path:
    path.write_text(json.dumps({"results": list(rows)}))
    return path


def test_changed_outcomes_come_first_starred_and_an_absent_task_counts_as_changed(tmp_path: Path) -> None:
    a = summary(tmp_path / "a.json", row("largest", True), row("timeout", True), row("count", False))
    b = summary(tmp_path / "b.json", row("largest", True), row("timeout", False), row("count", False), row("new", True))
    lines = compare(a, b).splitlines()
    assert lines[2] == "2 of 4 task outcomes differ"
    body = lines[4:]
    assert [line[:1] for line in body] == ["*", "*", " ", " "]
    assert (
        "timeout" in body[0] and "A: 1/1 right, 3.0 turns, 1,000 tok, 1,500ms" in body[0] and "B: 0/1 right" in body[0]
    )
    assert "new" in body[1] and "A: (absent)" in body[1]


def test_trials_are_summed_per_task(tmp_path: Path) -> None:
    path = summary(tmp_path / "s.json", row("largest", True), row("largest", False), row("largest", True))
    assert "A: 2/3 right" in compare(path, path)


@pytest.mark.parametrize("content", ["not json", json.dumps({"providers": {}})])
def test_a_file_that_is_not_a_summary_is_refused_naming_it(tmp_path: Path, content: str) -> None:
    path = tmp_path / "x.json"
    path.write_text(content)
    with pytest.raises(ValueError, match=rf"{path}: (cannot read a summary.json|not an eval summary)"):
        compare(path, path)
    with pytest.raises(ValueError, match="cannot read"):
        compare(tmp_path / "missing.json", path)


def test_written_to_a_file_it_is_headed_by_the_command_revision_and_cpu(tmp_path: Path) -> None:
    a = summary(tmp_path / "a.json", row("largest", True))
    b = summary(tmp_path / "b.json", row("largest", False))
    text = write(a, b, tmp_path / "out" / "compare.md", "python -m evals compare a.json b.json").read_text()
    title, blank, header, blank2, *body = text.splitlines()
    assert title == f"# {a} beside {b}" and blank == blank2 == ""
    assert header.startswith("Written by `python -m evals compare a.json b.json` at git revision `")
    assert "\n".join(body) == compare(a, b)

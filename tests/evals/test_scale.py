"""python -m evals scale: per folder size, right answers and median cost per task; the growth from the smallest
folder to the largest over the kinds of question both ask; a suite with no size refused naming it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evals.__main__ import main


def row(task: str, correct: bool, tokens: int, wall_ms: float, model: str = "m") -> dict[str, Any]:
    return {"provider": "local", "model": model, "task": task, "correct": correct, "turns": 3,
            "prompt_tokens": tokens, "completion_tokens": 50, "wall_ms": wall_ms, "failure": None if correct
            else "wrong_answer", "why": "" if correct else "names a.log, which is not the answer"}  # fmt: skip


def run_folder(root: Path, suites: dict[str, list[dict[str, Any]]]) -> Path:
    for suite, rows in suites.items():
        (root / suite).mkdir(parents=True)
        data = {"suite": suite, "command": f"python -m evals run --suite {suite}", "results": rows}
        (root / suite / "summary.json").write_text(json.dumps(data))
    return root


def test_growth_is_measured_over_the_tasks_both_sizes_ask(tmp_path: Path) -> None:
    # The small folder also asks "every" (a costly read of every file); the large one does not, so the
    # growth must leave it out, or a large folder would look cheaper than it is.
    run = run_folder(
        tmp_path / "run",
        {
            "scale-15": [
                row("count", True, 1000, 2000),
                row("largest", True, 3000, 4000),
                row("every", True, 90000, 99000),
            ],
            "scale-1000": [row("count", True, 2000, 3000), row("largest", False, 9000, 16000)],
        },
    )
    out = tmp_path / "docs" / "scale.md"
    assert main(["scale", str(run), "--out", str(out)]) == 0
    text = out.read_text()
    assert "| m | 15 | 3/3 | 3 | 3,000 | 4.0 s |" in text  # medians over all of a size's tasks
    assert "| m | 1,000 | 1/2 | 3 | 5,500 | 9.5 s |" in text
    # shared tasks: 15 files -> tokens median 2,000, wall 3.0 s; 1,000 files -> 5,500 and 9.5 s
    assert "over 2 shared tasks: tokens read 2.75x, wall-clock 3.17x." in text
    assert "- m, 1,000 files, largest: wrong_answer (names a.log, which is not the answer)" in text
    assert "`python -m evals run --suite scale-15`" in text and "`python -m evals run --suite scale-1000`" in text
    assert text.index("| m | 15 |") < text.index("| m | 1,000 |")
    assert out.with_suffix(".png").stat().st_size > 0
    assert "[m, 15 files](../run/scale-15/report.md)" not in text  # no report beside the summary: no link
    (run / "scale-15" / "report.md").write_text("# the run's own report")
    assert main(["scale", str(run), "--out", str(out)]) == 0
    assert "[m, 15 files](../run/scale-15/report.md)" in out.read_text()


def test_a_suite_whose_folder_has_no_size_is_refused_by_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = run_folder(tmp_path / "run", {"default": [row("count", True, 1000, 2000)]})
    assert main(["scale", str(run), "--out", str(tmp_path / "s.md")]) == 2
    assert "default" in capsys.readouterr().err
    assert not (tmp_path / "s.md").exists()


def test_a_folder_without_runs_is_an_error_not_an_empty_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["scale", str(tmp_path), "--out", str(tmp_path / "s.md")]) == 2
    assert "no summary.json" in capsys.readouterr().err

"""python -m evals rescore: a split's recorded answers judged again by today's scorer from the same draw, the
run's own command and manifest kept; a change task keeps its verdict; a summary the draw no longer holds is
refused."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest

from evals.rescore import rescore
from evals.runner import TaskResult
from evals.splits import split_suites
from evals.truth import CHANGES, truth_for

RUN = "python -m evals split --model m --seed 4 --generated 1 --real 0"


def recorded(tmp_path: Path) -> tuple[Path, list[dict[str, Any]]]:
    """A summary as `evals split` writes it, whose every run is marked right, with a wrong answer or
    with the right count, as a scorer that let too much through would have left it."""
    suite = split_suites("test", 4, generated=1, real=0)[0]
    workspace = suite.build(tmp_path / "ws")
    rows = []
    for task in suite.tasks:
        truth = truth_for(task.check, workspace)
        answer = f"{truth.count}" if task.check.kind == "file_count" else "Banana."
        result = TaskResult(
            run_id=task.id, status="completed", reason=None, resumable=False, answer=answer, turns=2,
            tool_runs=["list_files"], prompt_tokens=10, completion_tokens=2, cached_tokens=0, cost_usd=None,
            child_prompt_tokens=0, child_completion_tokens=0, child_cost_usd=None, interruption=None, pending=[],
            wall_ms=1.0, controls="tiny", provider="m", model="m", task=task.id, prompt=task.prompt,
            suite=suite.name, kind=task.kind or task.id, language=task.language, correct=True, why="(old)",
            trajectory={"tools_called": ["list_files"], "needed_called": True, "invalid_args": 0,
                        "unknown_tools": [], "repeated_calls": 0, "sound": True},
        )  # fmt: skip
        rows.append({k: v for k, v in asdict(result).items() if k not in ("turn_log", "messages")})
    out = tmp_path / "split"
    out.mkdir()
    summary = {"split": "test", "seed": 4, "languages": ["en", "es", "de", "zh", "ru"], "generated": 1, "real": 0,
               "command": RUN, "manifest": {"git_revision": "0123abc", "cpu": "Some CPU", "cores": 2},
               "results": rows}  # fmt: skip
    (out / "summary.json").write_text(json.dumps(summary))
    return out, rows


def test_recorded_answers_are_judged_again_and_the_run_stays_named(tmp_path: Path) -> None:
    out, _ = recorded(tmp_path)
    checks = {t.id: t.check.kind for t in split_suites("test", 4, generated=1, real=0)[0].tasks}
    (report, summary_path), changed = rescore(out, "python -m evals rescore split")
    summary = json.loads(summary_path.read_text())
    questions = [r for r in summary["results"] if checks[r["task"]] not in CHANGES]
    changes = [r for r in summary["results"] if checks[r["task"]] in CHANGES]
    assert questions and changes
    for row in questions:  # "Banana." is wrong everywhere; the bare right count is right
        assert row["correct"] is (checks[row["task"]] == "file_count"), row
        assert row["failure"] == (None if row["correct"] else "wrong_answer") and row["why"] != "(old)"
    assert all(r["correct"] and r["why"] == "(old)" for r in changes)  # the end state is not recorded: kept
    assert changed == sum(not r["correct"] for r in questions)
    assert summary["command"] == RUN and summary["manifest"]["git_revision"] == "0123abc"
    assert summary["rescored_by"] == "python -m evals rescore split" and summary["seed"] == 4
    text = report.read_text()
    assert "Written by `python -m evals rescore split`" in text
    assert f"recorded by `{RUN}` at git revision `0123abc`" in text


def test_a_summary_the_draw_no_longer_holds_is_refused_and_left_as_it_was(tmp_path: Path) -> None:
    out, _ = recorded(tmp_path)
    data = json.loads((out / "summary.json").read_text())
    data["results"][0]["prompt"] = "A question this seed never drew?"
    (out / "summary.json").write_text(json.dumps(data))
    before = (out / "summary.json").read_text()
    with pytest.raises(ValueError, match="no longer holds"):
        rescore(out, "python -m evals rescore split")
    assert (out / "summary.json").read_text() == before and not (out / "report.md").exists()

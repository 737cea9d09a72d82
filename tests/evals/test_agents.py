"""python -m evals.agents' table: a row per way, read from the log Inspect wrote of the suite's run."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import AppServer


def test_a_row_counts_the_right_answers_the_model_turns_and_the_wrong_ones_by_class(
    scripted: AppServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from inspect_ai import eval as inspect_eval

    from evals.agents import row
    from evals.inspect_tasks import file_tasks

    monkeypatch.setenv("SCRIPTED_BASE_URL", scripted.base_url)
    monkeypatch.setenv("SCRIPTED_API_KEY", "none")
    [log] = inspect_eval(file_tasks(), model="openai-api/scripted/plan", log_dir=str(tmp_path), display="none")
    assert log.samples is not None
    turns = sum(len([e for e in s.events if e.event == "model"]) for s in log.samples)
    line = row("plan", "harness", "none", log)
    found = re.fullmatch(r"\| plan \| this harness, controls none \| (\d)/6 \| (\d+) \| (.+) \|", line)
    assert found is not None, line
    assert found[1] == "2" and int(found[2]) == turns > 6 and found[3] == "wrong_answer 4"
    assert row("plan", "react", "none", log).startswith("| plan | Inspect react() | 2/6 |")

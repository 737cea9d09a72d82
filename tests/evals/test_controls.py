"""The controls measurement: every variant sees each suite's own workspace, so rows can be compared."""

from __future__ import annotations

from pathlib import Path

from evals.controls import measure, variants, wrong_answers
from evals.runner import Provider
from tests.conftest import AppServer


async def test_measuring_twice_in_one_scratch_folder_gives_the_same_rows(scripted: AppServer, tmp_path: Path) -> None:
    # The suites name their tasks alike; a workspace built over another's files would change the rows.
    provider = Provider("scripted", scripted.base_url, "solve")
    defaults = variants()[0]
    suites = ("default", "generated", "family-3")
    first = await measure(provider, defaults, 4, tmp_path, suites)
    second = await measure(provider, defaults, 4, tmp_path, suites)
    assert [r["tool_runs"] for r in second] == [r["tool_runs"] for r in first]
    assert [(r["correct"], r["scored"]) for r in first] == [(6, 6)] * len(first)


async def test_each_wrong_answer_is_listed_with_its_task_class_and_what_the_scorer_saw(
    scripted: AppServer, tmp_path: Path
) -> None:
    # `plan` answers every question with what errors.log says about the timeout.
    provider = Provider("scripted", scripted.base_url, "plan")
    plain = next(v for v in variants() if v.name == "none")
    rows = await measure(provider, plain, 4, tmp_path, ("default",))
    lines = wrong_answers([{"model": "scripted", "variant": plain.name, "suites": rows}])
    assert 0 < len(lines) == rows[0]["scored"] - rows[0]["correct"]
    assert "- scripted, none, default, count: wrong_answer (" in "\n".join(lines)
    assert all(line.endswith(")") and "(no verdict)" not in line for line in lines)

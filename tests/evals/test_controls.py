"""The controls measurement: every variant sees each suite's own workspace, so rows can be compared."""

from __future__ import annotations

from pathlib import Path

from evals.controls import measure, variants
from evals.runner import Provider
from tests.conftest import Server


async def test_measuring_twice_in_one_scratch_folder_gives_the_same_rows(scripted: Server, tmp_path: Path) -> None:
    # The suites name their tasks alike; a workspace built over another's files would change the rows.
    provider = Provider("scripted", scripted.base_url, "solve")
    defaults = variants()[0]
    first = await measure(provider, defaults, 4, tmp_path)
    second = await measure(provider, defaults, 4, tmp_path)
    assert [r["tool_runs"] for r in second] == [r["tool_runs"] for r in first]
    assert [(r["correct"], r["scored"]) for r in first] == [(6, 6)] * len(first)

"""summary: what a finished run comes to, in the one shape the CLI prints and the eval extends."""

from __future__ import annotations

from dataclasses import replace

import pytest

from harness.app.client import FunctionModel
from harness.app.summary import RunSummary
from harness.core.config import Profile, RunConfig
from harness.core.limits import Prices
from harness.core.loop import run
from harness.core.options import RunOptions
from harness.core.protocols import ModelReply, ModelRequest
from harness.core.registry import Registry
from harness.core.state import new_run
from tests.harness.helpers import Recorder, calls
from wire.types import usage_of


def model(*usages: bool) -> FunctionModel:
    """A model that calls the probe, then answers; each reply carries usage or not, as told."""
    turn = iter(usages)

    def reply(request: ModelRequest) -> ModelReply:
        priced = next(turn)
        usage = usage_of(1_000, 100, cached_tokens=200) if priced else None
        if not any(m["role"] == "tool" for m in request.messages):
            return ModelReply(calls(("c1", "probe", {"x": 1})), usage, "tool_calls")
        return ModelReply({"role": "assistant", "content": "It is 7."}, usage, "stop")

    return FunctionModel(reply)


async def test_a_finished_run_sums_its_tokens_and_prices_them() -> None:
    state = new_run("What is the probe value?", prices=Prices(input_per_mtok=1.0, output_per_mtok=10.0))
    config = RunConfig("http://127.0.0.1:1/v1", "m", ".", controls=Profile("tiny", why="auto: 0.63B parameters"))
    result = await run(replace(state, config=config), Registry([Recorder()]), RunOptions(model(True, True)))
    summary = RunSummary.of(result, wall_ms=12.345)
    assert (summary.status, summary.answer, summary.turns, summary.tool_runs) == ("completed", "It is 7.", 2, ["probe"])
    assert (summary.prompt_tokens, summary.completion_tokens, summary.cached_tokens) == (2_000, 200, 400)
    assert summary.cost_usd == pytest.approx(0.004) and summary.pending == [] and summary.wall_ms == 12.3
    assert summary.controls == "tiny (auto: 0.63B parameters)"
    assert summary.facts()["cost_usd"] == summary.cost_usd


async def test_a_reply_without_usage_leaves_the_cost_unknown_not_zero() -> None:
    state = new_run("What is the probe value?", prices=Prices(input_per_mtok=1.0, output_per_mtok=10.0))
    summary = RunSummary.of(await run(state, Registry([Recorder()]), RunOptions(model(True, False))), wall_ms=1)
    assert summary.cost_usd is None and summary.prompt_tokens == 1_000 and summary.controls == "none"

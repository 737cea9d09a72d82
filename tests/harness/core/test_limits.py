"""Limits, prices and usage: checked on construction, spent by the loop, an unknown cost never $0."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from harness.core.limits import Limits, Prices, Usage
from harness.core.loop import run
from harness.core.options import RunOptions
from harness.core.registry import Registry
from harness.core.state import pending
from harness.errors import ConfigError
from tests.harness.core.support import files, state
from tests.harness.helpers import PLAIN, Recorder, calls, script, scripted, tool_messages
from wire.types import usage_of


async def test_budget_overshoots_by_at_most_one_turn(workspace: Path) -> None:
    runaway = scripted(lambda turn, _: calls((f"c{turn + 1}", "list_files", {})), usage=(1000, 100))
    per_turn = (1000 * 2.0 + 100 * 12.0) / 1e6
    result = await run(state(max_turns=None, max_budget_usd=0.01), files(workspace), RunOptions(model=runaway))
    assert result.status == "budget_exceeded" and result.interruption is not None
    assert result.interruption.type == "max_budget"
    assert 0.01 <= result.cost_usd < 0.01 + per_turn
    assert result.turns == 4  # 3 turns cost 0.0096 < 0.01, the 4th is bought and overshoots


async def test_reply_without_usage_is_unknown_cost_never_free(workspace: Path) -> None:
    result = await run(state(), files(workspace), RunOptions(model=script("hi", usage=None)))
    assert result.status == "completed"
    assert not result.usage.cost_known and result.usage.unpriced_requests == 1
    assert "unknown" in result.usage.cost_text()
    budgeted = await run(
        state(max_budget_usd=1.0),
        files(workspace),
        RunOptions(model=script(calls(("c1", "list_files", {})), "done", usage=None)),
    )
    assert budgeted.status == "budget_exceeded" and "cost unknown" in (budgeted.reason or "")


@pytest.mark.parametrize("seed", range(8))
async def test_a_batch_over_the_tool_call_cap_is_refused_whole(seed: int) -> None:
    rng = random.Random(seed)
    cap = rng.randint(1, 6)
    sizes = [rng.randint(1, 4) for _ in range(8)]
    probe = Recorder()
    model = scripted(lambda turn, _: calls(*((f"t{turn}c{i}", "probe", {}) for i in range(sizes[turn]))))
    options = RunOptions(model=model, controls=PLAIN)
    result = await run(state(max_turns=8, max_tool_calls=cap), Registry([probe]), options)
    admitted = 0
    for size in sizes:
        if admitted + size > cap:
            break
        admitted += size
    assert result.status == "budget_exceeded" and "tool-call cap" in (result.reason or "")
    assert len(probe.runs) == admitted == result.tool_calls <= cap
    assert pending(result.messages) == []  # the refused batch is answered, not left dangling
    assert tool_messages(result.messages)[-1]["content"].startswith("Not run: tool-call cap")


def test_a_limit_that_is_not_a_finite_positive_number_is_refused_by_name() -> None:
    for field, bad in (("max_turns", 0), ("max_turns", -1), ("timeout_s", float("inf")), ("context_tokens", True)):
        with pytest.raises(ConfigError, match=field.removesuffix("_s")):
            Limits(**{field: bad})  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="input price"):
        Prices(input_per_mtok=float("nan"))
    assert Limits(max_budget_usd=0, max_tool_calls=0).max_tool_calls == 0  # none may be spent: a real limit


def test_usage_counts_known_costs_and_keeps_an_unknown_one_unknown() -> None:
    usage, prices = Usage(), Prices(input_per_mtok=1.0, output_per_mtok=10.0)
    assert usage.add(usage_of(1_000, 100), prices) == pytest.approx(0.002)
    assert usage.known_cost == pytest.approx(0.002)
    assert usage.add(None, prices) is None
    assert usage.known_cost is None and usage.requests == 2 and usage.prompt_tokens == 1_000
    other = Usage()
    other.add(usage_of(10, 1), prices)
    other.merge(usage)
    assert other.requests == 3 and other.unpriced_requests == 1 and other.known_cost is None

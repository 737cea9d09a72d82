"""The research sub-agent: its own transcript and limits, its cost reported separately, the parent's Stop."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from harness.app.client import OpenAIClient
from harness.app.trace import MemoryTrace
from harness.core.config import ALL_TOOLS
from harness.core.limits import Limits
from harness.core.loop import run
from harness.core.options import RunOptions
from harness.core.registry import Registry
from harness.core.state import new_run
from harness.core.stop import StopSignal
from harness.fs.workspace import Workspace
from harness.tools.catalogue import catalogue
from tests.conftest import AppServer
from tests.harness.helpers import PLAIN


def tools(
    scripted: AppServer, workspace: Path, child: str, limits: Limits, trace: MemoryTrace | None = None
) -> Registry:
    """The catalogue with a research child on the scripted `child` scenario (controls off: runaways run away)."""
    child_model = OpenAIClient(scripted.base_url, child)
    return catalogue(
        Workspace(workspace),
        names=ALL_TOOLS,
        research_model=child_model,
        research_limits=limits,
        trace=trace,
        controls=PLAIN,
    )


async def test_the_child_answers_and_its_cost_is_accounted_separately(scripted: AppServer, workspace: Path) -> None:
    trace = MemoryTrace()
    parent = new_run("What happened?", model="research")
    async with OpenAIClient(scripted.base_url, "research") as model:
        result = await run(
            parent,
            tools(scripted, workspace, "research.child", Limits(max_turns=6), trace),
            RunOptions(model=model, trace=trace, controls=PLAIN),
        )
    assert result.status == "completed" and result.turns == 2
    assert result.answer is not None and "worker 7 timed out" in result.answer
    assert result.child_usage.requests == 3 and result.child_usage.cost_usd > 0
    assert result.total_cost_usd == result.usage.cost_usd + result.child_usage.cost_usd
    child_events = [e for e in trace.events if e["run_id"] == f"{parent.run_id}.c1"]
    assert [e["turn"] for e in child_events if e["type"] == "turn"] == [1, 2, 3]


async def test_a_runaway_child_stops_at_its_own_limit_not_the_parents(scripted: AppServer, workspace: Path) -> None:
    parent = new_run("What happened?", model="research", limits=Limits(max_turns=10, max_budget_usd=1.0))
    child_limits = Limits(max_turns=None, max_budget_usd=0.02)
    async with OpenAIClient(scripted.base_url, "research") as model:
        result = await run(
            parent,
            tools(scripted, workspace, "research.child_runaway", child_limits),
            RunOptions(model=model, controls=PLAIN),
        )
    assert result.status == "completed"
    tool_text = next(m["content"] for m in result.messages if m["role"] == "tool")
    assert tool_text.startswith("no result (the research stopped: budget_exceeded")
    per_turn_ceiling = 0.01  # far above one runaway child turn
    assert 0.02 <= result.child_usage.cost_usd < 0.02 + per_turn_ceiling
    assert result.total_cost_usd < 1.0


async def test_one_stop_cancels_parent_and_child(scripted: AppServer, workspace: Path) -> None:
    signal = StopSignal()
    asyncio.get_running_loop().call_later(0.5, signal.set, "user pressed Stop")
    trace = MemoryTrace()
    async with OpenAIClient(scripted.base_url, "research") as model:
        began = time.monotonic()
        result = await run(
            new_run("What happened?", model="research"),
            tools(scripted, workspace, "research.child_runaway", Limits(max_turns=None), trace),
            RunOptions(model=model, signal=signal, trace=trace, controls=PLAIN),
        )
    assert result.status == "interrupted" and result.reason == "user pressed Stop"
    assert time.monotonic() - began < 1.0
    child_stops = [e for e in trace.of("run_stopped") if e["run_id"] != result.run_id]
    assert child_stops and child_stops[0]["status"] == "interrupted"

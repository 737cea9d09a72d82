"""11. Sub-agent: a child with its own limits; a runaway child stops at its own; one Stop cancels both."""

from __future__ import annotations

import asyncio
import time

from evals.experiments.lab import Lab, Outcome, Table, check, usd
from harness.core.limits import Limits
from harness.core.stop import StopSignal

CHILD_BUDGET = 0.02
PARENT_BUDGET = 1.00


async def with_child(lab: Lab, child_model: str, limits: Limits, signal: StopSignal | None = None) -> Outcome:
    parent_limits = Limits(max_turns=10, max_budget_usd=PARENT_BUDGET)
    question = "What does errors.log say?"
    stop = signal or StopSignal()
    return await lab.run("research", question, research=(child_model, limits), limits=parent_limits, signal=stop)


async def experiment(lab: Lab) -> Table:
    table = Table(
        "11. sub-agent (research)",
        ["child", "parent status", "parent cost", "child turns", "child cost", "answer / reason"],
    )
    normal = await with_child(lab, "research.child", Limits(max_turns=6, max_budget_usd=0.05))
    runaway = await with_child(lab, "research.child_runaway", Limits(max_turns=None, max_budget_usd=CHILD_BUDGET))
    signal = StopSignal()
    asyncio.get_running_loop().call_later(0.3, signal.set, "user pressed Stop")
    stopped = await with_child(lab, "research.child_runaway", Limits(max_turns=None), signal)
    lag_ms = (time.monotonic() - (signal.pressed_at or 0)) * 1000
    for name, out in (
        ("research.child", normal),
        ("runaway child, $0.02 budget", runaway),
        ("runaway child, Stop at 0.3 s", stopped),
    ):
        s = out.state
        words = (s.answer or s.reason or "")[:90]
        table.add(name, s.status, usd(s.cost_usd), s.child_usage.requests, usd(s.child_usage.cost_usd), words)
    r = runaway.state
    check(normal.state.status == "completed" and "timed out" in normal.answer, "the child should answer")
    check(CHILD_BUDGET <= r.child_usage.cost_usd < CHILD_BUDGET + 0.01, f"child spent {r.child_usage.cost_usd:.6f}")
    check(
        r.total_cost_usd < PARENT_BUDGET and r.status == "completed",
        "the runaway child must not spend the parent's budget",
    )
    check(stopped.state.status == "interrupted" and lag_ms < 50, f"Stop took {lag_ms:.1f} ms to end parent and child")
    table.notes.append(
        f"one Stop ended parent and child {lag_ms:.1f} ms after the press; child cost is accounted separately"
    )
    return table

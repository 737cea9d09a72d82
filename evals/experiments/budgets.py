"""3. Budgets on a runaway with no turn cap: each buys different turns, and overshoots by under one turn."""

from __future__ import annotations

from evals.experiments.lab import Lab, Table, check, usd
from harness.core.limits import Limits

BUDGETS = (0.010, 0.050, 0.100)


async def experiment(lab: Lab) -> Table:
    table = Table(
        "3. budgets on a runaway, no turn cap",
        ["budget", "turns bought", "spent", "overshoot", "last turn cost", "status"],
    )
    for budget in BUDGETS:
        out = await lab.run("runaway", limits=Limits(max_turns=None, max_budget_usd=budget))
        s = out.state
        last_turn = out.trace.of("turn")[-1]["cost_usd"]
        overshoot = s.cost_usd - budget
        table.add(usd(budget), s.turns, usd(s.cost_usd), usd(overshoot), usd(last_turn), s.status)
        check(s.status == "budget_exceeded", f"budget {budget}: ended {s.status}")
        check(
            0 <= overshoot < last_turn,
            f"budget {budget}: overshoot {overshoot:.6f} is not under one turn ({last_turn:.6f})",
        )
    table.notes.append(
        "the check runs before each turn, and a turn's price is known only after it: overshoot < one turn"
    )
    return table

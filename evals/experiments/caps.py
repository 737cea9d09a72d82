"""2. Turn caps on a runaway: the bill grows with the square of the cap."""

from __future__ import annotations

from evals.experiments.lab import Lab, Table, check, usd
from harness.core.limits import Limits

CAPS = (8, 20, 50, 100)


async def experiment(lab: Lab) -> Table:
    table = Table("2. turn caps on a runaway", ["cap", "turns", "input tokens", "cost", "status"])
    costs, inputs = {}, {}
    for cap in CAPS:
        s = (await lab.run("runaway", limits=Limits(max_turns=cap))).state
        costs[cap], inputs[cap] = s.cost_usd, s.usage.prompt_tokens
        table.add(cap, s.turns, s.usage.prompt_tokens, usd(s.cost_usd), s.status)
        check(s.status == "max_turns_exceeded" and s.turns == cap, f"cap {cap}: {s.status} after {s.turns} turns")
    ratio, token_ratio = costs[100] / costs[50], inputs[100] / inputs[50]
    table.notes.append(
        f"cap 50 -> 100 multiplies the cost by {ratio:.2f} and the input tokens by {token_ratio:.2f}, not 2"
    )
    check(ratio > 3.0, f"doubling the cap should multiply the cost by well over 2 (quadratic), got {ratio:.2f}")
    return table

"""1. plan: a well-behaved task, and the prompt that grows every turn."""

from __future__ import annotations

from itertools import pairwise

from evals.experiments.lab import Lab, Table, check, usd


async def experiment(lab: Lab) -> Table:
    out = await lab.run("plan")
    s, per_turn = out.state, out.prompt_tokens_per_turn
    table = Table("1. plan, cap 20", ["turns", "tools", "in", "out", "cost", "ms", "status"])
    table.add(
        s.turns,
        len(s.tool_runs),
        s.usage.prompt_tokens,
        s.usage.completion_tokens,
        usd(s.cost_usd),
        round(out.wall_ms),
        s.status,
    )
    table.notes += [f'answer: "{out.answer}"', f"per-turn prompt tokens: {', '.join(map(str, per_turn))}"]
    check(
        s.status == "completed" and s.turns == 3 and len(s.tool_runs) == 2,
        f"plan should take 3 turns, 2 tools: {s.turns}, {s.tool_runs}",
    )
    check(all(a < b for a, b in pairwise(per_turn)), f"the prompt must grow every turn: {per_turn}")
    return table

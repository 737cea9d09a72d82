"""4. One tool error, three policies: only telling the model what happened answers the question."""

from __future__ import annotations

from evals.experiments.lab import Lab, Table, check, usd
from harness.core.policy import ToolErrorPolicy


async def experiment(lab: Lab) -> Table:
    table = Table(
        "4. one tool error, three policies (recover)", ["policy", "turns", "tool runs", "cost", "status", "answer"]
    )
    outcomes = {}
    for name, policy in (
        ("fatal", ToolErrorPolicy(mode="fatal")),
        ("silent", ToolErrorPolicy(mode="silent")),
        ("told what happened", ToolErrorPolicy()),
    ):
        out = await lab.run("recover", errors=policy)
        s = outcomes[name] = out.state
        table.add(name, s.turns, len(s.tool_runs), usd(s.cost_usd), s.status, f'"{out.answer}"')
    told, fatal = outcomes["told what happened"], outcomes["fatal"]
    table.notes.append(
        f"telling the model costs {told.cost_usd / fatal.cost_usd:.1f}x the fatal run and is the only one that answers"
    )
    check(
        fatal.status == "failed" and outcomes["silent"].answer == "I could not read the file, so I do not know.",
        "fatal/silent",
    )
    check(told.status == "completed" and "errors.log" in (told.answer or ""), f"told: {told.status} {told.answer!r}")
    return table

"""5. A permanent error: retried to the cap, or classified permanent and stopped at once."""

from __future__ import annotations

import os
from pathlib import Path

from evals.experiments.lab import Lab, Table, check, usd
from harness.core.limits import Limits
from harness.core.policy import ToolErrorPolicy


def forbidden_workspace(lab: Lab) -> Path:
    """secret.txt is a link to a file outside the workspace: the process may not open it, ever."""
    workspace = lab.workspace()
    outside = lab.root / "outside-secret.txt"
    outside.write_text("not yours\n")
    os.symlink(outside, workspace / "secret.txt")
    return workspace


async def experiment(lab: Lab) -> Table:
    table = Table(
        "5. a file the process may not open (forbidden)",
        ["handling", "turns", "tool runs", "in", "cost", "status", "answer"],
    )
    runs = {}
    for name, policy in (
        ("retried to the cap", ToolErrorPolicy(stop_on_permanent=False)),
        ("classified permanent", ToolErrorPolicy()),
    ):
        out = await lab.run("forbidden", limits=Limits(max_turns=12), workspace=forbidden_workspace(lab), errors=policy)
        s = runs[name] = out.state
        table.add(name, s.turns, len(s.tool_runs), s.usage.prompt_tokens, usd(s.cost_usd), s.status, f'"{out.answer}"')
    retried, stopped = runs["retried to the cap"], runs["classified permanent"]
    table.notes.append(
        f"retrying costs {retried.cost_usd / stopped.cost_usd:.1f}x and ends with no answer; reason: {stopped.reason}"
    )
    check(retried.status == "max_turns_exceeded" and len(retried.tool_runs) == 12, f"retried: {retried.status}")
    check(
        stopped.status == "failed" and len(stopped.tool_runs) == 1,
        f"classified: {stopped.status}, {len(stopped.tool_runs)} runs",
    )
    return table

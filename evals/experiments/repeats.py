"""6. Repeats: dedupe saves the tool run, not the turn; on writes it swallows a deliberate second call."""

from __future__ import annotations

from evals.experiments.lab import Lab, Table, check, usd
from harness.core.policy import Dedupe


async def experiment(lab: Lab) -> Table:
    table = Table("6. repeats", ["run", "turns", "tool runs", "cost", "deletions run", "files deleted"])
    base = (await lab.run("single_read")).state
    rep = (await lab.run("repeat")).state
    dedup = (await lab.run("repeat", dedupe="reads")).state
    for name, s in (("no repeat", base), ("repeat", rep), ("repeat + read-only dedupe", dedup)):
        table.add(name, s.turns, len(s.tool_runs), usd(s.cost_usd), "-", "-")
    deletions = {}
    modes: tuple[tuple[str, Dedupe], ...] = (
        ("dedupe on every tool (unsafe)", "all"),
        ("dedupe on read-only tools", "reads"),
    )
    for name, mode in modes:
        workspace = lab.workspace()
        out = await lab.run(
            "repeat_write", prompt="Delete access.log.", workspace=workspace, approve_deletes=False, dedupe=mode
        )
        ran = [e for e in out.trace.of("tool_start") if e["tool"] == "delete_file"]
        deleted = [] if (out.workspace / "access.log").exists() else ["access.log"]
        deletions[mode] = len(ran)
        table.add(name, out.state.turns, len(out.state.tool_runs), usd(out.state.cost_usd), len(ran), deleted)
    extra = rep.cost_usd - base.cost_usd
    table.notes.append(
        f"the repeat costs {usd(extra)} more (+{extra / base.cost_usd:.0%}); dedupe saved a tool run, not that"
    )
    check(
        len(dedup.tool_runs) == 1 and len(rep.tool_runs) == 2 and dedup.cost_usd == rep.cost_usd,
        "dedupe saves the run, not the turn",
    )
    check(
        deletions == {"all": 1, "reads": 2},
        f"dedupe-all must swallow the second delete, reads-only must run it: {deletions}",
    )
    return table

"""10. Latency multiplier: the same 3-turn task as the provider slows down; the harness's own share stays small."""

from __future__ import annotations

from evals.experiments.lab import Lab, Table, check

LATENCIES_MS = (0, 100, 500, 1000)


async def experiment(lab: Lab) -> Table:
    table = Table(
        "10. latency multiplier (plan)",
        ["provider latency ms", "turns", "run wall ms", "turns x latency ms", "harness own ms"],
    )
    for latency in LATENCIES_MS:
        out = await lab.run("plan", latency_ms=latency)
        model_ms = sum(e["latency_ms"] for e in out.trace.of("turn"))
        own = out.wall_ms - model_ms
        table.add(latency, out.state.turns, round(out.wall_ms, 1), out.state.turns * latency, round(own, 1))
        check(out.wall_ms >= out.state.turns * latency, "the run cannot be faster than its model calls")
        check(
            own < 50,
            f"the harness's own time at {latency} ms latency is {own:.1f} ms (tools included); expected < 50 ms",
        )
    table.notes.append("harness own ms = run wall minus the model requests' time (tool runs and bookkeeping)")
    return table

"""9. Cancellation: Stop reaches the running tool; progress shows while it runs."""

from __future__ import annotations

import asyncio
import time

from evals.experiments.lab import Lab, Table, check
from harness.core.stop import StopSignal

PRESS_AT_S = 1.2


async def experiment(lab: Lab) -> Table:
    table = Table("9. cancellation (slow)", ["run", "stopped after ms", "status", "reason"])
    for press in (None, PRESS_AT_S):
        signal, progress = StopSignal(), list[str]()
        began = time.monotonic()
        if press is not None:
            asyncio.get_running_loop().call_later(press, signal.set, "user pressed Stop")

        def on_progress(tool: str, label: str, began: float = began, progress: list[str] = progress) -> None:
            progress.append(f"progress: {label}  (t+{(time.monotonic() - began) * 1000:,.0f} ms)")

        out = await lab.run("slow", "Scan the archive.", signal=signal, on_progress=on_progress)
        ended = time.monotonic()
        name = "no cancellation" if press is None else f"user presses Stop at {press} s"
        table.add(name, round((ended - began) * 1000), out.state.status, out.state.reason or "")
        if press is None:
            table.notes.extend(progress)
            check(out.state.status == "completed", "the scan should finish without Stop")
        else:
            lag = (ended - (signal.pressed_at or ended)) * 1000
            table.notes.append(f"Stop to stopped: {lag:.1f} ms")
            check(
                out.state.status == "interrupted" and lag < 50, f"Stop took {lag:.1f} ms (> 50 ms) or did not interrupt"
            )
    return table

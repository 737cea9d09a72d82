"""The journal's trace: run id, sequence and time on every line, payloads only when asked, a broken sink harmless."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from harness.app.client import FunctionModel
from harness.app.trace import MemoryTrace
from harness.core.loop import run
from harness.core.options import RunOptions
from harness.core.protocols import ModelReply, ModelRequest
from tests.harness.core.support import PLAN, files, state


async def test_trace_lines_carry_run_id_sequence_and_time_and_no_payload_unless_asked(workspace: Path) -> None:
    trace = MemoryTrace()

    async def slow(request: ModelRequest) -> ModelReply:
        await asyncio.sleep(0.05)  # the turn's latency is the model's time, measured
        return await PLAN.complete(request)

    result = await run(state(), files(workspace), RunOptions(model=FunctionModel(slow), trace=trace))
    assert all(e["run_id"] == result.run_id and isinstance(e["ts"], float) for e in trace.events)
    assert [e["seq"] for e in trace.events] == list(range(1, len(trace.events) + 1))
    turn = trace.of("turn")[0]
    assert (turn["prompt_tokens"], turn["completion_tokens"], turn["total_tokens"], turn["finish"]) == (
        100,
        10,
        110,
        "tool_calls",
    )
    assert turn["cost_usd"] == pytest.approx(0.00032) and 50 <= turn["latency_ms"] < 5_000
    assert all("args" not in e and "output" not in e for e in trace.events)
    stopped = trace.of("run_stopped")[0]
    assert (stopped["status"], stopped["turns"]) == ("completed", 3)
    loud = MemoryTrace()
    await run(state(), files(workspace), RunOptions(model=PLAN, trace=loud, trace_payloads=True))
    assert (
        loud.of("tool_start")[1]["args"] == {"path": "errors.log"}
        and "timed out" in loud.of("tool_result")[1]["output"]
    )


async def test_a_failing_trace_sink_never_changes_the_outcome(workspace: Path) -> None:
    class Broken:
        def write(self, event: object) -> None:
            raise OSError("disk full")

    result = await run(state(), files(workspace), RunOptions(model=PLAN, trace=Broken()))
    assert result.status == "completed" and result.turns == 3

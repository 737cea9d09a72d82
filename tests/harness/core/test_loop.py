"""The loop's endings and bookkeeping, driven through `run()` with plain functions as models."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.app.client import FunctionModel
from harness.app.trace import MemoryTrace
from harness.core.loop import run
from harness.core.options import RunOptions
from harness.core.protocols import ModelReply, ModelRequest
from harness.core.registry import Registry
from harness.core.state import RunState, pending
from harness.errors import NotResumable, ProviderRejected
from tests.harness.core.support import PLAN, files, state
from tests.harness.helpers import PLAIN, Recorder, calls, script, scripted, tool_messages


async def test_completed_run_answers_and_records_every_tool_run(workspace: Path) -> None:
    trace = MemoryTrace()
    result = await run(state(), files(workspace), RunOptions(model=PLAN, trace=trace))
    assert (result.status, result.reason, result.interruption) == ("completed", "the model answered", None)
    assert result.answer == "errors.log mentions a timeout."
    assert result.turns == 3 and result.tool_runs == ["list_files", "read_file:errors.log"]
    assert "errors.log (" in tool_messages(result.messages)[0]["content"]
    assert "timed out after 30000 ms" in tool_messages(result.messages)[1]["content"]
    assert [e["type"] for e in trace.events] == [
        "turn", "tool_start", "tool_result", "turn", "tool_start", "tool_result", "turn", "run_stopped",
    ]  # fmt: skip


async def test_runaway_stops_at_the_turn_cap_with_its_reason(workspace: Path) -> None:
    runaway = scripted(lambda turn, _: calls((f"c{turn + 1}", "list_files", {})))
    result = await run(state(max_turns=8), files(workspace), RunOptions(model=runaway, controls=PLAIN))
    assert result.status == "max_turns_exceeded"
    assert result.interruption is not None and result.interruption.type == "max_turns"
    assert result.reason == "reached the turn cap of 8"
    assert result.turns == 8 and len(result.tool_runs) == 8
    assert pending(result.messages) == [] and result.resumable


async def test_provider_rejection_fails_the_run_with_the_providers_message(workspace: Path) -> None:
    def refuse(request: ModelRequest) -> ModelReply:
        raise ProviderRejected("provider answered 401: invalid api key", 401)

    result = await run(state(), files(workspace), RunOptions(model=FunctionModel(refuse)))
    assert (
        result.status == "failed" and "invalid api key" in (result.reason or "") and result.error_source == "provider"
    )
    assert result.error == result.reason and not result.resumable
    with pytest.raises(NotResumable):
        await run(result, files(workspace), RunOptions(model=PLAN))


async def test_unknown_tool_and_bad_arguments_become_error_results_and_never_run() -> None:
    probe = Recorder()
    model = script(
        calls(("a", "nope", {}), ("b", "probe", {"x": "not a number"}), ("c", "probe", {"y": 1})),
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "d", "type": "function", "function": {"name": "probe", "arguments": "{not json"}}]},
        "done",
    )  # fmt: skip
    result = await run(state(), Registry([probe]), RunOptions(model=model))
    texts = [m["content"] for m in tool_messages(result.messages)]
    assert texts[0] == "Error: unknown tool 'nope'. The tools are: probe."
    assert texts[1].startswith("Error: invalid arguments for probe: x: 'not a number' is not of type 'integer'")
    assert "Additional properties are not allowed" in texts[2]
    assert texts[3].startswith("Error: the arguments of probe are not valid JSON")
    assert probe.runs == [] and result.status == "completed"


async def test_a_call_id_the_transcript_already_holds_is_renamed_so_each_result_answers_one_call() -> None:
    writer = Recorder(name="writer", read_only=False)
    model = script(  # a server that numbers calls per conversation repeats its ids
        calls(("call_0", "writer", {"x": 1})),
        calls(("call_0", "writer", {"x": 2}), ("call_0", "writer", {"x": 3})),
        "done",
    )
    result = await run(state(), Registry([writer]), RunOptions(model=model))
    asked = [c["id"] for m in result.messages if m["role"] == "assistant" for c in m.get("tool_calls", [])]
    assert asked == ["call_0", "call_0_1", "call_0_2"]
    assert [m["tool_call_id"] for m in tool_messages(result.messages)] == asked
    assert writer.runs == [{"x": 1}, {"x": 2}, {"x": 3}] and result.status == "completed"


async def test_dedupe_reuses_reads_but_never_writes_unless_told() -> None:
    reader, writer = Recorder(name="reader"), Recorder(name="writer", read_only=False)
    model = script(
        calls(("r1", "reader", {"x": 1}), ("w1", "writer", {})),
        calls(("r2", "reader", {"x": 1}), ("w2", "writer", {})),
        "done",
    )
    result = await run(state(), Registry([reader, writer]), RunOptions(model=model, dedupe="reads", controls=PLAIN))
    assert len(reader.runs) == 1 and len(writer.runs) == 2
    slots = {m["tool_call_id"]: m["content"] for m in tool_messages(result.messages)}
    assert slots["r2"] == slots["r1"] == "ok"  # a reused result still has its own slot
    reader.runs.clear()
    writer.runs.clear()
    await run(state(), Registry([reader, writer]), RunOptions(model=model, dedupe="all", controls=PLAIN))
    assert len(writer.runs) == 1  # the unsafe mode swallows the second, deliberate write
    reader.runs.clear()
    await run(state(), Registry([reader, writer]), RunOptions(model=model, controls=PLAIN))
    assert len(reader.runs) == 2  # off by default


async def test_stop_conditions_and_deadline_stop_with_their_own_reasons(workspace: Path) -> None:
    def two_turns(s: RunState) -> bool:
        return s.turns >= 2

    runaway = scripted(lambda turn, _: calls((f"c{turn}", "list_files", {})))
    result = await run(state(), files(workspace), RunOptions(model=runaway, stop_when=[two_turns]))
    assert result.status == "interrupted" and result.reason == "stop condition two_turns met" and result.turns == 2
    slow = await run(
        state(max_turns=None, timeout_s=0.3),
        files(workspace),
        RunOptions(model=scripted(lambda t, _: calls((f"s{t}", "scan_archive", {})))),
    )
    assert slow.status == "interrupted" and slow.reason == "deadline of 0.3s reached"


async def test_tool_output_is_bounded_head_and_tail() -> None:
    probe = Recorder(output="A" * 5000 + "B" * 5000)
    result = await run(
        state(), Registry([probe]), RunOptions(model=script(calls(("c1", "probe", {})), "ok"), max_output_chars=1000)
    )
    slot = tool_messages(result.messages)[0]["content"]
    assert slot.startswith("A" * 500) and slot.endswith("B" * 500) and "9,000 characters omitted" in slot

"""The loop's endings, policies and bookkeeping, driven through `run()` with plain functions as models."""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path

import pytest

from harness.app.client import FunctionModel
from harness.app.trace import MemoryTrace
from harness.core.approvals import approve, reject
from harness.core.config import ALL_TOOLS
from harness.core.limits import Limits
from harness.core.loop import run
from harness.core.options import RunOptions
from harness.core.policy import ToolErrorPolicy
from harness.core.protocols import ModelReply, ModelRequest
from harness.core.state import RunState, new_run, pending, state_from
from harness.errors import NotResumable, PermanentToolError, ProviderRejected, ToolError
from harness.tools.base import Registry
from harness.tools.catalogue import catalogue
from harness.tools.workspace import Workspace
from tests.harness.helpers import PLAIN, Recorder, calls, script, scripted, tool_messages
from wire.types import usage_of


def state(prompt: str = "Which file mentions a timeout?", **limits: object) -> RunState:
    return new_run(prompt, system="be brief", limits=Limits(**limits))  # type: ignore[arg-type]


def files(workspace: Path) -> Registry:
    return catalogue(Workspace(workspace), names=ALL_TOOLS)


PLAN = script(
    calls(("c1", "list_files", {})),
    calls(("c2", "read_file", {"path": "errors.log"})),
    "errors.log mentions a timeout.",
)


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


async def test_budget_overshoots_by_at_most_one_turn(workspace: Path) -> None:
    runaway = scripted(lambda turn, _: calls((f"c{turn + 1}", "list_files", {})), usage=(1000, 100))
    per_turn = (1000 * 2.0 + 100 * 12.0) / 1e6
    result = await run(state(max_turns=None, max_budget_usd=0.01), files(workspace), RunOptions(model=runaway))
    assert result.status == "budget_exceeded" and result.interruption is not None
    assert result.interruption.type == "max_budget"
    assert 0.01 <= result.cost_usd < 0.01 + per_turn
    assert result.turns == 4  # 3 turns cost 0.0096 < 0.01, the 4th is bought and overshoots


async def test_reply_without_usage_is_unknown_cost_never_free(workspace: Path) -> None:
    result = await run(state(), files(workspace), RunOptions(model=script("hi", usage=None)))
    assert result.status == "completed"
    assert not result.usage.cost_known and result.usage.unpriced_requests == 1
    assert "unknown" in result.usage.cost_text()
    budgeted = await run(
        state(max_budget_usd=1.0),
        files(workspace),
        RunOptions(model=script(calls(("c1", "list_files", {})), "done", usage=None)),
    )
    assert budgeted.status == "budget_exceeded" and "cost unknown" in (budgeted.reason or "")


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


RECOVER = scripted(
    lambda turn, text: (
        calls(("c1", "read_file", {"path": "timeout.log"}))
        if turn == 0
        else "I could not read the file, so I do not know."
        if "Call list_files" not in text
        else [calls(("c2", "list_files", {})), calls(("c3", "read_file", {"path": "errors.log"})), "errors.log."][
            turn - 1
        ]
    )
)


async def test_tool_error_as_text_lets_the_model_recover(workspace: Path) -> None:
    result = await run(state(), files(workspace), RunOptions(model=RECOVER))
    first = tool_messages(result.messages)[0]["content"]
    assert first == "Error: no such file: timeout.log. Call list_files to see what exists."
    assert result.status == "completed" and result.answer == "errors.log." and result.turns == 4


async def test_silent_errors_leave_the_model_guessing(workspace: Path) -> None:
    options = RunOptions(model=RECOVER, errors=ToolErrorPolicy(mode="silent"))
    result = await run(state(), files(workspace), options)
    assert tool_messages(result.messages)[0]["content"] == "Error: something went wrong."
    assert result.answer == "I could not read the file, so I do not know." and result.turns == 2


async def test_custom_error_text_function(workspace: Path) -> None:
    options = RunOptions(model=RECOVER, errors=ToolErrorPolicy(describe=lambda e: f"oops ({type(e).__name__})"))
    result = await run(state(), files(workspace), options)
    assert tool_messages(result.messages)[0]["content"] == "oops (ToolError)"


async def test_fatal_errors_fail_the_run(workspace: Path) -> None:
    result = await run(state(), files(workspace), RunOptions(model=RECOVER, errors=ToolErrorPolicy(mode="fatal")))
    assert result.status == "failed" and "no such file: timeout.log" in (result.reason or "")
    assert pending(result.messages) == []  # the failure is in the transcript too


async def test_permanent_error_stops_instead_of_retrying_to_the_cap() -> None:
    probe = Recorder(fail=PermanentToolError("permission denied: secret.txt"))
    forever = scripted(lambda turn, _: calls((f"c{turn}", "probe", {})))
    stopped = await run(state(max_turns=12), Registry([probe]), RunOptions(model=forever, controls=PLAIN))
    assert (
        stopped.status == "failed"
        and "retrying cannot help" in (stopped.reason or "")
        and stopped.error_source == "tool"
    )
    assert len(probe.runs) == 1 and stopped.turns == 1
    probe.runs.clear()
    options = RunOptions(model=forever, errors=ToolErrorPolicy(stop_on_permanent=False), controls=PLAIN)
    retried = await run(state(max_turns=12), Registry([probe]), options)
    assert retried.status == "max_turns_exceeded" and len(probe.runs) == 12


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
    reader.runs.clear(), writer.runs.clear()
    await run(state(), Registry([reader, writer]), RunOptions(model=model, dedupe="all", controls=PLAIN))
    assert len(writer.runs) == 1  # the unsafe mode swallows the second, deliberate write
    reader.runs.clear()
    await run(state(), Registry([reader, writer]), RunOptions(model=model, controls=PLAIN))
    assert len(reader.runs) == 2  # off by default


DESTRUCTIVE = scripted(
    lambda turn, text: [
        calls(("c1", "list_files", {})),
        calls(("c2", "delete_file", {"path": "access.log"})),
        "I did not delete anything." if "declined" in text else "Deleted access.log to free space.",
    ][turn]
)


async def test_approval_stops_before_the_call_and_approve_lets_it_run(workspace: Path) -> None:
    trace = MemoryTrace()
    stopped = await run(state(), files(workspace), RunOptions(model=DESTRUCTIVE, trace=trace))
    assert stopped.status == "interrupted" and stopped.interruption is not None
    assert (stopped.interruption.type, stopped.interruption.call_id, stopped.interruption.tool) == (
        "approval",
        "c2",
        "delete_file",
    )
    assert stopped.interruption.args == {"path": "access.log"}
    assert (workspace / "access.log").exists() and stopped.turns == 2
    assert trace.of("approval_required")[0]["call_id"] == "c2"
    approve(stopped, "c2")
    done = await run(stopped, files(workspace), RunOptions(model=DESTRUCTIVE))
    assert done.status == "completed" and not (workspace / "access.log").exists()
    assert done.turns == 3 and done.answer == "Deleted access.log to free space."


async def test_reject_writes_the_refusal_in_words_with_or_without_a_reason(workspace: Path) -> None:
    for reason in ("keep the logs", None):
        stopped = await run(state(), files(workspace), RunOptions(model=DESTRUCTIVE))
        reject(stopped, "c2", reason)
        done = await run(stopped, files(workspace), RunOptions(model=DESTRUCTIVE))
        slot = tool_messages(done.messages)[-1]["content"]
        assert slot.startswith("Not run: the user declined this delete_file call")
        assert (reason in slot) if reason else ("Reason" not in slot)
        assert done.answer == "I did not delete anything." and (workspace / "access.log").exists()


async def test_an_unrecorded_refusal_lets_the_model_report_a_deletion_that_never_happened(workspace: Path) -> None:
    stopped = await run(state(), files(workspace), RunOptions(model=DESTRUCTIVE))
    reject(stopped, "c2")
    done = await run(stopped, files(workspace), RunOptions(model=DESTRUCTIVE, reject_text=lambda *_: ""))
    assert done.answer == "Deleted access.log to free space." and (workspace / "access.log").exists()


async def test_an_approval_is_bound_to_the_exact_arguments(workspace: Path) -> None:
    stopped = await run(state(), files(workspace), RunOptions(model=DESTRUCTIVE))
    approve(stopped, "c2")
    last = stopped.messages[-1]
    last["tool_calls"][0]["function"]["arguments"] = json.dumps({"path": "notes.txt"})  # type: ignore[typeddict-item]
    again = await run(stopped, files(workspace), RunOptions(model=DESTRUCTIVE))
    assert again.status == "interrupted" and again.interruption is not None
    assert again.interruption.args == {"path": "notes.txt"} and (workspace / "notes.txt").exists()


async def test_a_started_write_without_result_is_never_silently_rerun() -> None:
    writer = Recorder(name="writer", read_only=False)
    model = script(calls(("w1", "writer", {})), "done")
    crashed = await run(state(max_turns=1), Registry([writer]), RunOptions(model=model))
    crashed.messages = crashed.messages[:-1]  # as if the process died after marking w1 started
    crashed.started.append("w1")
    crashed.limits.max_turns = 5
    writer.runs.clear()
    resumed = await run(crashed, Registry([writer]), RunOptions(model=model))
    assert resumed.status == "interrupted" and resumed.interruption is not None
    assert resumed.interruption.type == "approval" and "may have taken effect" in resumed.interruption.reason
    assert writer.runs == []
    approve(resumed, "w1")
    finished = await run(resumed, Registry([writer]), RunOptions(model=model))
    assert finished.status == "completed" and len(writer.runs) == 1
    idempotent = Recorder(name="writer", read_only=False, honours_idempotency_key=True)
    crashed.started, crashed.status = ["w1"], "interrupted"
    crashed.messages = crashed.messages[:3]
    redone = await run(crashed, Registry([idempotent]), RunOptions(model=model))
    assert redone.status == "completed" and idempotent.keys == [f"{crashed.run_id}:w1"]


@pytest.mark.parametrize("seed", range(8))
async def test_a_batch_over_the_tool_call_cap_is_refused_whole(seed: int) -> None:
    rng = random.Random(seed)
    cap = rng.randint(1, 6)
    sizes = [rng.randint(1, 4) for _ in range(8)]
    probe = Recorder()
    model = scripted(lambda turn, _: calls(*((f"t{turn}c{i}", "probe", {}) for i in range(sizes[turn]))))
    options = RunOptions(model=model, controls=PLAIN)
    result = await run(state(max_turns=8, max_tool_calls=cap), Registry([probe]), options)
    admitted = 0
    for size in sizes:
        if admitted + size > cap:
            break
        admitted += size
    assert result.status == "budget_exceeded" and "tool-call cap" in (result.reason or "")
    assert len(probe.runs) == admitted == result.tool_calls <= cap
    assert pending(result.messages) == []  # the refused batch is answered, not left dangling
    assert tool_messages(result.messages)[-1]["content"].startswith("Not run: tool-call cap")


async def test_context_budget_drops_whole_old_turns_and_keeps_the_question() -> None:
    seen: list[list[dict[str, object]]] = []

    def model(request: ModelRequest) -> ModelReply:
        seen.append(list(request.messages))
        message = calls((f"c{len(seen)}", "probe", {})) if len(seen) < 6 else {"role": "assistant", "content": "done"}
        return ModelReply(message, usage_of(1, 1), "stop")  # type: ignore[arg-type]

    probe = Recorder(output="x" * 400)
    result = await run(
        state(context_tokens=400),
        Registry([probe]),
        RunOptions(model=FunctionModel(model), count_tokens=lambda m: len(json.dumps(m)) // 4),
    )  # type: ignore[arg-type]
    assert result.status == "completed"
    last = seen[-1]
    assert last[0]["role"] == "system" and last[1]["content"] == "Which file mentions a timeout?"
    assert len(last) < len(result.messages)
    ids = {c["id"] for m in last for c in m.get("tool_calls", [])}  # type: ignore[attr-defined]
    answered = {m["tool_call_id"] for m in last if m["role"] == "tool"}
    assert ids == answered  # never an assistant call without its result, nor a result without its call


async def test_context_budget_too_small_for_the_newest_turn_stops_with_a_reason() -> None:
    probe = Recorder(output="x" * 4000)
    model = script(calls(("c1", "probe", {})), "done")
    result = await run(
        state(context_tokens=200),
        Registry([probe]),
        RunOptions(model=model, count_tokens=lambda m: len(json.dumps(m)) // 4),
    )  # type: ignore[arg-type]
    assert result.status == "budget_exceeded" and "context budget" in (result.reason or "")


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


async def test_state_round_trips_through_json_exactly(workspace: Path) -> None:
    stopped = await run(state(max_budget_usd=1.0), files(workspace), RunOptions(model=DESTRUCTIVE))
    reject(stopped, "c2", "no")
    stopped.started.append("x")
    again = state_from(json.loads(stopped.to_json()))
    assert again == stopped and again.to_json() == stopped.to_json()


async def test_tool_errors_raised_as_plain_exceptions_reach_the_model_as_words() -> None:
    probe = Recorder(fail=ValueError("bad thing"))
    result = await run(state(), Registry([probe]), RunOptions(model=script(calls(("c1", "probe", {})), "ok")))
    assert tool_messages(result.messages)[0]["content"] == "Error: bad thing" and result.status == "completed"
    probe.fail = ToolError("expected")

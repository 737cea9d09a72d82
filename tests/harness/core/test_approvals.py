"""Approvals: a dangerous call waits, bound to its exact arguments; a refusal reaches the model in words."""

from __future__ import annotations

import json
from pathlib import Path

from harness.app.trace import MemoryTrace
from harness.core.approvals import approve, reject
from harness.core.loop import run
from harness.core.options import RunOptions
from harness.core.registry import Registry
from tests.harness.core.support import DESTRUCTIVE, files, state
from tests.harness.helpers import Recorder, calls, script, tool_messages


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

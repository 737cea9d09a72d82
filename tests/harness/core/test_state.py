"""A run's state: JSON in, the same state out."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.core.approvals import reject
from harness.core.loop import run
from harness.core.options import RunOptions
from harness.core.state import pending, state_from
from harness.errors import InvalidState
from tests.harness.core.support import DESTRUCTIVE, files, state
from tests.harness.helpers import calls


async def test_state_round_trips_through_json_exactly(workspace: Path) -> None:
    stopped = await run(state(max_budget_usd=1.0), files(workspace), RunOptions(model=DESTRUCTIVE))
    reject(stopped, "c2", "no")
    stopped.started.append("x")
    again = state_from(json.loads(stopped.to_json()))
    assert again == stopped and again.to_json() == stopped.to_json()


def test_a_state_file_with_a_wrong_field_is_refused_naming_where() -> None:
    raw = json.loads(state().to_json())
    raw["limits"]["max_turns"] = "twenty"
    with pytest.raises(InvalidState) as wrong:
        state_from(raw)
    assert wrong.value.where == "limits.max_turns"
    raw = json.loads(state().to_json())
    raw["messages"][0] = {"role": "narrator", "content": "x"}
    with pytest.raises(InvalidState) as wrong:
        state_from(raw)
    assert wrong.value.where.startswith("messages.0")


def test_the_answer_is_the_last_text_reply_of_a_completed_run_and_nothing_else() -> None:
    run_state = state()
    run_state.messages.append({"role": "assistant", "content": "errors.log"})
    assert run_state.answer is None  # still running: a reply is not yet the answer
    run_state.status = "completed"
    assert run_state.answer == "errors.log"
    run_state.messages.append(calls(("c1", "list_files", {})))
    assert run_state.answer is None  # a call is not an answer


def test_pending_is_the_last_batch_s_calls_without_a_result() -> None:
    run_state = state()
    run_state.messages.append(calls(("a", "list_files", {}), ("b", "read_file", {"path": "x"})))
    assert [c["id"] for c in pending(run_state.messages)] == ["a", "b"]
    run_state.messages.append({"role": "tool", "tool_call_id": "a", "content": "x"})
    assert [c["id"] for c in pending(run_state.messages)] == ["b"]
    run_state.messages.append({"role": "tool", "tool_call_id": "b", "content": "y"})
    assert pending(run_state.messages) == []


async def test_a_runs_state_keeps_a_writes_content_once(tmp_path: Path) -> None:
    """Forty writes of 900 KB: the state holds each content once (in the transcript), not again in its caches."""
    from harness.app.client import FunctionModel
    from harness.controls import TINY, build
    from harness.core.limits import Limits
    from harness.core.loop import run
    from harness.core.options import RunOptions
    from harness.core.protocols import ModelReply, ModelRequest
    from harness.core.registry import Registry
    from harness.core.state import new_run
    from harness.fs.workspace import Workspace
    from harness.tools.writes import WriteFile
    from tests.harness.helpers import calls
    from wire.types import usage_of

    content = "x" * 900_000
    replies = [calls((f"w{i}", "write_file", {"path": f"f{i}.txt", "content": content})) for i in range(40)]

    def reply(request: ModelRequest) -> ModelReply:
        index = sum(1 for m in request.messages if m["role"] == "assistant")
        message = replies[index] if index < len(replies) else {"role": "assistant", "content": "done"}
        return ModelReply(message, usage_of(10, 10), "tool_calls" if index < len(replies) else "stop")

    tools = Registry([WriteFile(Workspace(tmp_path), needs_approval=False, max_bytes=1_000_000)])
    limits = Limits(max_turns=50)
    state = await run(new_run("write", limits=limits), tools, RunOptions(FunctionModel(reply), controls=build(TINY)))
    assert state.status == "completed" and len(state.to_json()) < 40 * 900_000 * 1.2

"""The run's context budget: old turns dropped whole, the question kept, a turn that cannot fit a stop."""

from __future__ import annotations

import json

from harness.app.client import FunctionModel
from harness.core.loop import run
from harness.core.options import RunOptions
from harness.core.protocols import ModelReply, ModelRequest
from harness.core.registry import Registry
from tests.harness.core.support import state
from tests.harness.helpers import Recorder, calls, script
from wire.types import Message, usage_of


async def test_context_budget_drops_whole_old_turns_and_keeps_the_question() -> None:
    seen: list[list[Message]] = []

    def model(request: ModelRequest) -> ModelReply:
        seen.append(list(request.messages))
        message = calls((f"c{len(seen)}", "probe", {})) if len(seen) < 6 else {"role": "assistant", "content": "done"}
        return ModelReply(message, usage_of(1, 1), "stop")

    probe = Recorder(output="x" * 400)
    result = await run(
        state(context_tokens=400),
        Registry([probe]),
        RunOptions(model=FunctionModel(model), count_tokens=lambda m: len(json.dumps(m)) // 4),
    )
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
    )
    assert result.status == "budget_exceeded" and "context budget" in (result.reason or "")

"""Test doubles at the harness's seams: scripted model functions and a tool that records its runs."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from harness.app.client import FunctionModel
from harness.core.protocols import ModelReply, ModelRequest, ToolContext
from harness.core.state import RunState
from harness.core.stop import StopSignal
from harness.core.turn import Control
from wire.types import AssistantMessage, Message, ToolMessage, usage_of

Step = Callable[[int, str], AssistantMessage | str]
PLAIN: tuple[Control, ...] = ()
"""The loop with no controls, for tests of one mechanism at a time."""
X_PARAMETERS = {"type": "object", "properties": {"x": {"type": "integer"}}, "additionalProperties": False}
"""The arguments every probe tool takes: one integer, nothing else."""


def calls(*specs: tuple[str, str, Mapping[str, Any]]) -> AssistantMessage:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
            for call_id, name, args in specs
        ],
    }


def scripted(step: Step, usage: tuple[int, int] | None = (100, 10)) -> FunctionModel:
    """A model whose reply is `step(turn, tool_text)`, like the scripted provider, with fixed usage per reply."""

    def reply(request: ModelRequest) -> ModelReply:
        turn = sum(1 for m in request.messages if m["role"] == "assistant")
        tool_text = "\n".join(str(m["content"]) for m in request.messages if m["role"] == "tool")
        out = step(turn, tool_text)
        message: AssistantMessage = {"role": "assistant", "content": out} if isinstance(out, str) else out
        finish = "tool_calls" if message.get("tool_calls") else "stop"
        return ModelReply(message, usage_of(*usage) if usage else None, finish)

    return FunctionModel(reply)


def script(*replies: AssistantMessage | str, usage: tuple[int, int] | None = (100, 10)) -> FunctionModel:
    """Reply number `turn` of a fixed list."""
    return scripted(lambda turn, _: replies[turn], usage)


@dataclass
class Recorder:
    """A tool that records every run; it can be told to fail."""

    name: str = "probe"
    read_only: bool = True
    needs_approval: bool = False
    honours_idempotency_key: bool = False
    fail: Exception | None = None
    output: str = "ok"
    description: str = "a probe"
    parameters: Mapping[str, Any] = field(default_factory=lambda: dict(X_PARAMETERS))
    runs: list[dict[str, Any]] = field(default_factory=list)
    keys: list[str] = field(default_factory=list)

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> str:
        self.runs.append(args)
        self.keys.append(ctx.idempotency_key)
        if self.fail is not None:
            raise self.fail
        return self.output


def tool_messages(messages: Sequence[Message]) -> list[ToolMessage]:
    return [m for m in messages if m["role"] == "tool"]


@dataclass
class NoChildren:
    """A tool's child runs kept nowhere (a tool run outside a run has none to resume)."""

    def load(self) -> RunState | None:
        return None

    def save(self, state: RunState) -> None:
        return None


def tool_context(signal: StopSignal | None = None, progress: Callable[[str], None] = lambda label: None) -> ToolContext:
    """What the loop hands a tool, for a tool run outside a run: a call of run-1, a signal, progress ignored."""
    return ToolContext("run-1", "call-1", signal or StopSignal(), progress, NoChildren())

"""repeat_guard: a read-only call already made is not run again, and repeating one brings the answer turn."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

from harness.controls.base import Hooks, RunContext, Turn
from harness.policy import signature
from harness.prompts import repeated_call
from harness.protocols import Tool
from wire.types import ToolCall


@dataclass
class Seen:
    seen: dict[str, str] = field(default_factory=dict)  # a read-only call's signature -> the call id that ran it
    repeats: int = 0  # repeats refused since the last answer turn


@dataclass(frozen=True)
class RepeatGuard(Hooks):
    """An identical read-only call that already ran is not run again: its slot says so and points at the
    earlier result. After `before_answer` such repeats the next turn asks for the answer (a model that asks
    again for what it has is done looking)."""

    name: ClassVar[str] = "repeat_guard"
    before_answer: int = 1

    def before_call(self, run: RunContext, call: ToolCall, tool: Tool, args: dict[str, Any]) -> str | None:
        memory = self.recall(run, Seen)
        earlier = memory.seen.get(signature(tool.name, args)) if tool.read_only else None
        if earlier is None:
            return None
        memory.repeats += 1
        self.keep(run, memory)
        return repeated_call(tool.name, earlier)

    def after_call(
        self, run: RunContext, call: ToolCall, tool: Tool, args: dict[str, Any], result: str, ok: bool
    ) -> None:
        if tool.read_only:
            memory = self.recall(run, Seen)
            memory.seen.setdefault(signature(tool.name, args), call["id"])
            self.keep(run, memory)

    def before_request(self, run: RunContext, turn: Turn) -> None:
        memory = self.recall(run, Seen)
        if turn.answer is not None or memory.repeats < self.before_answer:
            return
        turn.answer = "repeats"
        turn.request = replace(turn.request, tool_choice="none" if turn.request.tools else None)
        memory.repeats = 0
        self.keep(run, memory)

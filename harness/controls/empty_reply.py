"""empty_reply: a reply with neither words nor a call is not the answer."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import ClassVar

from harness.controls.base import Hooks, NotYet, RunContext, Turn, has_results
from harness.core.protocols import ModelReply
from harness.prompts import empty_reply


@dataclass
class Retries:
    retries: int = 0


@dataclass(frozen=True)
class EmptyReply(Hooks):
    """A reply with neither words nor a call is asked again, at most `retries` times a run: first as the answer
    turn when the run has tool results (a small model that has what it needs often ends with nothing to
    say), else by requiring a call (it has not looked yet); then in words, with the question."""

    name: ClassVar[str] = "empty_reply"
    retries: int = 2

    def on_answer(self, run: RunContext, turn: Turn, reply: ModelReply) -> NotYet | None:
        with self.remember(run, Retries) as memory:
            if (reply.message.get("content") or "").strip() or memory.retries >= self.retries:
                return None
            memory.retries += 1
        if memory.retries == 1:
            return NotYet("empty")
        return NotYet("empty", {"role": "user", "content": empty_reply(run.state.question)})

    def before_request(self, run: RunContext, turn: Turn) -> None:
        last = run.state.messages[-1]
        empty = last["role"] == "assistant" and not last.get("tool_calls") and not (last.get("content") or "").strip()
        if not empty or turn.answer is not None or not turn.request.tools:
            return
        if has_results(run.state):
            turn.answer = "empty reply"
            turn.request = replace(turn.request, tool_choice="none")
        elif turn.request.tool_choice is None:
            turn.request = replace(turn.request, tool_choice="required")

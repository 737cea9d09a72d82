"""empty_reply: a reply with neither words nor a call is not the answer."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import ClassVar

from harness.controls.base import Hooks, NotYet, RunContext, Turn
from harness.prompts import empty_reply
from harness.protocols import ModelReply


@dataclass
class Retries:
    retries: int = 0


@dataclass(frozen=True)
class EmptyReply(Hooks):
    """A reply with neither words nor a call is asked again, at most `retries` times a run: first by requiring
    a call (it has not found the answer yet), then in words, with the question."""

    name: ClassVar[str] = "empty_reply"
    retries: int = 2

    def on_answer(self, run: RunContext, turn: Turn, reply: ModelReply) -> NotYet | None:
        memory = self.recall(run, Retries)
        if (reply.message.get("content") or "").strip() or memory.retries >= self.retries:
            return None
        memory.retries += 1
        self.keep(run, memory)
        if memory.retries == 1:
            return NotYet("empty")
        return NotYet("empty", {"role": "user", "content": empty_reply(run.state.question)})

    def before_request(self, run: RunContext, turn: Turn) -> None:
        last = run.state.messages[-1]
        empty = last["role"] == "assistant" and not last.get("tool_calls") and not (last.get("content") or "").strip()
        if empty and turn.answer is None and turn.request.tools and turn.request.tool_choice is None:
            turn.request = replace(turn.request, tool_choice="required")

"""repeat_guard: a call already made is not run again, and repeating one brings the answer turn."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from harness.controls.base import Hooks, batch_of, takes_nothing
from harness.core.policy import signature
from harness.core.protocols import ModelReply, Tool
from harness.core.results import ToolResult
from harness.core.turn import RunContext, Turn
from harness.prompts import repeated_call, repeated_change
from wire.types import ToolCall, choice_mode


@dataclass
class Seen:
    seen: dict[str, str] = field(default_factory=dict)  # a read-only call's signature -> the call id that ran it
    changes: dict[str, str] = field(default_factory=dict)  # a change that ran without an error -> its call id
    repeats: int = 0  # repeats refused since the last answer turn
    forced: bool = False  # the last reply was made under a forced choice (it could not answer instead)


@dataclass(frozen=True)
class RepeatGuard(Hooks):
    """An identical read-only call that already ran is not run again: its slot says so and points at the
    earlier result, and a read-only tool without arguments that already ran is set aside (its one call is
    made). A call that changes something makes every read new again; the same change made again (an edit
    that adds a line adds it twice) is not run, and its slot says that change succeeded. After
    `before_answer` such repeats the next turn asks for the answer: a model that asks again for what it
    has, when it could have answered, is done (a repeat made under a forced choice does not count)."""

    name: ClassVar[str] = "repeat_guard"
    before_answer: int = 1

    def before_call(self, run: RunContext, call: ToolCall, tool: Tool, args: dict[str, Any]) -> str | None:
        with self.remember(run, Seen) as memory:
            earlier = (memory.seen if tool.read_only else memory.changes).get(signature(tool.name, args))
            if earlier is None:
                return None
            if earlier not in batch_of(run, call) and not memory.forced:  # asked again after seeing it: done
                memory.repeats += 1
        return repeated_call(tool.name, earlier) if tool.read_only else repeated_change(tool.name, earlier)

    def after_call(
        self, run: RunContext, call: ToolCall, tool: Tool, args: dict[str, Any], result: ToolResult, ok: bool
    ) -> None:
        with self.remember(run, Seen) as memory:
            if tool.read_only:
                memory.seen.setdefault(signature(tool.name, args), call["id"])
            else:
                memory.seen = {}
                if ok:
                    memory.changes.setdefault(signature(tool.name, args), call["id"])

    def decide(self, run: RunContext, turn: Turn) -> str | None:
        """After `before_answer` repeats the turn asks for the answer (and the count starts again)."""
        with self.remember(run, Seen) as memory:
            if memory.repeats < self.before_answer:
                return None
            memory.repeats = 0
        return "repeats"

    def before_request(self, run: RunContext, turn: Turn) -> None:
        """Read-only tools without arguments that ran are set aside: their one call is made."""
        memory = self.recall(run, Seen)
        turn.set_aside(
            {
                d["function"]["name"]
                for d in turn.request.tools
                if takes_nothing(d)
                and signature(d["function"]["name"], {}) in memory.seen
                and (tool := run.tools.get(d["function"]["name"])) is not None
                and tool.read_only
            }
        )

    def on_reply(self, run: RunContext, turn: Turn, reply: ModelReply) -> ModelReply:
        with self.remember(run, Seen) as memory:
            memory.forced = choice_mode(turn.request.tool_choice) == "required"
        return reply

"""last_turn: the last turn the turn cap allows asks for the answer."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import ClassVar

from harness.controls.base import Hooks, RunContext, Turn


@dataclass(frozen=True)
class LastTurn(Hooks):
    """The last turn `max_turns` allows is an answer turn (no tools) once the run has a tool result: a run
    that looked answers from what it found instead of ending at the cap with nothing. A small model that
    keeps calling (a forced call it repeats, an empty reply answered with a call) otherwise loses every
    result it had."""

    name: ClassVar[str] = "last_turn"

    def before_request(self, run: RunContext, turn: Turn) -> None:
        state = run.state
        cap = state.limits.max_turns
        if cap is None or state.turns + 1 < cap or turn.answer is not None or not turn.request.tools:
            return
        if not any(m["role"] == "tool" for m in state.messages):
            return
        turn.request = replace(turn.request, tools=[], tool_choice=None, parallel_tool_calls=None)
        turn.answer = "the last turn the cap allows"

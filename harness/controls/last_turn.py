"""last_turn: the last turn the turn cap allows asks for the answer."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from harness.controls.base import Hooks, RunContext, Turn, ask_for_answer, has_results


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
        if has_results(state):
            ask_for_answer(turn, "the last turn the cap allows")

"""last_turn: the last turn the turn cap allows asks for the answer."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from harness.controls.base import Hooks, has_results
from harness.core.turn import RunContext, Turn


@dataclass(frozen=True)
class LastTurn(Hooks):
    """The last turn `max_turns` allows is the answer turn (no call) once the run has a tool result: a run
    that looked answers from what it found instead of ending at the cap with nothing. A small model that
    keeps calling (a forced call it repeats, an empty reply answered with a call) otherwise loses every
    result it had."""

    name: ClassVar[str] = "last_turn"

    def decide(self, run: RunContext, turn: Turn) -> str | None:
        state = run.state
        cap = state.limits.max_turns
        if cap is None or state.turns + 1 < cap or not turn.request.tools or not has_results(state):
            return None
        return "the last turn the cap allows"

"""parallel_calls: one reply may hold several calls."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import ClassVar

from harness.controls.base import Hooks, RunContext, Turn


@dataclass(frozen=True)
class ParallelCalls(Hooks):
    """Asks for parallel_tool_calls whenever tools may be called: a small model that reads several files in
    one reply needs fewer turns, and reads more of them before it answers."""

    name: ClassVar[str] = "parallel_calls"

    def before_request(self, run: RunContext, turn: Turn) -> None:
        if turn.request.tools and turn.request.tool_choice != "none":
            turn.request = replace(turn.request, parallel_tool_calls=True)

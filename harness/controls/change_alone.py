"""change_alone: a call that changes files runs only when it is the one call of its reply."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from harness.controls.base import Hooks, batch_of
from harness.core.protocols import Tool
from harness.core.turn import RunContext
from harness.prompts import change_alone
from wire.types import ToolCall


@dataclass(frozen=True)
class ChangeAlone(Hooks):
    """A call that changes something (a write, an edit, a delete, a command) is not run when its reply holds
    other calls: its slot says to make it in a reply of its own. A change written beside the reads it
    depends on was written before their results were seen; and a small model offered several tools that
    change files, asked for parallel calls, calls each of them in one reply, on files the question never
    named. Alone, the change is made once the model has seen what it looked at."""

    name: ClassVar[str] = "change_alone"

    def before_call(self, run: RunContext, call: ToolCall, tool: Tool, args: dict[str, Any]) -> str | None:
        if tool.read_only or len(batch_of(run, call)) <= 1:
            return None
        return change_alone(tool.name)

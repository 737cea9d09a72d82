"""look_first: the first turns must call a tool, so the model looks before it answers."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import ClassVar

from harness.controls.base import Hooks, RunContext, Turn
from harness.tools.base import NO_ARGUMENTS
from wire.types import ToolChoice


@dataclass(frozen=True)
class LookFirst(Hooks):
    """The first `turns` turns must call a tool (tool_choice required): small models otherwise announce a
    call in words, or guess, and stop. The first such call goes to the one tool that needs no arguments, if
    there is exactly one: a look around needs no guess. A server that takes `tool_parameters` is told to
    decode that call with no arguments at all (a small model fills a listing's optional folder with a file's
    path it saw in another tool's schema)."""

    name: ClassVar[str] = "look_first"
    turns: int = 2  # a listing and a read
    tool_parameters: bool = False  # the server narrows calls by the `tool_parameters` field

    def before_request(self, run: RunContext, turn: Turn) -> None:
        request = turn.request
        if not request.tools or request.tool_choice is not None:
            return
        looked = sum(1 for m in run.state.messages if m["role"] == "assistant" and m.get("tool_calls"))
        if looked >= self.turns:
            return
        bare = [t["function"]["name"] for t in request.tools if not t["function"].get("parameters", {}).get("required")]
        choice: ToolChoice = "required"
        extra = request.extra
        if looked == 0 and len(bare) == 1:
            choice = {"type": "function", "function": {"name": bare[0]}}
            if self.tool_parameters:
                narrowing = {**dict(extra.get("tool_parameters") or {}), bare[0]: NO_ARGUMENTS}
                extra = {**extra, "tool_parameters": narrowing}
        turn.request = replace(request, tool_choice=choice, extra=extra)

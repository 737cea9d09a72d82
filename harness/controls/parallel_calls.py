"""parallel_calls: one reply may hold several calls, and repeats none of its own read-only calls."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import ClassVar

from harness.controls.base import Hooks
from harness.core.turn import RunContext, Turn


@dataclass(frozen=True)
class ParallelCalls(Hooks):
    """Asks for parallel_tool_calls whenever tools may be called: a small model that reads several files in
    one reply needs fewer turns, and reads more of them before it answers. A small model that reads in
    parallel also tends to write the same call again and again until max_tokens; a server that takes
    `distinct_calls` (this project's) is asked to end a reply at its first read-only call that repeats one
    of the same reply (such a call would only be refused, and what follows it is mostly more of them).
    With `alone_with_changes`, while a tool that changes something is offered (a write, an edit, a
    command), a reply is asked for one call: a model under a billion parameters asked for several calls
    writes one to each tool offered, in the order offered, and every change among them is one change_alone
    refuses, made before the model saw what it read. A model of a billion parameters or more reads the
    files a change depends on in one reply, and makes the change alone."""

    name: ClassVar[str] = "parallel_calls"
    distinct_calls: bool = False  # the server ends a reply at a repeated call of the tools it is told
    alone_with_changes: bool = False  # one call per reply while a tool that changes something is offered

    def before_request(self, run: RunContext, turn: Turn) -> None:
        request = turn.request
        if not request.tools or request.tool_choice == "none":
            return
        names = [d["function"]["name"] for d in request.tools]
        offered = [tool for name in names if (tool := run.tools.get(name)) is not None]
        if self.alone_with_changes and any(not tool.read_only for tool in offered):
            turn.request = replace(request, parallel_tool_calls=False)
            return
        extra = request.extra
        if self.distinct_calls:
            read_only = [tool.name for tool in offered if tool.read_only]
            extra = {**extra, "distinct_calls": read_only} if read_only else extra
        turn.request = replace(request, parallel_tool_calls=True, extra=extra)

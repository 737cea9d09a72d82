"""The hook points a control acts at, what it is given there, and where it keeps what it remembers.

A turn goes in three phases before its request is sent. First the harness builds the request (the
transcript under the context budget, the tools) and asks every control whether this is the turn to answer
(`decide`: "answer now, because ..."); any reason makes it the answer turn (`Turn.answer_now`: done
looking; only the tools that change files may still be called, until the run has changed one). Then, on a
turn that may still call tools, each control may shape the call (`before_request`: force one with
`Turn.require`, narrow arguments with `Turn.narrow`, set tools aside); a turn whose every tool is set aside
has nothing left to look at and becomes the answer turn. Last, on every turn, the
history processors (`before_send`: fit the window, write the digest) shape what the model reads. The
model replies; each control may see or reshape the reply before it is recorded (`on_reply`); a reply
without calls is the answer unless a control says it is not yet, and why (`on_answer`). Around each call
of a batch: a control may fill its slot without running it (`before_call`) and sees its result
(`after_call`). Every control is asked at every point and what several say is combined the same way
whatever their order in the profile, so a profile is a set of concerns, not a sequence.

What a control remembers lives in the run state (`state.controls[name]`, a small dataclass as JSON), so it
is saved with the state at every change and a resumed run goes on with it; the control objects
themselves hold nothing but their settings. A memory is read back through its dataclass's fields, checked
as the rest of the state is (a saved memory that does not read is a StateError naming the control), and
`with self.remember(run, Kind) as memory:` keeps whatever the block did to it.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar, cast

from pydantic import TypeAdapter, ValidationError

from harness.core.protocols import ModelReply, Tool
from harness.core.results import ToolResult
from harness.core.state import RunState
from harness.core.turn import NotYet, RunContext, Turn
from harness.errors import StateError
from wire.types import (
    ToolCall,
    ToolDefinition,
)

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

M = TypeVar("M", bound="DataclassInstance")  # a control's memory: a dataclass, kept as JSON in the state


class Hooks:
    """A control that does nothing at every point; a control subclasses it and overrides where it acts."""

    name: ClassVar[str] = ""

    def decide(self, run: RunContext, turn: Turn) -> str | None:
        """Why this turn is to be the answer turn, or None (it is not this control's call)."""
        return None

    def before_request(self, run: RunContext, turn: Turn) -> None:
        """Shape a turn that may call tools: its choice, its narrowing, the tools set aside."""
        return None

    def before_send(self, run: RunContext, turn: Turn) -> None:
        """Shape what the model reads (every turn, the answer turn too): fit it, or write it as a digest."""
        return None

    def on_reply(self, run: RunContext, turn: Turn, reply: ModelReply) -> ModelReply:
        return reply

    def on_answer(self, run: RunContext, turn: Turn, reply: ModelReply) -> NotYet | None:
        return None

    def before_call(self, run: RunContext, call: ToolCall, tool: Tool, args: dict[str, Any]) -> str | ToolResult | None:
        """The words for the call's slot instead of running it (a ToolResult when they show what a tool would),
        or None: it runs."""
        return None

    def after_call(
        self, run: RunContext, call: ToolCall, tool: Tool, args: dict[str, Any], result: ToolResult, ok: bool
    ) -> None:
        return None

    def recall(self, run: RunContext, kind: type[M]) -> M:
        """This control's memory in this run (a fresh one when it has none yet), checked against its fields."""
        saved = run.state.controls.get(self.name)
        if saved is None:
            return kind()
        try:
            return reader(kind).validate_python(saved)
        except ValidationError as exc:
            where = ".".join(map(str, exc.errors()[0]["loc"])) or kind.__name__
            problem = exc.errors()[0]["msg"]
            raise StateError(
                f"the saved memory of the {self.name} control does not read ({where}: {problem})"
            ) from None

    def keep(self, run: RunContext, memory: DataclassInstance) -> None:
        """Store this control's memory in the run state; it is saved with the state's next save."""
        run.state.controls[self.name] = dataclasses.asdict(memory)

    @contextmanager
    def remember(self, run: RunContext, kind: type[M]) -> Iterator[M]:
        """This control's memory for the block, kept when the block ends (whatever it changed)."""
        memory = self.recall(run, kind)
        yield memory
        self.keep(run, memory)


def reader(kind: type[M]) -> TypeAdapter[M]:
    """How a memory of this kind is read back from the state's JSON."""
    return cast("TypeAdapter[M]", adapter(kind))


@functools.cache
def adapter(kind: type[object]) -> TypeAdapter[object]:
    return TypeAdapter(kind)  # built once per kind: building one takes about a millisecond


def has_results(state: RunState) -> bool:
    """Whether the run has a tool result to answer from."""
    return any(m["role"] == "tool" for m in state.messages)


def batch_of(run: RunContext, call: ToolCall) -> set[str]:
    """The ids of the calls made in the same reply as `call`."""
    for message in reversed(run.state.messages):
        ids = {c["id"] for c in message.get("tool_calls", [])} if message["role"] == "assistant" else set()
        if call["id"] in ids:
            return ids
    return set()


def takes_nothing(definition: ToolDefinition) -> bool:
    """A tool whose schema declares no arguments: it has exactly one call."""
    parameters = definition["function"].get("parameters") or {}
    return not parameters.get("properties") and not parameters.get("required")

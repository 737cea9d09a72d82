"""The hook points a control acts at, what it is given there, and where it keeps what it remembers.

A turn goes in three phases before its request is sent. First the harness builds the request (the
transcript under the context budget, the tools) and asks each control, in profile order, whether this is
the turn to answer (`decide`: "answer now, because ..."); the first reason given makes it the answer turn
(`Turn.answer_now`), and the rest are not asked. Then, on a turn that may still call tools, each control
may shape the call (`before_request`: force one, narrow arguments, set tools aside); a turn whose every
tool is set aside has nothing left to look at and becomes the answer turn. Last, on every turn, the
history processors (`before_send`: fit the window, write the digest) shape what the model reads. The
model replies; each control may see or reshape the reply before it is recorded (`on_reply`); a reply
without calls is the answer unless a control says it is not yet, and why (`on_answer`). Around each call
of a batch: a control may fill its slot without running it (`before_call`) and sees its result
(`after_call`).

What a control remembers lives in the run state (`state.controls[name]`, a small dataclass as JSON), so it
is saved with the state at every change and a resumed run goes on with it; the control objects
themselves hold nothing but their settings. A memory is read back through its dataclass's fields, checked
as the rest of the state is (a saved memory that does not read is a StateError naming the control), and
`with self.remember(run, Kind) as memory:` keeps whatever the block did to it.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, Protocol, TypeVar, cast

from pydantic import TypeAdapter, ValidationError

from harness.core.protocols import ModelReply, ModelRequest, Tool
from harness.core.results import ToolResult
from harness.core.state import RunState
from harness.errors import StateError
from harness.index.index import WorkspaceIndex
from harness.tools.base import Registry
from wire.types import (
    TOOL_EXTENSIONS,
    Message,
    ToolCall,
    ToolChoice,
    ToolDefinition,
    allowing,
    choice_allows,
    choice_mode,
    choice_names,
)


@dataclass(frozen=True)
class RunContext:
    """What a control may read of the run: its state (every control's memory in it), the tools, a token counter,
    and the index of the workspace, through which a control sees the folder (None for a run with no folder)."""

    state: RunState
    tools: Registry
    count: Callable[[Message], int]
    index: WorkspaceIndex | None = None


@dataclass
class Turn:
    """The turn being asked: its request, why it is the answer turn (None while it may call tools), and the
    tools set aside for it (see `set_aside`)."""

    request: ModelRequest
    answer: str | None = None
    aside: set[str] = field(default_factory=set)
    keeps_aside: bool = False  # the server keeps a reply from the tools set aside, when asked (allowed_tools)

    def answer_now(self, why: str) -> None:
        """Make this the answer turn, the one way there is: no call may be made (tool_choice none) and no
        field that names a tool is sent. The definitions stay, so the prompt is the one the turns before
        read and a server's cache keeps it; a reason already given stays."""
        if self.answer is not None:
            return
        request = self.request
        extra = {key: value for key, value in request.extra.items() if key not in TOOL_EXTENSIONS}
        choice: ToolChoice | None = "none" if request.tools else None
        self.request = replace(request, tool_choice=choice, parallel_tool_calls=None, extra=extra)
        self.answer = why

    def set_aside(self, names: set[str]) -> None:
        """These tools are not to be called this turn. Their definitions stay in the request: chat templates
        write the tools near the top of the prompt, and a tool list that changed from turn to turn would
        make the server read the whole conversation again at every turn. A forced call is kept to the tools
        left (`settle`), named when one is left, or listed on a server that `keeps_aside`; when none is left
        the turn has nothing more to look at (`nothing_left`)."""
        self.aside |= names

    def left(self) -> list[str]:
        """The names of the tools the request offers that are not set aside, in the request's order."""
        return [d["function"]["name"] for d in self.request.tools if d["function"]["name"] not in self.aside]

    def nothing_left(self) -> bool:
        """Whether the request offers tools and every one of them is set aside."""
        names = {d["function"]["name"] for d in self.request.tools}
        return bool(names) and names <= self.aside

    def settle(self) -> ModelRequest:
        """The request as sent: a forced choice kept to the tools not set aside, and named when one is left; on
        a server that keeps a reply from them, a forced choice lists those left (allowed_tools). A choice that
        may answer instead is left as it was: a small model that writes a call to a tool it may not call
        writes it as text, and that text would be its answer."""
        left = self.left()
        if left and self.aside:
            choice = kept_to(self.request.tool_choice, left)
            if self.keeps_aside and choice_mode(choice) == "required" and not choice_names(choice):
                choice = allowing("required", left)
            self.request = replace(self.request, tool_choice=choice)
        return self.request


@dataclass(frozen=True)
class NotYet:
    """A reply without calls that is not the answer yet: why (recorded in the trace), and the words, if any,
    added to the transcript before the next turn."""

    reason: str
    ask: Message | None = None


class Control(Protocol):
    """One concern of the harness for a model, acting at some of the named points of a turn."""

    @property
    def name(self) -> str: ...

    def decide(self, run: RunContext, turn: Turn) -> str | None: ...

    def before_request(self, run: RunContext, turn: Turn) -> None: ...

    def before_send(self, run: RunContext, turn: Turn) -> None: ...

    def on_reply(self, run: RunContext, turn: Turn, reply: ModelReply) -> ModelReply: ...

    def on_answer(self, run: RunContext, turn: Turn, reply: ModelReply) -> NotYet | None: ...

    def before_call(
        self, run: RunContext, call: ToolCall, tool: Tool, args: dict[str, Any]
    ) -> str | ToolResult | None: ...

    def after_call(
        self, run: RunContext, call: ToolCall, tool: Tool, args: dict[str, Any], result: ToolResult, ok: bool
    ) -> None: ...


M = TypeVar("M")


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

    def keep(self, run: RunContext, memory: object) -> None:
        """Store this control's memory in the run state; it is saved with the state's next save."""
        run.state.controls[self.name] = dataclasses.asdict(memory)  # type: ignore[call-overload]

    @contextmanager
    def remember(self, run: RunContext, kind: type[M]) -> Iterator[M]:
        """This control's memory for the block, kept when the block ends (whatever it changed)."""
        memory = self.recall(run, kind)
        yield memory
        self.keep(run, memory)


def reader(kind: type[M]) -> TypeAdapter[M]:
    """How a memory of this kind is read back from the state's JSON."""
    return cast("TypeAdapter[M]", adapter(kind))  # type: ignore[arg-type]  # mypy takes classes for unhashable


@functools.cache
def adapter(kind: type[object]) -> TypeAdapter[object]:
    return TypeAdapter(kind)  # built once per kind: building one takes about a millisecond


def kept_to(choice: ToolChoice | None, left: list[str]) -> ToolChoice | None:
    """A tool_choice that calls only the tools left: a forced call names the tool when one is left; a choice
    that names tools names only those left (any of them, when it named none that is)."""
    mode, allowed = choice_allows(choice, left)
    if mode == "none":
        return choice
    if mode == "required" and len(allowed or left) == 1:
        return {"type": "function", "function": {"name": (allowed or left)[0]}}
    if not choice_names(choice):
        return choice
    if isinstance(choice, dict) and choice["type"] == "allowed_tools":
        return allowing(mode, allowed or left)
    return "required"  # the tool it named is set aside


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

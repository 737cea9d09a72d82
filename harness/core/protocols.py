"""The seams of the harness, declared in one place. Tests plug plain functions and fakes into them."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from harness.core.events import TraceEvent
from harness.core.results import ToolResult
from harness.core.state import Intent, RunState
from harness.core.stop import StopSignal
from wire.types import AssistantMessage, Message, Timings, ToolChoice, ToolDefinition
from wire.types import Usage as ReplyUsage


@dataclass(frozen=True)
class ModelRequest:
    """One request for the next turn. `extra` is sent as further body fields (a grammar, a rendering hint)
    that servers which do not know them ignore."""

    messages: Sequence[Message]
    tools: Sequence[ToolDefinition]
    max_tokens: int | None = None
    tool_choice: ToolChoice | None = None
    parallel_tool_calls: bool | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ModelReply:
    message: AssistantMessage
    usage: ReplyUsage | None
    finish_reason: str | None = None
    timings: Timings | None = None


class Model(Protocol):
    """Anything that answers a chat request: the HTTP client, or a plain function wrapped in FunctionModel."""

    async def complete(self, request: ModelRequest) -> ModelReply: ...


class ChildRuns(Protocol):
    """Where a tool that runs a sub-agent keeps the child's state: inside the parent's, saved with it, so a
    resumed parent continues the child where it stopped and every request it paid for is counted once."""

    def load(self) -> RunState | None: ...

    def save(self, state: RunState) -> None: ...


@dataclass(frozen=True)
class ToolContext:
    """What a running tool may use: the run's Stop signal, a progress callback, its idempotency key, whether
    this call already started once before the run stopped (`retry`), its child run, where to note a process,
    and where to note what a change will do before it does it (`intend`: saved with the state at once) and what
    an earlier attempt of this call noted (`intended`)."""

    run_id: str
    call_id: str
    signal: StopSignal
    progress: Callable[[str], None]
    children: ChildRuns
    retry: bool = False
    started_process: Callable[[int], None] = lambda pid: None
    intend: Callable[[Intent], None] = lambda intent: None
    intended: Intent | None = None

    @property
    def idempotency_key(self) -> str:
        return f"{self.run_id}:{self.call_id}"


ApprovalRule = bool | Callable[[Mapping[str, Any]], bool]


class Tool(Protocol):
    """A tool the model may call. `needs_approval` may be a function of the call's arguments."""

    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...

    @property
    def parameters(self) -> Mapping[str, Any]: ...  # JSON Schema of the arguments object

    @property
    def read_only(self) -> bool: ...

    @property
    def needs_approval(self) -> ApprovalRule: ...

    @property
    def honours_idempotency_key(self) -> bool: ...  # a retry under the same key is a no-op if it already landed

    def run(self, args: dict[str, Any], ctx: ToolContext) -> Awaitable[str | ToolResult]: ...


class StateStore(Protocol):
    """Where the loop saves the state after every change (a file store, or a parent run for a sub-agent)."""

    def save(self, state: RunState) -> None: ...


class TraceSink(Protocol):
    """Where the trace's events go (a JSONL file, spans, the console, a list), each one of `TraceEvent`."""

    def write(self, event: TraceEvent) -> None: ...

"""The seams of the harness, declared in one place. Tests plug plain functions and fakes into them."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from harness.limits import Usage
from harness.state import RunState
from harness.stop import StopSignal
from wire.types import AssistantMessage, Message, Timings, ToolDefinition
from wire.types import Usage as ReplyUsage


@dataclass(frozen=True)
class ModelRequest:
    messages: Sequence[Message]
    tools: Sequence[ToolDefinition]
    max_tokens: int | None = None


@dataclass(frozen=True)
class ModelReply:
    message: AssistantMessage
    usage: ReplyUsage | None
    finish_reason: str | None = None
    timings: Timings | None = None


class Model(Protocol):
    """Anything that answers a chat request: the HTTP client, or a plain function wrapped in FunctionModel."""

    async def complete(self, request: ModelRequest) -> ModelReply: ...


@dataclass(frozen=True)
class ToolContext:
    """What a running tool may use: the run's Stop signal, a progress callback, its idempotency key."""

    run_id: str
    call_id: str
    signal: StopSignal
    progress: Callable[[str], None]
    account: Callable[[Usage], None]  # a tool that spends model tokens (a sub-agent) reports them here

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

    def run(self, args: dict[str, Any], ctx: ToolContext) -> Awaitable[str]: ...


class StateStore(Protocol):
    def save(self, state: RunState) -> None: ...

    def load(self, run_id: str) -> RunState: ...


class TraceSink(Protocol):
    def write(self, event: Mapping[str, Any]) -> None: ...

"""The trace's vocabulary: one TypedDict per event. Every event carries the run id, a sequence number, a
timestamp and its type; tool arguments and outputs appear only when payloads are asked for."""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypeAlias, TypedDict

from wire.types import TimingsRecord


class ParentCall(TypedDict):
    """The call of a parent run that started this (sub-agent's) run."""

    run_id: str
    call_id: str


class Header(TypedDict):
    run_id: str
    seq: int
    ts: float
    parent: NotRequired[ParentCall]


class TurnEvent(Header):
    type: Literal["turn"]
    turn: int
    prompt_tokens: int | None
    completion_tokens: int | None
    total_tokens: int | None
    cached_tokens: int | None
    cost_usd: float | None
    running_cost_usd: float
    finish: str | None
    latency_ms: float
    timings: TimingsRecord | None
    answer_turn: str | None


class ToolStartEvent(Header):
    type: Literal["tool_start"]
    tool: str
    call_id: str
    args: NotRequired[dict[str, Any]]


class ToolProgressEvent(Header):
    type: Literal["tool_progress"]
    tool: str
    call_id: str
    label: str


class ToolResultEvent(Header):
    type: Literal["tool_result"]
    tool: str
    call_id: str
    ms: float
    ok: bool
    ran: bool
    output: NotRequired[str]


class ApprovalRequiredEvent(Header):
    type: Literal["approval_required"]
    tool: str
    call_id: str
    reason: str
    args: NotRequired[dict[str, Any]]


class ContextTrimmedEvent(Header):
    type: Literal["context_trimmed"]
    dropped_messages: int


class NotAnAnswerEvent(Header):
    type: Literal["not_an_answer"]
    turn: int
    why: str


class RunStoppedEvent(Header):
    type: Literal["run_stopped"]
    status: str
    reason: str
    turns: int
    cost_usd: float


TraceEvent: TypeAlias = (
    TurnEvent
    | ToolStartEvent
    | ToolProgressEvent
    | ToolResultEvent
    | ApprovalRequiredEvent
    | ContextTrimmedEvent
    | NotAnAnswerEvent
    | RunStoppedEvent
)

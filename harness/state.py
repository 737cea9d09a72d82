"""The run state: everything a run is, as plain data that round-trips through JSON exactly."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import uuid
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias, cast

from harness.limits import Limits, Prices, Usage
from wire.types import AssistantMessage, Message, ToolCall

FORMAT_VERSION = 1

Status: TypeAlias = Literal["running", "completed", "failed", "max_turns_exceeded", "budget_exceeded", "interrupted"]
InterruptionType: TypeAlias = Literal["approval", "max_turns", "max_budget", "cancelled"]
ErrorSource: TypeAlias = Literal["provider", "tool"]

RESUMABLE: frozenset[Status] = frozenset({"max_turns_exceeded", "budget_exceeded", "interrupted"})
"""A run that ended this way has a valid transcript and can go on; `completed` and `failed` cannot."""


@dataclass(frozen=True)
class Interruption:
    """Why a resumable run stopped, with what a person needs to decide what to do next."""

    type: InterruptionType
    reason: str
    call_id: str | None = None
    tool: str | None = None
    args: dict[str, Any] | None = None

    @classmethod
    def approval(cls, call_id: str, tool: str, args: dict[str, Any], reason: str) -> Interruption:
        return cls("approval", reason, call_id, tool, args)


@dataclass
class RunState:
    run_id: str
    messages: list[Message]
    model: str = ""
    status: Status = "running"
    reason: str | None = None
    interruption: Interruption | None = None
    error: str | None = None
    error_source: ErrorSource | None = None  # what failed a `failed` run: the model provider or a tool
    turns: int = 0
    tool_calls: int = 0  # calls the harness accepted (ran, reused or answered with an error)
    tool_runs: list[str] = field(default_factory=list)  # `name` or `name:path`, one per execution
    usage: Usage = field(default_factory=Usage)
    child_usage: Usage = field(default_factory=Usage)
    limits: Limits = field(default_factory=Limits)
    prices: Prices = field(default_factory=Prices)
    approvals: dict[str, str] = field(default_factory=dict)  # call id -> digest of the approved arguments
    rejections: dict[str, str | None] = field(default_factory=dict)  # call id -> the person's reason
    started: list[str] = field(default_factory=list)  # write calls that began and have no result yet
    read_cache: dict[str, str] = field(default_factory=dict)  # call signature -> call id whose result is reused
    trace_seq: int = 0
    config: dict[str, Any] = field(default_factory=dict)  # how the CLI rebuilds model and tools on resume
    format_version: int = FORMAT_VERSION

    @property
    def cost_usd(self) -> float:
        """The priced cost of the run's own turns (children are accounted in `child_usage`)."""
        return self.usage.cost_usd

    @property
    def total_cost_usd(self) -> float:
        return self.usage.cost_usd + self.child_usage.cost_usd

    @property
    def answer(self) -> str | None:
        last = self.messages[-1] if self.messages else None
        if self.status == "completed" and last is not None and last["role"] == "assistant":
            return last.get("content") or ""
        return None

    @property
    def resumable(self) -> bool:
        return self.status in RESUMABLE

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self), ensure_ascii=False, separators=(",", ":"))

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> RunState:
        fields = dict(raw)
        fields["usage"] = Usage(**raw["usage"])
        fields["child_usage"] = Usage(**raw["child_usage"])
        fields["limits"] = Limits(**raw["limits"])
        fields["prices"] = Prices(**raw["prices"])
        fields["interruption"] = Interruption(**raw["interruption"]) if raw.get("interruption") else None
        return cls(**fields)


def new_run(
    prompt: str,
    *,
    system: str | None = None,
    model: str = "",
    limits: Limits | None = None,
    prices: Prices | None = None,
    run_id: str | None = None,
    config: dict[str, Any] | None = None,
) -> RunState:
    messages: list[Message] = [{"role": "system", "content": system}] if system else []
    messages.append({"role": "user", "content": prompt})
    return RunState(
        run_id=run_id or new_run_id(),
        messages=messages,
        model=model,
        limits=limits or Limits(),
        prices=prices or Prices(),
        config=config or {},
    )


def new_run_id() -> str:
    return "run-" + uuid.uuid4().hex[:12]


def pending(messages: list[Message]) -> list[ToolCall]:
    """Tool calls of the last assistant message that have no tool result yet."""
    for index in range(len(messages) - 1, -1, -1):
        if messages[index]["role"] == "assistant":
            answered = {m["tool_call_id"] for m in messages[index + 1 :] if m["role"] == "tool"}
            assistant = cast(AssistantMessage, messages[index])
            return [c for c in assistant.get("tool_calls", []) if c["id"] not in answered]
    return []


def canonical(arguments: object) -> str:
    return json.dumps(arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def digest(arguments: object) -> str:
    return hashlib.sha256(canonical(arguments).encode()).hexdigest()

"""The run state: everything a run is, as plain data that round-trips through JSON exactly.

A state is written as ASCII JSON (non-ASCII escaped), so any string a model or a tool produced, a lone
surrogate included, is saved and read back unchanged. On load the file is validated against these very
types (pydantic reads the dataclasses), and a problem names the field.
"""

from __future__ import annotations

import dataclasses
import json
import uuid
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias, cast

from pydantic import JsonValue, TypeAdapter, ValidationError

from harness.core.config import RunConfig
from harness.core.limits import Limits, Prices, Usage
from harness.core.results import Shown
from harness.errors import InvalidState
from wire.types import AssistantMessage, Message, ToolCall

FORMAT_VERSION = 3

Status: TypeAlias = Literal["running", "completed", "failed", "max_turns_exceeded", "budget_exceeded", "interrupted"]
InterruptionType: TypeAlias = Literal["approval", "max_turns", "max_budget", "cancelled"]
ErrorSource: TypeAlias = Literal["provider", "tool", "harness"]

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


@dataclass(frozen=True)
class Ending:
    """How a run ends: one of the five, with the reason, and for a resumable ending what it waits for."""

    status: Status
    reason: str
    interruption: Interruption | None = None


def over(status: Status, kind: InterruptionType, reason: str) -> Ending:
    return Ending(status, reason, Interruption(kind, reason))


@dataclass(frozen=True)
class Intent:
    """What a change to one file will do, noted before it writes: the file's sha256 before (None: no file) and
    after (None: deleted). A retry after a kill compares the file with both: it landed, or it did not, or the
    file changed since."""

    path: str
    before: str | None
    after: str | None


@dataclass(frozen=True)
class Parent:
    """The run and call that started a sub-agent's run."""

    run_id: str
    call_id: str


@dataclass
class RunState:
    run_id: str
    messages: list[Message]
    model: str = ""
    status: Status = "running"
    reason: str | None = None
    interruption: Interruption | None = None
    error: str | None = None
    error_source: ErrorSource | None = None  # what failed a `failed` run
    turns: int = 0
    tool_calls: int = 0  # calls the harness accepted (ran, reused or answered with an error)
    tool_runs: list[str] = field(default_factory=list)  # `name` or `name:path`, one per execution
    usage: Usage = field(default_factory=Usage)
    limits: Limits = field(default_factory=Limits)
    prices: Prices = field(default_factory=Prices)
    approvals: dict[str, str] = field(default_factory=dict)  # call id -> fingerprint of the approved arguments
    rejections: dict[str, str | None] = field(default_factory=dict)  # call id -> the person's reason
    started: list[str] = field(default_factory=list)  # write calls that began and have no result yet
    processes: dict[str, int] = field(default_factory=dict)  # call id -> process group of a command it started
    read_cache: dict[str, str] = field(default_factory=dict)  # call signature -> call id whose result is reused
    controls: dict[str, dict[str, JsonValue]] = field(default_factory=dict)  # each control's memory, as JSON
    shown: dict[str, Shown] = field(default_factory=dict)  # call id -> what its result shows (a tool that says)
    intents: dict[str, Intent] = field(default_factory=dict)  # call id -> what its change will do, until its result
    children: dict[str, RunState] = field(default_factory=dict)  # call id -> a sub-agent's run, as it stands
    trace_seq: int = 0
    config: RunConfig | None = None  # how to rebuild model and tools on resume
    parent: Parent | None = None  # for a sub-agent's run, the parent's call that started it
    format_version: int = FORMAT_VERSION

    @property
    def cost_usd(self) -> float:
        """The priced cost of the run's own turns (children are accounted in `child_usage`)."""
        return self.usage.cost_usd

    @property
    def child_usage(self) -> Usage:
        """What the sub-agents spent, every request counted once, from their own saved states."""
        total = Usage()
        for child in self.children.values():
            total.merge(child.usage)
            total.merge(child.child_usage)
        return total

    @property
    def total_cost_usd(self) -> float:
        return self.usage.cost_usd + self.child_usage.cost_usd

    @property
    def cost_known(self) -> bool:
        return self.usage.cost_known and self.child_usage.cost_known

    def over_budget(self, budget: float) -> str | None:
        """Why the budget stops the run before the next turn, if it does (an unknown cost stops it too)."""
        if not self.cost_known:
            return "cost unknown: a reply carried no usage, so the budget cannot be enforced"
        spent = self.total_cost_usd
        if spent >= budget:
            return f"spent ${spent:.6f} of a ${budget:.6f} budget (checked before each turn: overshoot <= one turn)"
        return None

    @property
    def answer(self) -> str | None:
        """The model's answer: its last text reply, when the run ended on one (an answer turn at the cap too)."""
        last = self.messages[-1] if self.messages else None
        if last is None or last["role"] != "assistant" or last.get("tool_calls"):
            return None
        if self.status == "completed" or (self.status == "max_turns_exceeded" and last.get("content")):
            return last.get("content") or ""
        return None

    @property
    def question(self) -> str:
        return next((str(m["content"]) for m in self.messages if m["role"] == "user"), "")

    @property
    def resumable(self) -> bool:
        return self.status in RESUMABLE

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self), ensure_ascii=True, separators=(",", ":"))


STATE = TypeAdapter(RunState)


def state_from(raw: dict[str, Any]) -> RunState:
    """Validate a decoded state file against RunState, naming the first field that is wrong."""
    try:
        return STATE.validate_python(migrate(raw))
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"]) or "the state"
        raise InvalidState(where, error["msg"]) from exc


def migrate(raw: dict[str, Any]) -> dict[str, Any]:
    """Bring an older state file to this format, one version at a time."""
    if raw.get("format_version") == 1:
        raw = from_format_1(raw)
    if raw.get("format_version") == 2:
        raw = from_format_2(raw)
    return raw


SMALL_MODEL_FIELDS = ("seen_calls", "repeats", "empty_replies", "nudges", "checked", "digest")
# what format 2's small-model settings meant: the five controls `small` held when format 3 replaced it,
# written out here so an old state keeps its meaning whatever the profile becomes
FORMAT_2_SMALL: dict[str, Any] = {
    "name": "small",
    "controls": [
        {"name": name, "params": {}}
        for name in ("repeat_guard", "empty_reply", "look_first", "parallel_calls", "digest_answers")
    ],
    "why": "asked for",
}


def from_format_2(raw: dict[str, Any]) -> dict[str, Any]:
    """Format 2 kept the controls' counters on the state and their settings as one flat record."""
    upgraded = {k: v for k, v in raw.items() if k not in SMALL_MODEL_FIELDS}
    upgraded["controls"] = {
        "repeat_guard": {"seen": raw.get("seen_calls") or {}, "repeats": raw.get("repeats") or 0},
        "empty_reply": {"retries": raw.get("empty_replies") or 0},
    }
    config = raw.get("config")
    if isinstance(config, dict) and "controls" in config:
        old = config.get("controls")
        small = isinstance(old, dict) and (old.get("look_turns") or old.get("repeat_guard"))
        upgraded["config"] = {**config, "controls": FORMAT_2_SMALL if small else {"name": "none"}}
    for key, child in (raw.get("children") or {}).items():
        if isinstance(child, dict) and child.get("format_version") == 2:
            upgraded.setdefault("children", {})[key] = from_format_2(child)
    upgraded["format_version"] = 3
    return upgraded


def from_format_1(raw: dict[str, Any]) -> dict[str, Any]:
    """Format 1 kept the config as a free dict and children's spend as a counter."""
    upgraded = {k: v for k, v in raw.items() if k not in ("child_usage", "config")}
    old = raw.get("config") or {}
    if isinstance(old, dict) and {"base_url", "workspace"} <= set(old):
        keep = {"base_url", "workspace", "api_key_env", "max_tokens", "dedupe", "tool_errors", "allow_writes"}
        upgraded["config"] = {k: v for k, v in old.items() if k in keep and v is not None} | {
            "model": raw.get("model", ""),
            "presets": old.get("presets", []),
            "research_model": old.get("research_model"),
        }
    upgraded["format_version"] = 2
    return upgraded


def new_run(
    prompt: str,
    *,
    system: str | None = None,
    model: str = "",
    limits: Limits | None = None,
    prices: Prices | None = None,
    run_id: str | None = None,
    config: RunConfig | None = None,
    parent: Parent | None = None,
) -> RunState:
    messages: list[Message] = [{"role": "system", "content": system}] if system else []
    messages.append({"role": "user", "content": prompt})
    return RunState(
        run_id=run_id or new_run_id(),
        messages=messages,
        model=model or (config.model if config else ""),
        limits=limits or Limits(),
        prices=prices or Prices(),
        config=config,
        parent=parent,
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


def fresh_ids(messages: list[Message], reply: AssistantMessage) -> AssistantMessage:
    """The reply with each call id the transcript (or the reply itself) already holds renamed, so every
    result answers exactly one call: a server may number calls per conversation ("call_0"), and a turn
    asked as a fresh conversation never shows the model the run's ids."""
    calls = reply.get("tool_calls") or []
    taken = {c["id"] for m in messages if m["role"] == "assistant" for c in m.get("tool_calls", [])}
    renamed: list[ToolCall] = []
    for call in calls:
        new_id, n = call["id"], 1
        while new_id in taken:
            new_id, n = f"{call['id']}_{n}", n + 1
        taken.add(new_id)
        renamed.append(call if new_id == call["id"] else {**call, "id": new_id})
    if all(a is b for a, b in zip(renamed, calls, strict=True)):
        return reply
    return {**reply, "tool_calls": renamed}

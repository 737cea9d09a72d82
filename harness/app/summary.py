"""What a finished (or stopped) run comes to, in one shape: the CLI prints it, the eval extends it per task."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from harness.core.state import RunState, pending


@dataclass
class RunSummary:
    run_id: str
    status: str
    reason: str | None
    resumable: bool
    answer: str | None
    turns: int
    tool_runs: list[str]
    prompt_tokens: int
    completion_tokens: int
    cached_tokens: int
    cost_usd: float | None  # None when some reply carried no usage: unknown is never $0
    child_prompt_tokens: int
    child_completion_tokens: int
    child_cost_usd: float | None
    interruption: dict[str, Any] | None
    pending: list[str]
    wall_ms: float
    controls: str  # the controls profile that ran, and how it was chosen

    @classmethod
    def of(cls, state: RunState, wall_ms: float) -> RunSummary:
        usage, children = state.usage, state.child_usage
        return cls(
            run_id=state.run_id,
            status=state.status,
            reason=state.reason,
            resumable=state.resumable,
            answer=state.answer,
            turns=state.turns,
            tool_runs=list(state.tool_runs),
            prompt_tokens=usage.prompt_tokens,
            completion_tokens=usage.completion_tokens,
            cached_tokens=usage.cached_tokens,
            cost_usd=usage.known_cost,
            child_prompt_tokens=children.prompt_tokens,
            child_completion_tokens=children.completion_tokens,
            child_cost_usd=children.known_cost,
            interruption=asdict(state.interruption) if state.interruption else None,
            pending=[c["id"] for c in pending(state.messages)],
            wall_ms=round(wall_ms, 1),
            controls=controls_of(state),
        )

    def facts(self) -> dict[str, Any]:
        return asdict(self)


def controls_of(state: RunState) -> str:
    profile = state.config.controls if state.config is not None else None
    if profile is None:
        return "none"
    return f"{profile.name} ({profile.why})" if profile.why else profile.name

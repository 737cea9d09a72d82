"""Running a suite's tasks through the harness against each provider, and measuring every turn."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from evals.scoring import HARNESS_FAILURES, Failure, classify, judge, read_paths, trajectory
from evals.suite import Suite, Task
from evals.truth import files_of, truth_for
from harness.client import OpenAIClient
from harness.limits import Limits
from harness.loop import run
from harness.options import RunOptions
from harness.prompts import SYSTEM_PROMPT
from harness.state import new_run
from harness.tools.base import Registry
from harness.tools.catalogue import reading_tools
from harness.tools.workspace import Workspace
from harness.trace import MemoryTrace


@dataclass(frozen=True)
class Provider:
    name: str
    base_url: str
    model: str


@dataclass(frozen=True)
class Settings:
    trials: int = 1
    max_turns: int = 8
    max_budget_usd: float | None = None
    timeout_s: float | None = 300.0
    max_tokens: int | None = 384


@dataclass
class Turn:
    index: int
    latency_ms: float
    prompt_tokens: int | None
    completion_tokens: int | None
    cached_tokens: int | None
    finish: str | None
    server: dict[str, Any] | None  # llama-server timings, when the server reports them


@dataclass
class TaskResult:
    provider: str
    model: str
    task: str
    prompt: str
    trial: int
    correct: bool
    why: str
    failure: Failure | None
    status: str
    reason: str | None
    answer: str | None
    turns: int
    tool_runs: list[str]
    prompt_tokens: int
    completion_tokens: int
    cached_tokens: int
    cost_usd: float | None
    wall_ms: float
    model_ms: float
    harness_ms: float  # wall minus the model requests: tool runs and the harness's own work
    trajectory: dict[str, Any]
    turn_log: list[Turn] = field(default_factory=list)

    @property
    def harness_error(self) -> bool:
        return self.failure in HARNESS_FAILURES


def turns_of(trace: MemoryTrace, run_id: str) -> list[Turn]:
    return [
        Turn(
            e["turn"],
            e["latency_ms"],
            e["prompt_tokens"],
            e["completion_tokens"],
            e["cached_tokens"],
            e["finish"],
            e["timings"],
        )
        for e in trace.of("turn")
        if e["run_id"] == run_id
    ]


async def run_task(
    provider: Provider, suite: Suite, task: Task, trial: int, settings: Settings, scratch: Path
) -> TaskResult:
    workspace = suite.build(scratch / f"{provider.name}-{task.id}-{trial}")
    truth = truth_for(task.check, workspace)
    tools = Registry(reading_tools(Workspace(workspace)))
    limits = Limits(max_turns=settings.max_turns, max_budget_usd=settings.max_budget_usd, timeout_s=settings.timeout_s)
    state, trace = new_run(task.prompt, system=SYSTEM_PROMPT, model=provider.model, limits=limits), MemoryTrace()
    async with OpenAIClient(provider.base_url, provider.model, timeout_s=settings.timeout_s or 600) as client:
        began = time.perf_counter()
        state = await run(state, tools, RunOptions(model=client, trace=trace, max_tokens=settings.max_tokens))
        wall = (time.perf_counter() - began) * 1000
    verdict = judge(task.check, truth, state.answer, set(files_of(workspace)), read_paths(state))
    path = trajectory(state, tools, list(task.needs))
    turns = turns_of(trace, state.run_id)
    model_ms = sum(t.latency_ms for t in turns)
    usage = state.usage
    return TaskResult(
        provider=provider.name,
        model=provider.model,
        task=task.id,
        prompt=task.prompt,
        trial=trial,
        correct=verdict.correct,
        why=verdict.why,
        failure=classify(state, verdict, path),
        status=state.status,
        reason=state.reason,
        answer=state.answer,
        turns=state.turns,
        tool_runs=state.tool_runs,
        prompt_tokens=usage.prompt_tokens,
        completion_tokens=usage.completion_tokens,
        cached_tokens=usage.cached_tokens,
        cost_usd=usage.cost_usd if usage.cost_known else None,
        wall_ms=round(wall, 1),
        model_ms=round(model_ms, 1),
        harness_ms=round(wall - model_ms, 1),
        trajectory=asdict(path) | {"sound": path.sound},
        turn_log=turns,
    )


async def run_suite(
    suite: Suite,
    providers: list[Provider],
    settings: Settings,
    scratch: Path,
    progress: Callable[[int, int, str], None],
) -> list[TaskResult]:
    results: list[TaskResult] = []
    total = len(providers) * len(suite.tasks) * settings.trials
    for provider in providers:
        for trial in range(1, settings.trials + 1):
            for task in suite.tasks:
                progress(len(results), total, f"{provider.name}: {task.prompt}")
                results.append(await run_task(provider, suite, task, trial, settings, scratch))
    progress(total, total, "done")
    return results


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def pass_hat_k(results: list[TaskResult], k: int) -> float:
    """pass^k: the chance that all of k trials of a task succeed, averaged over tasks (k = the trials run)."""
    by_task: dict[str, list[bool]] = {}
    for r in results:
        by_task.setdefault(r.task, []).append(r.correct)
    return statistics.fmean(all(v[:k]) for v in by_task.values()) if by_task else 0.0


def aggregate(results: list[TaskResult], trials: int) -> dict[str, Any]:
    turn_ms = [t.latency_ms for r in results for t in r.turn_log]
    scored = [r for r in results if not r.harness_error]
    return {
        "correct": sum(r.correct for r in scored),
        "scored": len(scored),
        "harness_or_provider_errors": len(results) - len(scored),
        "pass_hat_k": pass_hat_k(results, trials) if trials > 1 else None,
        "turns": sum(r.turns for r in results),
        "tool_runs": sum(len(r.tool_runs) for r in results),
        "prompt_tokens": sum(r.prompt_tokens for r in results),
        "completion_tokens": sum(r.completion_tokens for r in results),
        "cached_tokens": sum(r.cached_tokens for r in results),
        "cost_usd": sum(r.cost_usd or 0.0 for r in results),
        "wall_ms": round(sum(r.wall_ms for r in results), 1),
        "harness_ms": round(sum(r.harness_ms for r in results), 1),
        "turn_ms_mean": round(statistics.fmean(turn_ms), 1) if turn_ms else None,
        "turn_ms_p50": percentile(turn_ms, 0.50),
        "turn_ms_p95": percentile(turn_ms, 0.95),
        "failures": {
            f: sum(r.failure == f for r in results) for f in sorted({r.failure for r in results if r.failure})
        },
    }

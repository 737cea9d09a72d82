"""Running a suite's tasks through the harness against each provider, and measuring every turn.

Each task is a real harness run built from a RunConfig (harness.app.runtime), so the eval runs exactly what
`harness run` runs. A call that needs approval (delete_file in the seed suite) is refused in words, as a
person would, and the run goes on. Tasks may run concurrently (`concurrency`); each has its own workspace,
so for a greedy model the results are those of a sequential run.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from evals.scoring import HARNESS_FAILURES, Failure, classify, judge, read_paths, trajectory
from evals.suite import Suite, Task
from evals.truth import CHANGES, files_of, truth_for
from harness.app.runtime import runnable, start, tools_for
from harness.app.summary import RunSummary
from harness.app.trace import MemoryTrace
from harness.core.approvals import approve, reject
from harness.core.config import AUTO, Profile, RunConfig
from harness.core.limits import Limits
from harness.core.protocols import Model
from harness.core.state import RunState
from harness.prompts import FOR_TOOLS
from wire.types import Message, TimingsRecord

REFUSAL = "the eval does not allow changes to the files; answer from what you have read"


@dataclass(frozen=True)
class Provider:
    name: str
    base_url: str
    model: str
    key_env: str = "LLM_API_KEY"  # the variable holding its API key, if it needs one
    profile: Profile | None = None  # the controls its runs are told (a fleet: as its first server's card says)
    window: int | None = None  # the model's window its runs are told, likewise


@dataclass(frozen=True)
class EvalSettings:
    trials: int = 1
    max_turns: int = 8
    max_budget_usd: float | None = None
    timeout_s: float | None = 600.0
    max_tokens: int | None = 384
    concurrency: int = 1
    controls: Profile = AUTO
    system: str | None = None  # None: the default for the task's tools


@dataclass
class Turn:
    index: int
    latency_ms: float
    prompt_tokens: int | None
    completion_tokens: int | None
    cached_tokens: int | None
    finish: str | None
    answer_turn: str | None
    server: TimingsRecord | None  # llama-server timings, when the server reports them


@dataclass
class TaskResult(RunSummary):
    """One task's run: the harness's own summary, plus what the eval knows (task, verdict, timing split)."""

    provider: str = ""
    model: str = ""
    task: str = ""
    prompt: str = ""
    suite: str = ""
    kind: str = ""  # the kind of question (the task's id when its suite names none)
    language: str = "en"  # the language it was asked in
    code: str | None = None  # a real project's language of code
    trial: int = 1
    correct: bool = False
    why: str = ""
    failure: Failure | None = None
    model_ms: float = 0.0  # the model requests, summed
    harness_ms: float = 0.0  # wall minus the model requests: tool runs and the harness's own work
    mean_turn_ms: float | None = None  # wall / turns: the whole run's time per turn, tools included
    trajectory: dict[str, Any] = field(default_factory=dict)
    turn_log: list[Turn] = field(default_factory=list)
    messages: list[Message] = field(default_factory=list)  # the run's transcript, as the model saw it grow

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
            e.get("answer_turn"),
            e["timings"],
        )
        for e in trace.of("turn")
        if e["run_id"] == run_id
    ]


def config_for(provider: Provider, suite: Suite, settings: EvalSettings, workspace: Path, task: Task) -> RunConfig:
    return RunConfig(
        base_url=provider.base_url,
        model=provider.model,
        api_key_env=provider.key_env,
        workspace=str(workspace),
        tools=tuple(task.tools or suite.tools),
        allow_writes=task.check.kind in CHANGES,  # a change task is asked by a person who wants the change
        max_tokens=settings.max_tokens,
        request_timeout_s=settings.timeout_s or 600,
        controls=provider.profile or settings.controls,
        window=provider.window,
    )


async def run_to_end(
    state: RunState, trace: MemoryTrace, model: Model | None = None, approve_calls: bool = False
) -> RunState:
    """Run; a call that waits for approval is refused in words and the run goes on (bounded), or approved
    for a task that asks for a change (its end state is what is scored). `model` stands in for the config's
    server (Inspect's model)."""
    for _ in range(16):
        async with runnable(state, trace=trace, model=model) as runner:
            state = await runner.run()
        if not (state.interruption and state.interruption.type == "approval" and state.interruption.call_id):
            return state
        if approve_calls:
            approve(state, state.interruption.call_id)
        else:
            reject(state, state.interruption.call_id, REFUSAL)
    return state


async def run_task(
    provider: Provider, suite: Suite, task: Task, trial: int, settings: EvalSettings, scratch: Path
) -> TaskResult:
    workspace = suite.build(scratch / f"{provider.name}-{task.id}-{trial}")
    truth = truth_for(task.check, workspace)
    files = set(files_of(workspace))
    limits = Limits(max_turns=settings.max_turns, max_budget_usd=settings.max_budget_usd, timeout_s=settings.timeout_s)
    config = config_for(provider, suite, settings, workspace, task)
    system = settings.system if settings.system is not None else FOR_TOOLS
    state, trace = start(task.prompt, config, limits=limits, system=system), MemoryTrace()
    began = time.perf_counter()
    state = await run_to_end(state, trace, approve_calls=task.check.kind in CHANGES)
    wall = (time.perf_counter() - began) * 1000
    verdict = judge(task.check, truth, state.answer, files, read_paths(state.tool_runs), workspace, task.language)
    path = trajectory(state, tools_for(config), list(task.needs))
    turns = turns_of(trace, state.run_id)
    model_ms = sum(t.latency_ms for t in turns)
    return TaskResult(
        **vars(RunSummary.of(state, wall)),
        provider=provider.name,
        model=provider.model,
        task=task.id,
        prompt=task.prompt,
        suite=suite.name,
        kind=task.kind or task.id,
        language=task.language,
        code=suite.code,
        trial=trial,
        correct=verdict.correct,
        why=verdict.why,
        failure=classify(state, verdict, path),
        model_ms=round(model_ms, 1),
        harness_ms=round(wall - model_ms, 1),
        mean_turn_ms=round(wall / state.turns, 1) if state.turns else None,
        trajectory=asdict(path) | {"sound": path.sound},
        turn_log=turns,
        messages=state.messages,
    )


async def run_suite(
    suite: Suite,
    providers: list[Provider],
    settings: EvalSettings,
    scratch: Path,
    progress: Callable[[str], None],
) -> list[TaskResult]:
    """Every task of every trial against every provider, `concurrency` at a time; results in suite order."""
    gate, told = asyncio.Semaphore(settings.concurrency), set[str]()
    jobs = [
        (provider, trial, task)
        for provider in providers
        for trial in range(1, settings.trials + 1)
        for task in suite.tasks
    ]

    async def one(provider: Provider, trial: int, task: Task) -> TaskResult:
        async with gate:
            result = await run_task(provider, suite, task, trial, settings, scratch)
        progress(f"{provider.name}: {task.prompt}")
        if result.failure == "provider_error" and provider.name not in told:  # said once per provider, at once
            told.add(provider.name)
            print(f"eval: {provider.name} failed: {result.reason}", file=sys.stderr, flush=True)
        return result

    return list(await asyncio.gather(*(one(*job) for job in jobs)))


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


def total_cost(results: list[TaskResult]) -> float | None:
    """The sum, or None when any run's cost is unknown: an unknown is never counted as $0."""
    costs = [r.cost_usd for r in results]
    return None if any(c is None for c in costs) else sum(c for c in costs if c is not None)


def prompt_and_generation(results: list[TaskResult]) -> dict[str, float | int | None]:
    """Where the model's time went, from the timings a llama.cpp-style server returns with every reply: prompt
    reading (tokens read, tokens served from its cache) and generation. None when any turn came without them."""
    timings = [t.server for r in results for t in r.turn_log]
    known = [s for s in timings if s and "prompt_ms" in s and "predicted_ms" in s]
    if not known or len(known) < len(timings):
        return dict.fromkeys(("prompt_ms", "generation_ms", "prompt_tokens_read", "prompt_tokens_cached"))
    return {
        "prompt_ms": round(sum(float(s["prompt_ms"]) for s in known), 1),
        "generation_ms": round(sum(float(s["predicted_ms"]) for s in known), 1),
        "prompt_tokens_read": sum(int(s.get("prompt_n", 0)) for s in known),
        "prompt_tokens_cached": sum(int(s.get("cache_n", 0)) for s in known),
    }


def aggregate(results: list[TaskResult], trials: int) -> dict[str, Any]:
    turn_ms = [t.latency_ms for r in results for t in r.turn_log]
    scored = [r for r in results if not r.harness_error]
    turns = sum(r.turns for r in results)
    wall = sum(r.wall_ms for r in results)
    return {
        "correct": sum(r.correct for r in scored),
        "scored": len(scored),
        "harness_or_provider_errors": len(results) - len(scored),
        "pass_hat_k": pass_hat_k(results, trials) if trials > 1 else None,
        "turns": turns,
        "tool_runs": sum(len(r.tool_runs) for r in results),
        "prompt_tokens": sum(r.prompt_tokens for r in results),
        "completion_tokens": sum(r.completion_tokens for r in results),
        "cached_tokens": sum(r.cached_tokens for r in results),
        "cost_usd": total_cost(results),
        "wall_ms": round(wall, 1),
        "model_ms": round(sum(r.model_ms for r in results), 1),
        "harness_ms": round(sum(r.harness_ms for r in results), 1),
        **prompt_and_generation(results),
        "mean_turn_ms": round(wall / turns, 1) if turns else None,
        "turn_ms_mean": round(statistics.fmean(turn_ms), 1) if turn_ms else None,
        "turn_ms_p50": percentile(turn_ms, 0.50),
        "turn_ms_p95": percentile(turn_ms, 0.95),
        "failures": {
            f: sum(r.failure == f for r in results) for f in sorted({r.failure for r in results if r.failure})
        },
    }

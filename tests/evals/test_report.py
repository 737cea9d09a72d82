"""The report's time split: prompt reading (with its cached share), generation, the rest, the harness's own."""

from __future__ import annotations

from evals import report
from evals.runner import TaskResult, Turn, aggregate
from wire.types import TimingsRecord


def result(task: str, *servers: TimingsRecord | None, model_ms: float = 0.0, harness_ms: float = 0.0) -> TaskResult:
    turns = [Turn(i + 1, 100.0, 10, 2, 0, "stop", None, server) for i, server in enumerate(servers)]
    return TaskResult(
        run_id=task, status="completed", reason=None, resumable=False, answer="a", turns=len(turns),
        tool_runs=[], prompt_tokens=10, completion_tokens=2, cached_tokens=0, cost_usd=None,
        child_prompt_tokens=0, child_completion_tokens=0, child_cost_usd=None, interruption=None, pending=[],
        wall_ms=model_ms + harness_ms, controls="none", provider="local", model="m", task=task, prompt=task,
        model_ms=model_ms, harness_ms=harness_ms, turn_log=turns,
    )  # fmt: skip


def timings(read: int, cached: int, prompt_ms: float, generation_ms: float) -> TimingsRecord:
    return {"prompt_n": read, "cache_n": cached, "prompt_ms": prompt_ms, "predicted_ms": generation_ms,
            "prompt_per_second": 0.0, "predicted_n": 0, "predicted_per_second": 0.0, "cache_ms": None,
            "draft_n": None, "draft_n_accepted": None}  # fmt: skip


def test_the_split_sums_every_turn_and_shows_the_cached_share() -> None:
    results = [
        result("a", timings(300, 0, 3000, 400), timings(60, 320, 700, 500), model_ms=4800, harness_ms=50),
        result("b", timings(40, 320, 600, 450), model_ms=1100, harness_ms=20),
    ]
    total = aggregate(results, 1)
    assert (total["prompt_ms"], total["generation_ms"]) == (4300, 1350)
    assert (total["prompt_tokens_read"], total["prompt_tokens_cached"]) == (400, 640)
    [line] = report.split(total)
    assert line == (
        "time: prompt reading=4,300ms (400 tokens read, 62% from the cache) generation=1,350ms "
        "rest of the requests=250ms harness=70ms"
    )
    assert line in report.console(results, 1, {})


def test_no_split_when_any_turn_came_without_the_servers_timings() -> None:
    total = aggregate([result("a", timings(300, 0, 3000, 400), None, model_ms=3500)], 1)
    assert total["prompt_ms"] is None and report.split(total) == []
    assert "time:" not in report.console([result("b", None)], 1, {})


def test_the_report_says_which_mode_the_server_ran_in() -> None:
    results = [result("a", timings(300, 0, 3000, 400), model_ms=3500)]
    manifest = {"providers": {"local": {"server": {"mode": "throughput"}}}}
    assert report.console(results, 1, manifest).splitlines()[0] == "== local (m, throughput mode) =="
    assert report.console(results, 1, {}).splitlines()[0] == "== local (m) =="

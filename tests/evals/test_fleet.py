"""A suite spread over two servers through LiteLLM's router, started by the eval, gets the same answers as the
same suite over one server, and both servers answer some of its requests."""

from __future__ import annotations

import json
import re
from pathlib import Path

import httpx
import pytest

from evals.__main__ import main
from serve.scripted.app import create_app
from tests.conftest import AppServer


def answers(out: Path) -> dict[str, str | None]:
    summary = json.loads((out / "summary.json").read_text())
    return {r["task"]: r["answer"] for r in summary["results"]}


def completions(server: AppServer) -> float:
    """How many chat completions a server has answered (its /metrics counter)."""
    metrics = httpx.get(f"{server.url}/metrics").text
    found = re.search(r'^requests_total\{path="/v1/chat/completions",status="200"\} (\S+)$', metrics, re.M)
    return float(found.group(1)) if found else 0.0


@pytest.mark.slow
def test_a_suite_over_two_servers_through_the_router_gets_the_answers_it_gets_over_one(tmp_path: Path) -> None:
    # Each reply takes a while, as a model's does: the tasks' requests overlap, and the router, least busy
    # first, must send some of them to the second server whatever the machine's speed.
    first, second = AppServer(create_app(latency_ms=300)), AppServer(create_app(latency_ms=300))
    try:
        alone = ["run", "--provider", f"one={first.base_url},model=solve", "--out", str(tmp_path / "one")]
        assert main(alone) == 0
        before = [completions(s) for s in (first, second)]
        spread = f"fleet={first.base_url}+{second.base_url},model=solve"
        assert main(["run", "--provider", spread, "--concurrency", "4", "--out", str(tmp_path / "fleet")]) == 0
        assert answers(tmp_path / "fleet") == answers(tmp_path / "one")
        assert len(answers(tmp_path / "one")) == 6 and "6/6 right" in (tmp_path / "fleet" / "report.md").read_text()
        served = [completions(s) - b for s, b in zip((first, second), before, strict=True)]
        assert all(n > 0 for n in served), served
    finally:
        first.stop()
        second.stop()

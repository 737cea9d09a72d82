"""A suite spread over two servers through LiteLLM's router, started by the eval, gets the same answers as the
same suite over one server, and both servers answer some of its requests."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from evals.__main__ import main
from serve.scripted.app import create_app
from tests.conftest import AppServer


def answers(out: Path) -> dict[str, str | None]:
    summary = json.loads((out / "summary.json").read_text())
    return {r["task"]: r["answer"] for r in summary["results"]}


@pytest.mark.slow
def test_a_suite_over_two_servers_through_the_router_gets_the_answers_it_gets_over_one(tmp_path: Path) -> None:
    first, second = AppServer(create_app()), AppServer(create_app())
    try:
        alone = ["run", "--provider", f"one={first.base_url},model=solve", "--out", str(tmp_path / "one")]
        assert main(alone) == 0
        spread = f"fleet={first.base_url}+{second.base_url},model=solve"
        assert main(["run", "--provider", spread, "--concurrency", "4", "--out", str(tmp_path / "fleet")]) == 0
        assert answers(tmp_path / "fleet") == answers(tmp_path / "one")
        assert len(answers(tmp_path / "one")) == 6 and "6/6 right" in (tmp_path / "fleet" / "report.md").read_text()
        served = [httpx.get(f"{s.url}/metrics").text for s in (first, second)]
        assert all('requests_total{path="/v1/chat/completions",status="200"}' in m for m in served)
    finally:
        first.stop()
        second.stop()

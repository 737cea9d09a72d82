"""8. Kill and resume: a real process killed after turn 2, restored from disk, finished."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from evals.experiments.lab import Lab, Table, check, usd
from evals.servers import PROJECT_ROOT, ServerProcess
from harness.app.store import FileStore
from harness.app.trace import read_trace

LATENCY_MS = "200"  # a window for the kill while the harness waits for turn 3


def harness(*args: str) -> list[str]:
    return [sys.executable, "-m", "harness", *args]


def run_cli(args: list[str]) -> dict[str, Any]:
    done = subprocess.run(harness(*args), cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=120)
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def kill_after_second_tool(args: list[str], trace: Path) -> None:
    process = subprocess.Popen(harness(*args), cwd=PROJECT_ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and process.poll() is None:
        if any(e["type"] == "tool_result" and e["call_id"] == "c2" for e in read_trace(trace)):
            os.kill(process.pid, signal.SIGKILL)
            break
        time.sleep(0.005)
    process.wait()
    check(process.returncode == -signal.SIGKILL, "the harness process was not killed where intended")


def measure(lab: Lab, server: ServerProcess) -> Table:
    workspace, state_dir = lab.workspace(), lab.root / "resume-state"
    common = [
        "--base-url",
        server.base_url,
        "--model",
        "plan",
        "--workspace",
        str(workspace),
        "--state-dir",
        str(state_dir),
        "--json",
    ]
    whole = run_cli(["run", "Which file mentions a timeout?", *common, "--run-id", "whole"])
    trace = state_dir / "killed.trace.jsonl"
    kill_after_second_tool(["run", "Which file mentions a timeout?", *common, "--run-id", "killed"], trace)
    restored = FileStore(state_dir).load("killed")
    final = run_cli(["resume", "killed", "--state-dir", str(state_dir), "--json"])
    ran_all = [e["call_id"] for e in read_trace(trace) if e["type"] == "tool_result" and e.get("ran")]
    table = Table("8. kill and resume", ["run", "turns", "cost", "status", "tool runs"])
    table.add(
        "process died after turn 2",
        restored.turns,
        usd(restored.cost_usd),
        restored.status,
        ", ".join(restored.tool_runs),
    )
    table.add(
        "restored from disk, resumed",
        final["turns"],
        usd(final["cost_usd"]),
        final["status"],
        ", ".join(final["tool_runs"]),
    )
    table.add(
        "never interrupted", whole["turns"], usd(whole["cost_usd"]), whole["status"], ", ".join(whole["tool_runs"])
    )
    table.notes.append(f"restored: turns={restored.turns} messages={len(restored.messages)} status={restored.status}")
    table.notes.append(f"tool runs across BOTH processes: {len(ran_all)} ({', '.join(ran_all)})")
    check(sorted(ran_all) == ["c1", "c2"], f"a tool ran twice across the kill: {ran_all}")
    check(final["cost_usd"] == whole["cost_usd"] and final["turns"] == whole["turns"], "resumed cost or turns differ")
    return table


async def experiment(lab: Lab) -> Table:
    with ServerProcess("serve.scripted", "--latency-ms", LATENCY_MS) as server:
        return await asyncio.to_thread(measure, lab, server)

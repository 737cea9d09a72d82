"""A real harness process killed with SIGKILL at several points, then resumed from disk.

Invariants: no completed tool run happens twice, a write that may have run is never silently re-run,
and the final turns and cost equal an uninterrupted run's.
"""

from __future__ import annotations

import os
import signal
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.app.trace import read_trace
from tests.conftest import AppServer, scripted_server
from tests.harness.cli_support import harness, last_json, start

Event = dict[str, Any]


@pytest.fixture(scope="module")
def slow_provider() -> Iterator[AppServer]:
    """Replies take 300 ms, so a kill can land while the harness waits for the model."""
    yield from scripted_server(latency_ms=300)


def kill_when(args: list[str], trace: Path, condition: Callable[[list[Event]], bool]) -> list[Event]:
    process = start(*args)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        events = read_trace(trace)
        if condition(events):
            os.kill(process.pid, signal.SIGKILL)
            process.communicate(timeout=30)
            assert process.returncode == -signal.SIGKILL
            return events
        if process.poll() is not None:
            raise AssertionError(f"the run ended before the kill point: {process.communicate()}")
        time.sleep(0.005)
    process.kill()
    raise AssertionError("kill point never reached")


def started_runs(events: list[Event]) -> list[str]:
    """Every execution of a tool, across both processes (a start is written before the tool runs; a kill
    between the state save and the result's line may leave the result unwritten, never the start)."""
    return [e["call_id"] for e in events if e["type"] == "tool_start"]


def common(provider: AppServer, workspace: Path, state_dir: Path, model: str, run_id: str) -> list[str]:
    return [
        *("--base-url", provider.base_url, "--model", model, "--workspace", str(workspace)),
        *("--state-dir", str(state_dir), "--run-id", run_id, "--json", "--controls", "none"),
    ]


KILL_POINTS: dict[str, Callable[[list[Event]], bool]] = {
    "after the model's reply": lambda events: any(e["type"] == "turn" and e["turn"] == 2 for e in events),
    "after a tool result": lambda events: any(e["type"] == "tool_result" and e["call_id"] == "c1" for e in events),
    "after the second tool result": lambda events: any(
        e["type"] == "tool_result" and e["call_id"] == "c2" for e in events
    ),
}


@pytest.mark.parametrize("point", list(KILL_POINTS))
def test_killed_plan_resumes_without_rerunning_tools_or_repaying_turns(
    slow_provider: AppServer, workspace: Path, tmp_path: Path, point: str
) -> None:
    baseline = last_json(
        harness(
            "run", "Which file mentions a timeout?", *common(slow_provider, workspace, tmp_path / "a", "plan", "whole")
        ).stdout
    )
    trace = tmp_path / "b" / "k.trace.jsonl"
    before = kill_when(
        ["run", "Which file mentions a timeout?", *common(slow_provider, workspace, tmp_path / "b", "plan", "k")],
        trace,
        KILL_POINTS[point],
    )
    resumed = harness("resume", "k", "--state-dir", str(tmp_path / "b"), "--json")
    assert resumed.returncode == 0, resumed.stderr
    final = last_json(resumed.stdout)
    starts = Counter(started_runs(read_trace(trace)))
    finished = {e["call_id"] for e in before if e["type"] == "tool_result"}
    assert set(starts) == {"c1", "c2"} and all(starts[call] == 1 for call in finished)  # no completed run again
    assert all(count <= 2 for count in starts.values())  # only a run cut off by the kill may start once more
    assert final["tool_runs"] == baseline["tool_runs"] == ["list_files", "read_file:errors.log"]
    assert (final["turns"], final["cost_usd"], final["answer"]) == (
        baseline["turns"],
        baseline["cost_usd"],
        baseline["answer"],
    )
    turns = [e["turn"] for e in read_trace(trace) if e["type"] == "turn"]
    assert turns == sorted(set(turns))  # no turn was paid for twice


def test_a_kill_during_a_write_tool_is_never_silently_rerun(
    slow_provider: AppServer, workspace: Path, tmp_path: Path
) -> None:
    marker = workspace / "runs.txt"
    preset = f"check=sh -c 'echo ran >> {marker}; sleep 3; echo done'"
    args = [*common(slow_provider, workspace, tmp_path / "st", "command", "w"), "--trusted-command", preset]
    trace = tmp_path / "st" / "w.trace.jsonl"
    kill_when(
        ["run", "Run the check", *args],
        trace,
        # the command has taken effect: its line is written (the file exists a moment before, once `>>` opens it)
        lambda events: any(e["type"] == "tool_start" for e in events) and marker.exists() and marker.read_text() != "",
    )
    resumed = harness("resume", "w", "--state-dir", str(tmp_path / "st"), "--json")
    facts = last_json(resumed.stdout)
    assert resumed.returncode == 5 and facts["interruption"]["type"] == "approval"
    assert "may have taken effect" in facts["reason"] and marker.read_text() == "ran\n"
    rejected = harness(
        "resume", "w", "--state-dir", str(tmp_path / "st"), "--reject", "c1", "--reason", "it already ran", "--json"
    )
    assert rejected.returncode == 0 and marker.read_text() == "ran\n"  # ran once, never silently again
    assert "declined" in last_json(rejected.stdout)["answer"]


@pytest.mark.slow
@pytest.mark.parametrize("attempt", range(5))
def test_an_edit_killed_the_moment_its_file_changed_is_made_once_on_resume(
    slow_provider: AppServer, workspace: Path, tmp_path: Path, attempt: int
) -> None:
    """The edit adds a line the way the tool's description says (its new text holds its old text): a retry that
    looked only for the old text would add the line again."""
    notes = workspace / "notes.txt"
    before = notes.read_text()
    args = [*common(slow_provider, workspace, tmp_path / "st", "add_line", "e"), "--allow-writes"]
    process = start("run", "Add a line to notes.txt.", *args)
    deadline = time.monotonic() + 60
    while notes.read_text() == before and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.0005)
    os.kill(process.pid, signal.SIGKILL)  # the moment the file changed: between the write and the state's save
    process.communicate(timeout=30)
    resumed = harness("resume", "e", "--state-dir", str(tmp_path / "st"), "--json")
    if resumed.returncode != 0:  # the run had ended before the kill: nothing to resume
        assert "cannot be resumed" in resumed.stderr
    assert notes.read_text() == before.rstrip("\n") + "\nCheck the backups.\n"

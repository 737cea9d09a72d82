"""The harness CLI, run as a real process against the scripted provider."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.app.cli import default_state_dir, report
from harness.app.trace import read_trace
from harness.core.config import ALL_TOOLS
from harness.core.state import new_run
from harness.errors import ToolError
from harness.fs.workspace import Workspace
from tests.conftest import ROOT, AppServer
from tests.harness.cli_support import harness, harness_process, last_json, start


def base(scripted: AppServer, workspace: Path, tmp_path: Path, model: str) -> list[str]:
    return [
        "--base-url",
        scripted.base_url,
        "--model",
        model,
        "--workspace",
        str(workspace),
        "--state-dir",
        str(tmp_path / "st"),
        "--tools",
        ",".join(ALL_TOOLS),  # the scenarios call every tool
    ]


def test_run_prints_the_answer_a_summary_line_and_a_json_last_line(
    scripted: AppServer, workspace: Path, tmp_path: Path
) -> None:
    done = harness_process(
        "run", "Which file mentions a timeout?", *base(scripted, workspace, tmp_path, "plan"), "--json"
    )
    assert done.returncode == 0, done.stderr
    facts = last_json(done.stdout)
    assert facts["status"] == "completed" and facts["turns"] == 3
    assert facts["tool_runs"] == ["list_files", "read_file:errors.log"]
    assert facts["answer"].startswith("errors.log mentions a timeout: ERROR worker 7 timed out after 30000 ms")
    assert facts["prompt_tokens"] > 0 and facts["completion_tokens"] > 0 and facts["cost_usd"] > 0
    assert facts["interruption"] is None and facts["reason"] == "the model answered"
    assert "running read_file (c2)" in done.stderr  # live progress lines
    assert facts["controls"] == "none (auto: the server does not say how many parameters plan has)"
    plain = harness("run", "Which file mentions a timeout?", *base(scripted, workspace, tmp_path, "plan"))
    assert plain.stdout.splitlines()[0].startswith("errors.log mentions a timeout")
    assert "turns=3 tools=2" in plain.stdout and "status=completed" in plain.stdout


def test_each_ending_has_its_exit_code(scripted: AppServer, workspace: Path, tmp_path: Path) -> None:
    capped = harness("run", "go", *base(scripted, workspace, tmp_path, "runaway"), "--max-turns", "3", "--json")
    assert capped.returncode == 3 and last_json(capped.stdout)["status"] == "max_turns_exceeded"
    assert "resumable: harness resume" in capped.stderr
    poor = harness("run", "go", *base(scripted, workspace, tmp_path, "runaway"), "--max-budget-usd", "0.002", "--json")
    assert poor.returncode == 4 and "overshoot <= one turn" in last_json(poor.stdout)["reason"]
    (workspace / "secret.txt").symlink_to("/etc/hostname")
    failed = harness("run", "go", *base(scripted, workspace, tmp_path, "forbidden"), "--json")
    assert failed.returncode == 1 and last_json(failed.stdout)["status"] == "failed"
    unknown = harness("run", "go", *base(scripted, workspace, tmp_path, "no-such-scenario"), "--json")
    assert unknown.returncode == 1 and "404" in last_json(unknown.stdout)["reason"]


def test_approval_stops_and_resume_approves_or_rejects(scripted: AppServer, workspace: Path, tmp_path: Path) -> None:
    stopped = harness(
        "run", "Clean up", *base(scripted, workspace, tmp_path, "destructive"), "--run-id", "d1", "--json"
    )
    assert stopped.returncode == 5
    facts = last_json(stopped.stdout)
    assert facts["interruption"]["type"] == "approval" and facts["interruption"]["call_id"] == "c2"
    assert facts["interruption"]["args"] == {"path": "access.log"} and "--approve c2" in stopped.stderr
    state_dir = str(tmp_path / "st")
    shown = harness("show", "d1", "--state-dir", state_dir)
    assert "delete_file" in shown.stdout and "status=interrupted" in shown.stdout
    approved = harness("resume", "d1", "--state-dir", state_dir, "--approve", "c2", "--json")
    assert approved.returncode == 0 and last_json(approved.stdout)["answer"] == "Deleted access.log to free space."
    assert not (workspace / "access.log").exists() and last_json(approved.stdout)["turns"] == 3
    (workspace / "access.log").write_text("back")
    harness("run", "Clean up", *base(scripted, workspace, tmp_path, "destructive"), "--run-id", "d2")
    rejected = harness("resume", "d2", "--state-dir", state_dir, "--reject", "c2", "--json")
    assert last_json(rejected.stdout)["answer"] == "I did not delete anything: you declined the deletion."
    assert (workspace / "access.log").exists()
    again = harness("resume", "d2", "--state-dir", state_dir)
    assert again.returncode == 2 and "cannot be resumed" in again.stderr
    wrong = harness("run", "Clean up", *base(scripted, workspace, tmp_path, "destructive"), "--run-id", "d3")
    bad = harness("resume", "d3", "--state-dir", state_dir, "--approve", "zz")
    assert wrong.returncode == 5 and bad.returncode == 2 and "not pending" in bad.stderr


def test_ctrl_c_interrupts_saves_and_resume_finishes(scripted: AppServer, workspace: Path, tmp_path: Path) -> None:
    process = start("run", "Scan", *base(scripted, workspace, tmp_path, "slow"), "--run-id", "s1", "--json")
    trace = tmp_path / "st" / "s1.trace.jsonl"
    deadline = time.monotonic() + 30
    while not any(e["type"] == "tool_progress" for e in read_trace(trace)) and time.monotonic() < deadline:
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    out, _ = process.communicate(timeout=30)
    assert process.returncode == 5
    assert last_json(out)["reason"] == "user pressed Ctrl-C"
    saved = json.loads((tmp_path / "st" / "s1.json").read_text())
    assert saved["status"] == "interrupted" and saved["turns"] == 1
    resumed = harness("resume", "s1", "--state-dir", str(tmp_path / "st"), "--json")
    assert resumed.returncode == 0 and last_json(resumed.stdout)["turns"] == 2
    assert "scanned 1200 files" in last_json(resumed.stdout)["answer"]


def test_a_run_in_use_refuses_a_second_process(scripted: AppServer, workspace: Path, tmp_path: Path) -> None:
    process = start("run", "Scan", *base(scripted, workspace, tmp_path, "slow"), "--run-id", "busy")
    trace = tmp_path / "st" / "busy.trace.jsonl"
    deadline = time.monotonic() + 30
    while not read_trace(trace) and time.monotonic() < deadline:
        time.sleep(0.05)
    second = harness("resume", "busy", "--state-dir", str(tmp_path / "st"))
    process.send_signal(signal.SIGINT)
    process.communicate(timeout=30)
    assert second.returncode == 2 and "in use by another process" in second.stderr


def test_corrupt_state_file_is_reported_by_name(tmp_path: Path) -> None:
    (tmp_path / "broken.json").write_text("{not json")
    shown = harness("resume", "broken", "--state-dir", str(tmp_path))
    assert shown.returncode == 2 and f"{tmp_path / 'broken.json'}: not valid JSON" in shown.stderr


def test_help_lists_the_tools_and_the_endings() -> None:
    help_text = harness("run", "--help").stdout
    for name in ALL_TOOLS:
        assert f"  {name}(" in help_text
    top = harness("--help").stdout
    assert "Resumable:" in top and "max_turns_exceeded, budget_exceeded" in top and "interrupted 5" in top


def test_a_run_that_cannot_stop_at_its_deadline_is_ended_soon_after_it() -> None:
    """The last resort behind --timeout: whatever holds the process past the deadline (here a blocking sleep
    where the run's awaits would be), it exits as interrupted within the grace, saying how to resume."""
    body = "import time; from harness.app.cli import Watchdog\nwith Watchdog(0.5, 'r1', 'st'): time.sleep(60)"
    began = time.monotonic()
    done = subprocess.run([sys.executable, "-c", body], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 5 and "harness resume r1 --state-dir st" in done.stderr, done.stderr
    assert time.monotonic() - began < 30  # the grace is 3 s; this bounds a hang, it is not a speed claim


def test_a_state_rewritten_since_a_call_was_shown_is_not_approved(
    scripted: AppServer, workspace: Path, tmp_path: Path
) -> None:
    """Run A stops for approval of one delete; its saved state is rewritten (as a run with writes over that
    folder might) to name another file; the command A printed approves nothing and the other file stays."""
    (workspace / "precious.db").write_text("keep me")
    stopped = harness("run", "Clean up", *base(scripted, workspace, tmp_path, "destructive"), "--run-id", "a")
    printed = next(line for line in stopped.stderr.splitlines() if line.startswith("resumable: "))
    command = printed.removeprefix("resumable: harness ").split("   ")[0].split()
    assert command[-2] == "--approve" and command[-1].startswith("c2@")
    saved = tmp_path / "st" / "a.json"
    saved.write_text(saved.read_text().replace('\\"access.log\\"', '\\"precious.db\\"'))
    refused = harness(*command)
    assert refused.returncode == 2 and "not the call that was shown for approval" in refused.stderr
    assert (workspace / "precious.db").read_text() == "keep me" and (workspace / "access.log").exists()
    saved.write_text(saved.read_text().replace('\\"precious.db\\"', '\\"access.log\\"'))
    approved = harness(*command)
    assert approved.returncode == 0 and "approved: delete_file" in approved.stderr
    assert not (workspace / "access.log").exists() and (workspace / "precious.db").exists()


def test_the_runs_records_are_out_of_every_tools_reach(scripted: AppServer, workspace: Path, tmp_path: Path) -> None:
    """By default runs are saved outside the workspace; a state folder inside it is still out of reach: not
    listed, not read, not written, whatever it is called."""
    inside = workspace / "records"
    args = ["--base-url", scripted.base_url, "--model", "plan", "--workspace", str(workspace), "--json"]
    harness("run", "Which file mentions a timeout?", *args, "--state-dir", str(inside), "--run-id", "r1")
    assert (inside / "r1.json").exists()
    space = Workspace(workspace, private=[inside])
    assert all(not e.path.startswith("records/") for e in space.walk().entries)
    for attempt in (lambda: space.read_bytes("records/r1.json", 100), lambda: space.write_atomic("records/x", b"x")):
        with pytest.raises(ToolError, match="holds the harness's own records"):
            attempt()
    with pytest.raises(ToolError, match="holds the harness's own records"):
        space.walk(under="records")
    assert "local-agent-stack" in default_state_dir() and not default_state_dir().startswith(str(workspace))


def test_ctrl_c_during_a_search_of_a_huge_file_ends_the_run_at_once(
    scripted: AppServer, workspace: Path, tmp_path: Path
) -> None:
    (workspace / "big.log").write_bytes(b"e\n" * 2_000_000)  # 4 MB: two million matching lines
    process = start("run", "Search", *base(scripted, workspace, tmp_path, "search_everything"), "--run-id", "s2")
    trace = tmp_path / "st" / "s2.trace.jsonl"
    deadline = time.monotonic() + 30
    while not any(e["type"] == "tool_start" for e in read_trace(trace)) and time.monotonic() < deadline:
        time.sleep(0.02)
    time.sleep(0.3)  # inside the file
    process.send_signal(signal.SIGINT)
    pressed = time.monotonic()
    process.communicate(timeout=60)
    assert process.returncode == 5 and time.monotonic() - pressed < 5


def test_an_answer_is_printed_without_what_a_terminal_would_act_on(capsys: pytest.CaptureFixture[str]) -> None:
    state = new_run("q")
    state.messages.append(
        {"role": "assistant", "content": "done\x1b[2J\x1b]52;c;ZXZpbA==\x07 \u202eevil\x00\nline two"}
    )
    state.status = "completed"
    report(state, 1.0, False, "st")
    out = capsys.readouterr().out
    assert out.startswith("done\\x1b[2J\\x1b]52;c;ZXZpbA==\\x07 \\u202eevil\\x00\nline two\n")
    assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out


@pytest.mark.parametrize(("question", "said"), [("   ", "the question is empty"),
                                                ("caf\udce9?", "the question is not valid UTF-8")])  # fmt: skip
def test_an_empty_or_undecodable_question_is_refused_in_a_sentence(
    scripted: AppServer, workspace: Path, tmp_path: Path, question: str, said: str
) -> None:
    refused = harness("run", question, *base(scripted, workspace, tmp_path, "plan"))
    assert refused.returncode == 2 and said in refused.stderr and "Traceback" not in refused.stderr
    assert not (tmp_path / "st").exists() or not list((tmp_path / "st").glob("*.json"))

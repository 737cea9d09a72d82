"""The supervisor a command runs under: it passes the exit code through, says when a command cannot start, and
takes the command's whole process group with it when the harness dies, even by SIGKILL."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import harness.tools.supervise as supervise

SUPERVISE = supervise.__file__


def supervised(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, SUPERVISE, str(os.getpid()), *argv], capture_output=True, text=True, timeout=30
    )


def test_the_commands_exit_code_and_output_pass_through() -> None:
    done = supervised(sys.executable, "-c", "print('hi'); raise SystemExit(3)")
    assert (done.returncode, done.stdout) == (3, "hi\n")


def test_a_command_that_cannot_start_exits_127_saying_why(tmp_path: Path) -> None:
    done = supervised(str(tmp_path / "no-such-program"))
    assert done.returncode == supervise.CANNOT_START
    assert "cannot start" in done.stderr and "no-such-program" in done.stderr


def alive(pid: int) -> bool:
    """Running: a process that ended but was not yet reaped (a zombie, state Z) is not."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def test_a_killed_harness_leaves_no_command_or_grandchild_running(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    grandchild = (
        "import subprocess,time; p=subprocess.Popen(['sleep','60']);"
        f"open({str(pids)!r},'w').write(str(p.pid)); time.sleep(60)"
    )
    harness = (
        "import os,subprocess,sys,time;"
        f"subprocess.Popen([sys.executable,{SUPERVISE!r},str(os.getpid()),sys.executable,'-c',{grandchild!r}],"
        "start_new_session=True); time.sleep(60)"
    )
    fake_harness = subprocess.Popen([sys.executable, "-c", harness])
    deadline = time.monotonic() + 30
    while not (pids.exists() and pids.read_text()) and time.monotonic() < deadline:
        time.sleep(0.05)
    sleeper = int(pids.read_text())
    assert alive(sleeper)
    fake_harness.send_signal(signal.SIGKILL)
    fake_harness.wait()
    deadline = time.monotonic() + 10
    while alive(sleeper) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(sleeper)

"""Runs one command so that it cannot outlive the harness: `python supervise.py HARNESS_PID ARGV...`.

Started by run_command as the leader of a new process group, it asks the kernel for SIGTERM when its
parent dies (PR_SET_PDEATHSIG), runs the command in the same group and exits with its exit code. If the
harness dies, even by SIGKILL, the supervisor kills the whole group, so no command and none of its
children is left running for a resume to run again beside it. Standard library only: it starts in
milliseconds and imports nothing of the harness.
"""

import ctypes
import os
import signal
import subprocess
import sys

PR_SET_PDEATHSIG = 1
CANNOT_START = 127


def kill_group(*_: object) -> None:
    os.killpg(os.getpgrp(), signal.SIGKILL)  # the supervisor is in the group too: this ends everything


def main() -> int:
    harness, argv = int(sys.argv[1]), sys.argv[2:]
    signal.signal(signal.SIGTERM, kill_group)
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != harness:  # the harness died before the request above took effect
        kill_group()
    try:
        command = subprocess.Popen(argv)
    except OSError as exc:
        print(f"cannot start {argv[0]}: {exc.strerror or exc}", file=sys.stderr)
        return CANNOT_START
    return command.wait()


if __name__ == "__main__":
    sys.exit(main())

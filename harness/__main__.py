"""`python -m harness` and the `harness` command. A signal before the run installs its own handlers (while
the modules load) ends the process quietly, with the shell's code for it, never with a traceback.

The exit is immediate (`os._exit`): an exception raised from a signal handler can land where Python ignores
it (a callback of the import machinery), and the process would go on as if nothing were pressed. Nothing
has run by then; a state file is written atomically, so a save cut short leaves the one before it."""

import os
import signal
import sys
from contextlib import suppress
from types import FrameType


def quietly(signum: int, frame: FrameType | None) -> None:
    for stream in (sys.stdout, sys.stderr):
        with suppress(Exception):
            stream.flush()
    os._exit(128 + signum)


def entry() -> int:
    signal.signal(signal.SIGINT, quietly)
    signal.signal(signal.SIGTERM, quietly)
    from harness.app.cli import main

    try:
        return main()
    except KeyboardInterrupt:  # after a run put the default handler back
        return 128 + signal.SIGINT


if __name__ == "__main__":
    sys.exit(entry())

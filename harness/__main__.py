"""`python -m harness` and the `harness` command. A signal before the run installs its own handlers (while
the modules load) ends the process quietly, with the shell's code for it, never with a traceback."""

import signal
import sys
from types import FrameType


def quietly(signum: int, frame: FrameType | None) -> None:
    sys.exit(128 + signum)


def entry() -> int:
    signal.signal(signal.SIGINT, quietly)
    signal.signal(signal.SIGTERM, quietly)
    from harness.cli import main

    try:
        return main()
    except KeyboardInterrupt:  # after a run put the default handler back
        return 128 + signal.SIGINT


if __name__ == "__main__":
    sys.exit(entry())

"""Whether llama.cpp's repacked weights run on this machine, checked in a child process before they are used.

Repacked weights (llama.cpp's "extra buffer types": CPU_REPACK, and AMX on Intel CPUs that have it) are
llama.cpp's default and its fastest kernels, used by the throughput mode and by llama-server. On some
machines they crash the process outright: the AMX matrix kernel segfaults at a call's second row on
Sapphire Rapids-class CPUs (ggml-org/llama.cpp#20824), where plain weights run fine. A crash cannot be caught
in the process that has it, so a child loads the model that way and makes calls of the sizes a server
makes; repacked weights are used only if the child came back whole, and plain ones otherwise (slower,
never wrong). `python -m serve.llama.kernels GGUF THREADS` is that child.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from serve.llama.engine import Engine, Row
from serve.llama.modes import Throughput

SIZES = (1, 2, 3, 16, 64, 512)  # rows per call: one takes the vector kernel, two or more the matrix ones
TIMEOUT_S = 300.0


def repacking_fails(
    gguf: Path, threads: int, command: Sequence[str] | None = None, timeout_s: float = TIMEOUT_S
) -> str | None:
    """Why repacked weights cannot be used here (a crash, an error, no answer in time), or None when the
    child ran every call size with them."""
    command = list(command or [sys.executable, "-m", "serve.llama.kernels", str(gguf), str(threads)])
    try:
        done = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return f"a check with them did not end within {timeout_s:g} s"
    except OSError as exc:
        return f"a check with them could not start: {exc}"
    if done.returncode < 0:
        return f"they crashed a check on this machine ({signal.Signals(-done.returncode).name})"
    if done.returncode != 0:
        lines = done.stderr.decode("utf-8", errors="replace").strip().splitlines()
        return f"a check with them failed ({lines[-1] if lines else f'exit code {done.returncode}'})"
    return None


def check(gguf: Path, threads: int) -> None:
    engine = Engine(gguf, context=max(SIZES) + 1, threads=threads, sequences=1, mode=Throughput(repacked=True))
    for size in SIZES:
        engine.decode([Row(1 + position, position, 0, logits=position == size - 1) for position in range(size)])
        engine.logits(size - 1)
        engine.keep(0, 0)


if __name__ == "__main__":
    check(Path(sys.argv[1]), int(sys.argv[2]))

"""The check that decides whether the throughput mode may use llama.cpp's repacked weights: a child process
that crashes, fails or hangs means plain weights, said in a sentence."""

from __future__ import annotations

import sys
from pathlib import Path

from models.registry import SMOLLM2
from models.weights import locate
from serve.llama.kernels import repacking_fails

GGUF = Path("unused.gguf")


def child(body: str) -> list[str]:
    return [sys.executable, "-c", body]


def test_a_child_that_crashes_fails_or_hangs_is_a_reason_not_to_repack() -> None:
    crash = child("import os, signal; os.kill(os.getpid(), signal.SIGSEGV)")
    assert repacking_fails(GGUF, 2, crash) == "they crashed a check on this machine (SIGSEGV)"
    error = child("import sys; sys.exit('llama.cpp could not load the model')")
    assert repacking_fails(GGUF, 2, error) == "a check with them failed (llama.cpp could not load the model)"
    hang = child("import time; time.sleep(60)")
    assert repacking_fails(GGUF, 2, hang, timeout_s=0.5) == "a check with them did not end within 0.5 s"
    assert (repacking_fails(GGUF, 2, ["/nonexistent/python"]) or "").startswith("a check with them could not start")
    assert repacking_fails(GGUF, 2, child("pass")) is None


def test_the_real_check_ends_with_an_answer_on_this_machine() -> None:
    """Whatever the CPU: repacked weights either ran every call size or the reason is a crash or failure."""
    why = repacking_fails(locate(SMOLLM2), 2)
    assert why is None or why.startswith(("they crashed", "a check with them failed")), why

"""Threads with a stack of a chosen size, for code that recurses deeply on them (llguidance compiles and
matches a grammar one recursion per level of it)."""

from __future__ import annotations

import threading
from collections.abc import Callable

_SIZING = threading.Lock()  # threading.stack_size is the process's: one thread is made with it at a time


def start_thread(target: Callable[[], None], name: str, stack_bytes: int = 0) -> threading.Thread:
    """A started daemon thread with a stack of `stack_bytes` (0: the platform's default). The size is set
    only while the thread is created."""
    thread = threading.Thread(target=target, name=name, daemon=True)
    if not stack_bytes:
        thread.start()
        return thread
    with _SIZING:
        previous = threading.stack_size(stack_bytes)
        try:
            thread.start()
        finally:
            threading.stack_size(previous)
    return thread

"""The Stop signal: one per run, shared with every running tool and sub-agent, raced against every await."""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable
from typing import TypeVar

from harness.errors import Stopped

T = TypeVar("T")
CLEANUP_GRACE_S = 0.02


class StopSignal:
    """Set once with a reason; `race` cancels whatever it is awaiting as soon as that happens."""

    def __init__(self) -> None:
        self._event = asyncio.Event()
        self.reason: str | None = None
        self.pressed_at: float | None = None  # time.monotonic() of the press, to measure how fast we stop

    @property
    def is_set(self) -> bool:
        return self._event.is_set()

    def set(self, reason: str = "user pressed Stop") -> None:
        if not self._event.is_set():
            self.reason, self.pressed_at = reason, time.monotonic()
            self._event.set()

    def arm(self, timeout: float | None) -> asyncio.TimerHandle | None:
        """Press Stop by itself after `timeout` seconds (a run's deadline); the caller cancels the handle."""
        if timeout is None:
            return None
        return asyncio.get_running_loop().call_later(timeout, self.set, f"deadline of {timeout:g}s reached")

    async def wait(self) -> None:
        await self._event.wait()

    def check(self) -> None:
        if self._event.is_set():
            raise Stopped(self.reason or "stopped")

    async def race(self, awaitable: Awaitable[T]) -> T:
        """Await `awaitable` unless Stop comes first, in which case it is cancelled and Stopped raised."""
        if self.is_set:
            if inspect.iscoroutine(awaitable):
                awaitable.close()  # never started, so nothing to cancel; closing it keeps asyncio quiet
            self.check()
        work = asyncio.ensure_future(awaitable)
        stop = asyncio.ensure_future(self._event.wait())
        try:
            await asyncio.wait({work, stop}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            work.cancel()
            raise
        finally:
            stop.cancel()
        if work.done():
            return work.result()
        work.cancel()
        await asyncio.wait({work}, timeout=CLEANUP_GRACE_S)
        raise Stopped(self.reason or "stopped")

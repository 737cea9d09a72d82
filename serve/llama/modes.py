"""The serving mode: how rows are grouped into llama.cpp calls, and how much of a cached sequence a request reuses.

- `BatchInvariant` (the default): a request's greedy reply is the same alone, beside others, cached or not.
  A prompt is read in calls whose sizes are the chunk or powers of two dividing it, each starting at a
  multiple of its own size (a chunk at a multiple of the chunk), so the row at position p always sits at
  index p mod s of a call of s rows. Only sizes from the measured granularity up are used (they compute a
  row exactly as a whole chunk does; see probe.py); a prompt's last (length mod granularity) tokens take
  a call of their own, the same call whatever the cache held. A cached prefix is reused to its last
  multiple of the granularity, never a reply's cells. Decode rows of different requests share a call only
  up to the measured `decode_rows`. The engine runs with plain weights and flash attention off.
- `Throughput`: every decoding request's row and as much prompt as fits in one call, reuse to the token
  (reply cells too) and llama.cpp's fastest kernels (flash attention where it runs, repacked weights where
  a check found they do), as llama-server serves: a reply may then depend on what else was running.

The engine is built from the mode (`Engine(gguf, mode=...)`) and the scheduler and prompt cache read it
from there, so nothing else decides which mode a server runs in.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar


def call_sizes(chunk: int, smallest: int = 1) -> tuple[int, ...]:
    """The sizes a batch-invariant prompt call may have, largest first: the chunk, then the powers of two that
    divide it, from below the chunk down to `smallest`."""
    powers = [1 << k for k in range(chunk.bit_length()) if chunk % (1 << k) == 0 and 1 << k < chunk]
    return (chunk, *sorted((p for p in powers if p >= smallest), reverse=True))


@dataclass(frozen=True)
class BatchInvariant:
    chunk: int = 64
    granularity: int = 64  # every call size from this one up computes a row as a whole chunk does (measured)
    decode_rows: int = 1  # rows of different requests a decode call may hold, each computed as if alone (measured)

    name: ClassVar[str] = "batch-invariant"
    fast_kernels: ClassVar[bool] = False  # flash attention off: its reductions depend on the batch's shape
    repacked: ClassVar[bool] = False  # plain weights: repacked ones use gemm from two rows on and gemv for one
    keeps_reply_cells: ClassVar[bool] = False

    def __post_init__(self) -> None:
        if self.chunk < 1 or self.granularity not in call_sizes(self.chunk):
            raise ValueError(f"granularity {self.granularity} is not a call size of a {self.chunk}-token chunk")
        if self.decode_rows < 1:
            raise ValueError("decode_rows must be at least 1")

    @property
    def sizes(self) -> tuple[int, ...]:
        return call_sizes(self.chunk, self.granularity)

    def prompt_end(self, start: int, length: int, room: int) -> int:
        """Where the prompt call from `start` ends: the largest size that starts at a multiple of itself and
        ends by the prompt's last multiple of the granularity; past that, the rest of the prompt."""
        aligned = length - length % self.granularity
        if start >= aligned:
            return length
        size = next((s for s in self.sizes if start % s == 0 and start + s <= aligned), None)
        if size is None:  # a start off the granularity: a cached prefix was cut where it must not be
            raise ValueError(f"a prompt call may not start at {start}: not a multiple of {self.granularity}")
        return start + size


@dataclass(frozen=True)
class Throughput:
    chunk: int = 512  # prompt rows a call may hold beside the decode rows
    repacked: bool = False  # llama.cpp's repacked weights (only where kernels.py found they run)

    name: ClassVar[str] = "throughput"
    fast_kernels: ClassVar[bool] = True
    keeps_reply_cells: ClassVar[bool] = True
    granularity: ClassVar[int] = 1

    def prompt_end(self, start: int, length: int, room: int) -> int:
        return min(length, start + max(room, 0))


Mode = BatchInvariant | Throughput

"""The prompt cache: KV states of several conversations, so interleaved runs still reuse their prefixes."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Snapshot:
    tokens: tuple[int, ...]
    kv: bytes  # llama.cpp's serialised state of sequence 0

    @property
    def size(self) -> int:
        return len(self.kv) + 4 * len(self.tokens)


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


class PromptCache:
    """Least-recently-used snapshots within a byte budget."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.entries: OrderedDict[tuple[int, ...], Snapshot] = OrderedDict()

    @property
    def size(self) -> int:
        return sum(s.size for s in self.entries.values())

    def best(self, prompt: Sequence[int]) -> tuple[Snapshot | None, int]:
        """The snapshot sharing the longest prefix with `prompt`, and that length."""
        found, length = None, 0
        for snapshot in self.entries.values():
            shared = common_prefix(snapshot.tokens, prompt)
            if shared > length:
                found, length = snapshot, shared
        if found is not None:
            self.entries.move_to_end(found.tokens)
        return found, length

    def put(self, snapshot: Snapshot) -> None:
        if snapshot.size > self.max_bytes:
            return
        for tokens in [t for t in self.entries if snapshot.tokens[: len(t)] == t]:
            del self.entries[tokens]  # a snapshot that is a prefix of the new one is superseded by it
        self.entries[snapshot.tokens] = snapshot
        while self.size > self.max_bytes:
            self.entries.popitem(last=False)

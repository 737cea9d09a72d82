"""The prompt cache as KV sequences: which conversation each sequence holds, and which one a request should use.

Each sequence keeps the tokens its cells hold. Reuse is exact: prompts are evaluated in fixed chunks
aligned to absolute positions, and only cells computed as whole aligned chunks of a prompt are reused,
so a request does the same arithmetic whether its prefix was cached or not (same request, same reply).
Generated tokens and a prompt's last partial chunk are evaluated again on the next turn.

Choosing a sequence: the free sequence that already holds the longest reusable prefix of the prompt (its
own conversation); if another sequence (free or busy) holds a longer one (a shared system prompt and
tools, say), that sequence is copied whole into the least recently used free one, so neither
conversation loses its cells. Nothing is ever serialised out of llama.cpp.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


@dataclass
class Slot:
    sequence: int
    tokens: list[int] = field(default_factory=list)  # what the cells hold, position by position
    exact: int = 0  # leading cells computed as whole aligned prompt chunks: reusable bit for bit
    used: int = 0  # when it was last taken (for least-recent-use eviction)
    busy: bool = False

    def reusable(self, prompt: Sequence[int], chunk: int) -> int:
        """How many leading prompt tokens this slot can serve exactly, leaving at least one token to evaluate."""
        shared = min(common_prefix(self.tokens, prompt), self.exact, len(prompt) - 1)
        return shared - shared % chunk


@dataclass(frozen=True)
class Plan:
    slot: Slot
    reuse: int  # prompt tokens served from the cache
    copy_from: Slot | None = None  # copy this slot's sequence into `slot` first


class Slots:
    def __init__(self, count: int, chunk: int, reuse: bool = True) -> None:
        self.slots = [Slot(i) for i in range(count)]
        self.chunk, self.reuse = chunk, reuse
        self.clock = 0

    def free(self) -> list[Slot]:
        return [s for s in self.slots if not s.busy]

    def plan(self, prompt: Sequence[int]) -> Plan | None:
        """Where to run a prompt, or None when every sequence is busy."""
        free = self.free()
        if not free:
            return None
        if not self.reuse:
            return Plan(min(free, key=lambda s: s.used), 0)
        own = max(free, key=lambda s: (s.reusable(prompt, self.chunk), -s.used))
        best = max(self.slots, key=lambda s: s.reusable(prompt, self.chunk))
        own_reuse, best_reuse = own.reusable(prompt, self.chunk), best.reusable(prompt, self.chunk)
        if best_reuse > own_reuse:
            target = min(free, key=lambda s: (s.used, s.reusable(prompt, self.chunk)))
            return Plan(target, best_reuse, best)
        if own_reuse == 0:
            own = min(free, key=lambda s: s.used)  # nothing to reuse: take the least recently used
        return Plan(own, own_reuse)

    def take(self, plan: Plan) -> Slot:
        self.clock += 1
        slot = plan.slot
        if plan.copy_from is not None:
            slot.tokens, slot.exact = list(plan.copy_from.tokens), plan.copy_from.exact
        del slot.tokens[plan.reuse :]
        slot.exact = min(slot.exact, plan.reuse)
        slot.busy, slot.used = True, self.clock
        return slot

    def release(self, slot: Slot, prompt_length: int) -> None:
        """The slot's request is over; its prompt's whole chunks are exact, everything after them is not."""
        slot.exact = min(len(slot.tokens), prompt_length - prompt_length % self.chunk)
        slot.busy = False

    def stats(self) -> dict[str, int]:
        return {
            "sequences": len(self.slots),
            "busy": sum(s.busy for s in self.slots),
            "cached_tokens": sum(len(s.tokens) for s in self.slots),
        }

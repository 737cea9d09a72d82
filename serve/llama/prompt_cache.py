"""The prompt cache as KV sequences: which conversation each sequence holds, and which one a request should use.

Each sequence keeps the tokens its cells hold. Reuse is exact: prompts are read in calls aligned to
multiples of a granularity g whose every size computes a row as a whole chunk does (measured at start,
see probe.py), and only those cells are reused, so a request does the same arithmetic whether its prefix
was cached or not (same request, same reply). Generated tokens and a prompt's last (length mod g) tokens
are evaluated again on the next turn. In throughput mode (the mode keeps reply cells) every cell is reused,
to the token, generated ones too, as llama-server does.

Choosing a sequence: requests decode in the first `working` sequences, the rest only keep conversations.
A request whose conversation sits in a free working sequence continues there (a request that shares only a
prefix with it, a shared system prompt and tools, say, first keeps that conversation aside). Any other takes the lowest
free working sequence, so the busy ones stay consecutive: with a non-unified KV cache llama.cpp decodes a
run of consecutive sequences in one pass over the weights and splits anything else into more passes. A
longer reusable prefix held elsewhere (the request's own conversation, kept aside, or a shared system
prompt and tools) is copied in whole; what the chosen sequence held is first copied to the least recently
used free sequence, so the conversation evicted is always the least recently used one. Nothing is ever
serialised out of llama.cpp.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from serve.llama.modes import Mode


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


@dataclass
class CachedSequence:
    sequence: int
    tokens: list[int] = field(default_factory=list)  # what the cells hold, position by position
    exact: int = 0  # leading cells computed in aligned prompt calls: reusable bit for bit
    used: int = 0  # when it was last taken (for least-recent-use eviction)
    busy: bool = False

    def reusable(self, prompt: Sequence[int], granularity: int) -> int:
        """How many leading prompt tokens this sequence can serve, in multiples of `granularity`, leaving at least
        one token to evaluate."""
        shared = min(common_prefix(self.tokens, prompt), self.exact, len(prompt) - 1)
        return shared - shared % granularity


@dataclass(frozen=True)
class Placement:
    cached: CachedSequence
    reuse: int  # prompt tokens served from the cache
    copy_from: CachedSequence | None = None  # copy this sequence's cells into `cached` first
    keep_in: CachedSequence | None = None  # before that, keep what `cached` holds by copying it here


class PromptCache:
    def __init__(self, count: int, mode: Mode, reuse: bool = True, working: int | None = None) -> None:
        self.held = [CachedSequence(i) for i in range(count)]
        self.reuse, self.whole = reuse, mode.keeps_reply_cells
        self.granularity = mode.granularity
        self.working = min(count, working or count)
        self.clock = 0

    def free(self) -> list[CachedSequence]:
        return [s for s in self.held[: self.working] if not s.busy]

    def plan(self, prompt: Sequence[int]) -> Placement | None:
        """Where to run a prompt, or None when every working sequence is busy."""
        free = self.free()
        if not free:
            return None
        if not self.reuse:
            return Placement(min(free, key=lambda s: s.used), 0)
        reusable = {s.sequence: s.reusable(prompt, self.granularity) for s in self.held}
        reuse = max(reusable.values())
        holders = [s for s in self.held if reuse and reusable[s.sequence] == reuse]
        in_place = [s for s in holders if not s.busy and s.sequence < self.working]  # free ones, by identity
        if in_place:
            cached = min(in_place, key=lambda s: s.exact)  # the one that loses least (its cells past `reuse` go)
            # a request that shares only a prefix (the system prompt and tools, say) cuts the conversation held
            # here: it is kept aside first, so the next request that shares more still finds it
            return Placement(cached, reuse, None, self.keeper(cached, None) if cached.exact > reuse else None)
        target = free[0]
        source = holders[0] if holders else None
        return Placement(target, reuse, source, self.keeper(target, source))

    def keeper(self, target: CachedSequence, source: CachedSequence | None) -> CachedSequence | None:
        """Where the target's conversation goes: the least recently used idle sequence, if it is older."""
        if not target.exact:
            return None
        idle = [s for s in self.held if not s.busy and s is not target and s is not source]
        # an empty sequence first (one that only keeps: working ones stay free for newcomers), else the LRU
        oldest = min(idle, key=lambda s: (1, s.used) if s.exact else (0, s.sequence < self.working), default=None)
        return oldest if oldest is not None and (not oldest.exact or oldest.used < target.used) else None

    def take(self, plan: Placement) -> CachedSequence:
        self.clock += 1
        cached = plan.cached
        if plan.keep_in is not None:
            keeper = plan.keep_in
            keeper.tokens, keeper.exact, keeper.used = list(cached.tokens), cached.exact, cached.used
        if plan.copy_from is not None:
            cached.tokens, cached.exact = list(plan.copy_from.tokens), plan.copy_from.exact
        del cached.tokens[plan.reuse :]
        cached.exact = min(cached.exact, plan.reuse)
        cached.busy, cached.used = True, self.clock
        return cached

    def release(self, cached: CachedSequence, prompt_length: int) -> None:
        """The request in it is over; its prompt's cells up to the last multiple of the granularity are exact,
        everything after them is not (in throughput mode every cell counts)."""
        aligned = prompt_length - prompt_length % self.granularity
        cached.exact = len(cached.tokens) if self.whole else min(len(cached.tokens), aligned)
        cached.busy = False

    def forget(self, cached: CachedSequence) -> None:
        """A sequence whose cells are no longer known (a request failed in it): nothing in it is reused."""
        cached.tokens, cached.exact, cached.busy = [], 0, False

    def stats(self) -> dict[str, int]:
        return {
            "sequences": len(self.held),
            "busy": sum(s.busy for s in self.held),
            "cached_tokens": sum(len(s.tokens) for s in self.held),
        }

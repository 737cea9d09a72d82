"""Limits, prices and usage: small dataclasses whose methods do the checking and the arithmetic."""

from __future__ import annotations

import math
from dataclasses import dataclass

from harness.errors import ConfigError
from wire.types import Usage as ReplyUsage


def positive(name: str, value: float | None, allow_zero: bool = False) -> None:
    """A limit that is a real number above zero (or at least zero); None means no limit."""
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ConfigError(f"{name} must be a finite number, not {value!r}")
    if value < 0 or (value == 0 and not allow_zero):
        raise ConfigError(f"{name} must be {'at least 0' if allow_zero else 'above 0'}, not {value!r}")


@dataclass
class Limits:
    """What a run may spend. `None` means no limit of that kind."""

    max_turns: int | None = 20
    max_budget_usd: float | None = None
    max_tool_calls: int | None = None
    timeout_s: float | None = None  # wall clock of one `run()` call
    context_tokens: int | None = None  # what may be sent to the model in one request

    def __post_init__(self) -> None:
        positive("max_turns", self.max_turns)
        positive("max_budget_usd", self.max_budget_usd, allow_zero=True)
        positive("max_tool_calls", self.max_tool_calls, allow_zero=True)
        positive("timeout", self.timeout_s)
        positive("context_tokens", self.context_tokens)


@dataclass(frozen=True)
class Prices:
    """USD per million tokens."""

    input_per_mtok: float = 2.00
    output_per_mtok: float = 12.00

    def __post_init__(self) -> None:
        positive("the input price", self.input_per_mtok, allow_zero=True)
        positive("the output price", self.output_per_mtok, allow_zero=True)

    def cost(self, usage: ReplyUsage) -> float:
        return (usage.prompt_tokens * self.input_per_mtok + usage.completion_tokens * self.output_per_mtok) / 1e6


@dataclass
class Usage:
    """Tokens over a run. A reply that reports no usage is counted as unpriced: its cost is unknown, not 0."""

    requests: int = 0
    unpriced_requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    cost_usd: float = 0.0  # the priced part

    def add(self, usage: ReplyUsage | None, prices: Prices) -> float | None:
        """Count one reply; returns its cost, or None when the provider did not say."""
        self.requests += 1
        if usage is None:
            self.unpriced_requests += 1
            return None
        self.prompt_tokens += usage.prompt_tokens
        self.completion_tokens += usage.completion_tokens
        if usage.prompt_tokens_details is not None:
            self.cached_tokens += usage.prompt_tokens_details.cached_tokens
        cost = prices.cost(usage)
        self.cost_usd += cost
        return cost

    def merge(self, other: Usage) -> None:
        self.requests += other.requests
        self.unpriced_requests += other.unpriced_requests
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.cached_tokens += other.cached_tokens
        self.cost_usd += other.cost_usd

    @property
    def cost_known(self) -> bool:
        return self.unpriced_requests == 0

    @property
    def known_cost(self) -> float | None:
        """The cost, or None when some reply carried no usage (never $0 for an unknown)."""
        return self.cost_usd if self.cost_known else None

    def cost_text(self) -> str:
        known = f"${self.cost_usd:.6f}"
        return known if self.cost_known else f"{known} + unknown ({self.unpriced_requests} replies without usage)"

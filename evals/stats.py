"""Intervals on scores: a 95% Wilson score interval on a share of right answers, and Newcombe's interval on
the difference of two shares (the hybrid score method, built from the two Wilson intervals).

Written out here rather than taken from a statistics library: each is a few lines of closed-form arithmetic
(Wilson 1927; Newcombe 1998, method 10), and the project has no statistics package to import for it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

Z95 = 1.959963984540054  # the 97.5th percentile of the standard normal


@dataclass(frozen=True)
class Share:
    """`right` of `total`, with its 95% Wilson interval."""

    right: int
    total: int

    @property
    def rate(self) -> float:
        return self.right / self.total if self.total else 0.0

    @property
    def interval(self) -> tuple[float, float]:
        return wilson(self.right, self.total)

    def __str__(self) -> str:
        if not self.total:
            return "-"
        low, high = self.interval
        return f"{self.rate:.0%} [{low:.0%}, {high:.0%}] ({self.right}/{self.total})"


def wilson(right: int, total: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a binomial share: well-behaved at 0/n, n/n and small n, unlike p ± z·se."""
    if total <= 0:
        return (0.0, 1.0)
    p = right / total
    centre = p + z * z / (2 * total)
    spread = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total))
    denominator = 1 + z * z / total
    return (max(0.0, (centre - spread) / denominator), min(1.0, (centre + spread) / denominator))


def difference(a: Share, b: Share, z: float = Z95) -> tuple[float, float, float]:
    """b's rate minus a's, with Newcombe's 95% interval on it (the two shares taken as independent)."""
    (la, ua), (lb, ub) = wilson(a.right, a.total, z), wilson(b.right, b.total, z)
    pa, pb = a.rate, b.rate
    delta = pb - pa
    low = delta - math.sqrt((pb - lb) ** 2 + (ua - pa) ** 2)
    high = delta + math.sqrt((ub - pb) ** 2 + (pa - la) ** 2)
    return delta, low, high


def beyond(a: Share, b: Share) -> bool:
    """Whether b differs from a by more than the interval: Newcombe's interval on the difference excludes 0."""
    if not a.total or not b.total:
        return False
    _, low, high = difference(a, b)
    return low > 0 or high < 0

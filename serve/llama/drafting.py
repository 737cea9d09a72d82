"""Prompt-lookup drafting: the next tokens guessed from the conversation itself, for the model to check.

A reply that quotes a file, or a call that repeats a path from a listing, copies what is already in its
prompt. The guess is what followed the latest earlier occurrence of the reply's last few tokens; the
scheduler evaluates it in one call after the token it was going to evaluate anyway and keeps the guessed
tokens the model would have chosen itself, up to the first it would not (greedy-exact: every kept token is
the model's own choice from its own logits).
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence

LONGEST, SHORTEST = 3, 2  # the n-grams looked up, longest first; a single token matches too often to pay


def lookup(tokens: Sequence[int], size: int, longest: int = LONGEST, shortest: int = SHORTEST) -> list[int]:
    """Up to `size` tokens that followed the latest earlier occurrence of the longest n-gram (from `longest`
    down to `shortest` tokens) that `tokens` ends with; none when no such n-gram occurred before."""
    if size <= 0 or len(tokens) <= shortest:
        return []
    data = array("i", tokens).tobytes()
    width = array("i").itemsize
    for n in range(min(longest, len(tokens) - 1), shortest - 1, -1):
        needle = data[-n * width :]
        end = len(data) - width  # an occurrence that ends before the last token
        while (at := data.rfind(needle, 0, end)) >= 0:
            if at % width == 0:
                start = at // width + n
                return list(tokens[start : start + size])
            end = at + len(needle) - 1
    return []

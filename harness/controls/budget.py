"""What the history processors share to fit a request to a token budget: the margin on the harness's
count, the digits it undercounts, and how a long result is made shorter (head and tail, one step at a time).
"""

from __future__ import annotations

from wire.types import Message

CONTEXT_MARGIN = 0.85  # the harness counts with o200k_base, not the model's own tokenizer
MIN_LINES = 8  # a result is not cut below this many lines


def room(context: int, max_tokens: int | None) -> int:
    """The prompt tokens a request may take in a window of `context`: what its reply may write is kept."""
    return context - (max_tokens or 0)


def digit_tokens(message: Message) -> int:
    """The tokens a model's tokenizer may spend on digits beyond the harness's count: o200k_base takes up to
    three digits as one token, the Qwen and Llama tokenizers take each digit alone (logs are full of them)."""
    return sum(char.isdigit() for char in str(message.get("content") or "")) * 2 // 3


def shorter(lines: int) -> int | None:
    """The next length a result of `lines` lines is cut to, or None when it is already as short as a cut
    leaves one (MIN_LINES): each step keeps two thirds, so a budget is met in a few steps."""
    return lines * 2 // 3 if lines > MIN_LINES else None


def trimmed(result: str, lines: int) -> str:
    """A text cut to about `lines` lines: its head and its tail, and a line saying how many were left out."""
    text = result.split("\n")
    if len(text) <= lines:
        return result
    keep_head, keep_tail = lines * 3 // 4, max(1, lines // 4)
    left_out = len(text) - keep_head - keep_tail
    return "\n".join([*text[:keep_head], f"[... {left_out} lines not shown ...]", *text[-keep_tail:]])

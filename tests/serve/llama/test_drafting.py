"""Prompt lookup: the guess is what followed the latest earlier occurrence of the longest n-gram the tokens end with."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from serve.llama.drafting import lookup


def naive(tokens: list[int], size: int, longest: int = 3, shortest: int = 2) -> list[int]:
    for n in range(min(longest, len(tokens) - 1), shortest - 1, -1):
        tail = tokens[-n:]
        for start in range(len(tokens) - n - 1, -1, -1):
            if tokens[start : start + n] == tail:
                return tokens[start + n : start + n + size]
    return []


def test_a_repeated_path_is_guessed_from_where_it_appeared() -> None:
    listing = [10, 11, 12, 13, 14, 20, 21, 22, 23]  # "errors.log ... access.log ..."
    assert lookup([*listing, 99, 20, 21], 3) == [22, 23, 99]
    assert lookup([*listing, 99, 10, 11], 2) == [12, 13]


def test_the_longest_and_latest_match_wins_and_a_single_token_is_not_enough() -> None:
    assert lookup([1, 2, 3, 7, 2, 3, 8, 1, 2, 3], 1) == [7]  # "1 2 3" beats the later "2 3"
    assert lookup([2, 3, 7, 2, 3, 8, 2, 3], 1) == [8]  # the latest "2 3"
    assert lookup([5, 6, 7, 5], 3) == []
    assert lookup([5, 6], 3) == [] and lookup([], 3) == [] and lookup([5, 6, 5, 6], 0) == []


@given(st.lists(st.integers(-3, 3), max_size=40), st.integers(0, 6))
def test_the_same_guess_as_a_plain_search(tokens: list[int], size: int) -> None:
    """Negative ids too: the search is over 4-byte items, and a match across item boundaries never counts."""
    assert lookup(tokens, size) == (naive(tokens, size) if size > 0 and len(tokens) > 2 else [])

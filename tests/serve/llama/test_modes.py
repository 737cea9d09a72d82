"""The serving modes: the batch-invariant call plan and its checks, and the throughput mode's calls."""

from __future__ import annotations

import pytest

from serve.llama.modes import BatchInvariant, Throughput, call_sizes


def test_call_sizes_are_the_chunk_then_the_powers_of_two_dividing_it_down_to_the_smallest() -> None:
    assert call_sizes(64) == (64, 32, 16, 8, 4, 2, 1)
    assert call_sizes(96, 8) == (96, 32, 16, 8)
    assert call_sizes(64, 64) == (64,)


@pytest.mark.parametrize(("chunk", "granularity"), [(64, 3), (64, 128), (96, 64), (0, 1)])
def test_a_granularity_that_is_not_a_call_size_of_the_chunk_is_refused(chunk: int, granularity: int) -> None:
    with pytest.raises(ValueError, match="is not a call size"):
        BatchInvariant(chunk, granularity)


def test_decode_rows_below_one_are_refused() -> None:
    with pytest.raises(ValueError, match="decode_rows"):
        BatchInvariant(64, 8, decode_rows=0)


def test_a_prompt_call_may_not_start_off_the_granularity() -> None:
    with pytest.raises(ValueError, match="may not start at 12"):
        BatchInvariant(64, 8).prompt_end(12, 100, room=0)


def test_a_prompt_call_plan_covers_the_prompt_in_aligned_calls_from_any_reusable_start() -> None:
    """From every multiple of the granularity, the calls tile the prompt exactly; each call before the tail has
    a size of the mode and starts at a multiple of that size; the tail is shorter than the granularity."""
    for chunk, granularity in ((64, 8), (16, 2), (64, 64), (96, 4), (8, 1)):
        mode = BatchInvariant(chunk, granularity)
        for length in range(1, 3 * chunk + 3):
            for start in range(0, length, granularity):
                ends, at = [], start
                while at < length:
                    at = mode.prompt_end(at, length, room=0)
                    ends.append(at)
                calls = list(zip([start, *ends], ends, strict=False))
                aligned = length - length % granularity
                assert ends[-1] == length and all(b > a for a, b in calls)
                for a, b in calls:
                    if b <= aligned:
                        assert b - a in mode.sizes and a % (b - a) == 0
                    else:
                        assert a == aligned and b - a < granularity


def test_throughput_reads_as_much_prompt_as_the_call_has_room_for() -> None:
    mode = Throughput()
    assert mode.prompt_end(10, 100, room=30) == 40
    assert mode.prompt_end(90, 100, room=30) == 100
    assert mode.prompt_end(10, 100, room=-5) == 10  # no room: nothing read in this call
    assert mode.keeps_reply_cells and not BatchInvariant().keeps_reply_cells

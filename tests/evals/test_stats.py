"""Intervals: Wilson's on a share (against published values), Newcombe's on a difference (against his paper's
worked example), and the comparison of two runs' scores that marks only the differences beyond them."""

from __future__ import annotations

import pytest

from evals.scores import compared
from evals.stats import Share, beyond, difference, wilson


def test_wilson_intervals_match_published_values_and_stay_inside_0_and_1() -> None:
    assert wilson(0, 10) == pytest.approx((0.0, 0.2775), abs=1e-4)
    assert wilson(5, 10) == pytest.approx((0.2366, 0.7634), abs=1e-4)
    assert wilson(10, 10) == pytest.approx((0.7225, 1.0), abs=1e-4)
    assert wilson(0, 0) == (0.0, 1.0)
    assert str(Share(19, 23)) == "83% [63%, 93%] (19/23)"


def test_newcombes_interval_on_a_difference_matches_his_worked_example() -> None:
    delta, low, high = difference(Share(48, 80), Share(56, 70))  # Newcombe (1998), method 10: 0.0524 to 0.3339
    assert (delta, low, high) == pytest.approx((0.2, 0.0524, 0.3339), abs=1e-4)
    assert beyond(Share(48, 80), Share(56, 70))
    assert not beyond(Share(19, 23), Share(17, 23))  # two tasks of 23 is within the noise
    assert not beyond(Share(0, 0), Share(5, 5))


def test_a_comparison_marks_only_the_differences_beyond_their_interval() -> None:
    def run(right: int, german: int) -> dict[str, object]:
        return {"local": {"model": "m", "all": {"right": right, "total": 100},
                          "language asked in": {"de": {"right": german, "total": 20}}}}  # fmt: skip

    lines = compared(run(40, 10), run(70, 11))
    row = next(line for line in lines if line.startswith("| all |"))
    german = next(line for line in lines if "language asked in: de" in line)
    assert row.endswith(" * |")
    assert " *" not in german


def test_two_runs_of_one_provider_each_are_compared_whatever_their_names() -> None:
    """`evals run` names its provider, `evals split` names it by its model: a baseline from one and a run of the
    other are still compared; runs with nothing to pair say so instead of printing an empty table."""

    def run(name: str, right: int) -> dict[str, object]:
        return {name: {"model": "m", "all": {"right": right, "total": 100}}}

    lines = compared(run("local", 40), run("qwen2.5-coder-0.5b-instruct", 70))
    assert any(line.startswith("| all | 40%") and line.endswith(" * |") for line in lines)
    two = {**run("x", 1), **run("y", 2)}
    assert compared(two, run("z", 3))[0].startswith("No provider is in both runs")

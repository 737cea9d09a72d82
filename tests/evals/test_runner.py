"""The eval's sums over task results: pass^k, the cost (unknown stays unknown), percentiles, errors apart."""

from __future__ import annotations

from dataclasses import replace

from evals.runner import aggregate, pass_hat_k, percentile, total_cost
from tests.evals.test_report import result


def test_pass_hat_k_counts_a_task_only_when_every_trial_of_it_is_right() -> None:
    right, wrong = replace(result("a"), correct=True), replace(result("a"), correct=False)
    other = replace(result("b"), correct=True)
    assert pass_hat_k([right, right, other, other], 2) == 1.0
    assert pass_hat_k([right, wrong, other, other], 2) == 0.5
    assert pass_hat_k([], 2) == 0.0


def test_an_unknown_cost_is_never_summed_as_zero() -> None:
    known = [replace(result("a"), cost_usd=0.25), replace(result("b"), cost_usd=0.5)]
    assert total_cost(known) == 0.75
    assert total_cost([*known, result("c")]) is None  # result() has cost_usd None


def test_percentiles_pick_a_measured_value_and_none_of_nothing() -> None:
    values = [5.0, 1.0, 3.0, 2.0, 4.0]
    assert (percentile(values, 0.5), percentile(values, 0.95), percentile(values, 0.0)) == (3.0, 5.0, 1.0)
    assert percentile([], 0.5) is None


def test_runs_the_harness_or_provider_failed_are_counted_apart_from_the_scored_ones() -> None:
    scored = replace(result("a"), correct=True)
    broken = replace(result("b"), failure="provider_error")
    total = aggregate([scored, broken], 1)
    assert (total["correct"], total["scored"], total["harness_or_provider_errors"]) == (1, 1, 1)
    assert total["failures"] == {"provider_error": 1} and total["pass_hat_k"] is None

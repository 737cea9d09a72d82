"""The generated suites: the shipped files are what the generator writes, and every task has a truth."""

from __future__ import annotations

from pathlib import Path

import pytest

from evals.families import OPEN, SCALES, opened, write
from evals.suite import SUITES, load_suite


def test_the_shipped_generated_suites_are_what_the_generator_writes(tmp_path: Path) -> None:
    for made in write(tmp_path):
        assert made.read_text() == (SUITES / made.name).read_text(), f"{made.name} is stale: run python -m evals suites"


def test_each_suite_asks_its_kinds_once_in_words_that_are_not_all_one_template(tmp_path: Path) -> None:
    for made in write(tmp_path):
        suite = load_suite(made)
        ids = [task.id for task in suite.tasks]
        assert len(ids) == len(set(ids)) and len({task.prompt for task in suite.tasks}) == len(ids)
    assert len(SCALES) == 4 and max(SCALES) >= 1000 and min(OPEN) >= 40


def test_an_open_family_needs_a_project_large_enough_to_hold_every_fact() -> None:
    with pytest.raises(ValueError, match="at least"):
        opened(1, 10)

"""`make experiments`: every experiment's invariant holds, and a failing one is named and fails the command."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from evals.experiments.__main__ import run_all
from evals.experiments.lab import InvariantFailed, Lab, Table, check
from tests.conftest import ROOT


@pytest.mark.slow
def test_all_eleven_experiments_hold_their_invariants(tmp_path: Path) -> None:
    out = tmp_path / "experiments.md"
    done = subprocess.run(
        [sys.executable, "-m", "evals.experiments", "--out", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    report = out.read_text()
    assert report.count("\n### ") == 11 and "## Failed" not in report
    assert "multiplies the cost by 3." in report  # quadratic, about 3.7, not 2
    assert "11 experiments in" in done.stdout


async def test_a_failing_invariant_is_named_and_the_rest_still_run(tmp_path: Path) -> None:
    async def broken(lab: Lab) -> Table:
        check(False, "overshoot was two turns")
        return Table("never", [])

    async def fine(lab: Lab) -> Table:
        return Table("fine", ["x"], [[1]])

    tables, failed = await run_all({"budgets": broken, "plan": fine}, Lab("http://unused", tmp_path))
    assert failed == ["budgets: overshoot was two turns"] and [t.title for t in tables] == ["fine"]


def test_check_raises_with_the_message() -> None:
    try:
        check(1 > 2, "numbers")
    except InvariantFailed as exc:
        assert str(exc) == "numbers"
    else:
        raise AssertionError("check passed a false condition")

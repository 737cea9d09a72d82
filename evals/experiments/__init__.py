"""The experiments: each measures what one harness control is worth and checks its own invariant."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from evals.experiments import (
    approval,
    budgets,
    cancel,
    caps,
    errors,
    latency,
    permanent,
    plan,
    repeats,
    resume,
    subagent,
)
from evals.experiments.lab import Lab, Table

Experiment = Callable[[Lab], Awaitable[Table]]

EXPERIMENTS: dict[str, Experiment] = {
    "plan": plan.experiment,
    "caps": caps.experiment,
    "budgets": budgets.experiment,
    "errors": errors.experiment,
    "permanent": permanent.experiment,
    "repeats": repeats.experiment,
    "approval": approval.experiment,
    "resume": resume.experiment,
    "cancel": cancel.experiment,
    "latency": latency.experiment,
    "subagent": subagent.experiment,
}

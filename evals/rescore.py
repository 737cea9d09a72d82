"""python -m evals rescore DIR: a split's recorded answers judged again by today's scorer, without a model.

The split is drawn again from the seed, sizes and languages its summary.json names, each task is matched to
its recorded run by suite, id and question, and each question's answer is judged again against the truth
computed from the files (with the files the run read). A change task keeps its verdict: it was scored on the
folder's end state, which is not recorded. report.md and summary.json are written again; the summary keeps
the run's command and manifest, and names the rescore.
"""

from __future__ import annotations

import tempfile
from dataclasses import fields
from pathlib import Path
from typing import Any

from evals import report
from evals.compare import load
from evals.runner import TaskResult
from evals.scoring import Trajectory, answer_failure, judge, read_paths
from evals.splits import Draw, suites_named
from evals.truth import CHANGES, files_of, truth_for


def rescore(out: Path, command: str) -> tuple[list[Path], int]:
    """Judge again the answers recorded in out/summary.json; the files written and how many verdicts changed."""
    summary = load(out / "summary.json")
    split = summary["split"]
    draw = Draw(summary["seed"], summary.get("generated"), summary.get("real"), tuple(summary["languages"]))
    rows: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for row in summary["results"]:
        rows.setdefault((row["suite"], row["task"], row["prompt"]), []).append(row)
    results: dict[tuple[str, str, str], list[TaskResult]] = {}
    changed = 0
    with tempfile.TemporaryDirectory(prefix="rescore-") as scratch:
        for suite in suites_named([split], draw):
            recorded = [(task, rows.get((suite.name, task.id, task.prompt), [])) for task in suite.tasks]
            if not any(runs for _, runs in recorded):
                continue
            workspace = suite.build(Path(scratch) / suite.name)
            files = set(files_of(workspace))
            for task, runs in recorded:
                for row in runs:
                    result = TaskResult(**row)
                    if task.check.kind not in CHANGES:
                        truth, read = truth_for(task.check, workspace), read_paths(result.tool_runs)
                        verdict = judge(task.check, truth, result.answer, files, read, None, task.language)
                        changed += verdict.correct != result.correct
                        result.correct, result.why = verdict.correct, verdict.why
                        if result.status == "completed":
                            path = Trajectory(**{f.name: result.trajectory[f.name] for f in fields(Trajectory)})
                            result.failure = answer_failure(verdict, path)
                    results.setdefault((suite.name, task.id, task.prompt), []).append(result)
    missing = sorted(f"{suite}/{task}" for suite, task, _ in rows.keys() - results.keys())
    if missing:
        raise ValueError(f"{out}: the draw from seed {draw.seed} no longer holds {', '.join(missing[:5])}")
    ordered = [result for key in rows for result in results[key]]
    described: dict[str, Any] = {
        k: summary[k] for k in ("split", "seed", "languages", "generated", "real") if k in summary
    }
    note = (f"The answers are those recorded by `{summary['command']}` at git revision "
            f"`{summary['manifest'].get('git_revision')}`, judged again by this revision's scorer.")  # fmt: skip
    trials = max((r.trial for r in ordered), default=1)
    written = report.write_split(
        out, ordered, trials, described, summary["manifest"], summary["command"], command, note
    )
    return written, changed

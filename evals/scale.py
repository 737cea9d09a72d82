"""python -m evals scale RUN... --out FILE: what a task costs as the folder grows, from saved eval runs.

Each RUN is a results folder of `python -m evals run --suite scale-15 --suite scale-60 ...` (a folder per
suite, each with its summary.json) or a summary.json itself. Per model and folder size the report gives the
right answers, and per task the median turns, tokens read (the prompt tokens of every request) and wall-clock;
then, per model, the ratio of the largest folder's medians to the smallest's, over the kinds of question both
sizes ask (a summary of every file is asked of small folders only), and a plot of cost against folder size.
"""

from __future__ import annotations

import os
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evals.compare import load
from evals.manifest import results_header
from evals.suite import SUITES, SuiteError, load_suite


@dataclass(frozen=True)
class Size:
    """One model's tasks over one folder size."""

    model: str
    suite: str
    files: int
    results: tuple[dict[str, Any], ...]
    summary: Path  # the summary.json it was read from

    def median(self, field: str, tasks: frozenset[str] | None = None) -> float:
        values = [r[field] for r in self.results if tasks is None or r["task"] in tasks]
        return statistics.median(values) if values else 0.0

    @property
    def tasks(self) -> frozenset[str]:
        return frozenset(r["task"] for r in self.results)

    @property
    def right(self) -> int:
        return sum(r["correct"] for r in self.results)


def files_of(suite: str) -> int:
    """The file count a scale suite's folder is built with."""
    try:
        workspace = load_suite(SUITES / f"{suite}.json").workspace
    except SuiteError as exc:
        raise ValueError(f"{suite}: not a suite in {SUITES} ({exc})") from exc
    files = getattr(workspace, "files", None)
    if getattr(workspace, "builder", None) not in ("family", "project") or not isinstance(files, int):
        raise ValueError(f"{suite}: its folder is not generated with a file count, so it has no size to plot")
    return files


def summaries(runs: list[Path]) -> list[Path]:
    found = [p for run in runs for p in ([run] if run.is_file() else sorted(run.glob("*/summary.json")))]
    if not found:
        raise ValueError(f"no summary.json in {', '.join(map(str, runs))}")
    return found


def sizes(runs: list[Path]) -> tuple[list[Size], list[str]]:
    """Each model's tasks per folder size, and the commands that ran them."""
    rows: list[Size] = []
    commands: list[str] = []
    for path in summaries(runs):
        data = load(path)
        commands.append(str(data.get("command") or "python -m evals run"))
        files = files_of(data["suite"])
        models = dict.fromkeys(r["model"] for r in data["results"])
        for model in models:
            mine = tuple(r for r in data["results"] if r["model"] == model)
            rows.append(Size(model, data["suite"], files, mine, path))
    return sorted(rows, key=lambda s: (s.model, s.files)), list(dict.fromkeys(commands))


def ratio(large: float, small: float) -> str:
    return f"{large / small:.2f}x" if small else "n/a"


def table(rows: list[Size]) -> list[str]:
    lines = [
        "| model | files | right | median turns | median tokens read | median wall |",
        "|---|---|---|---|---|---|",
    ]
    for s in rows:
        lines.append(
            f"| {s.model} | {s.files:,} | {s.right}/{len(s.results)} | {s.median('turns'):g} "
            f"| {s.median('prompt_tokens'):,.0f} | {s.median('wall_ms') / 1000:,.1f} s |"
        )
    return lines


def growth(rows: list[Size]) -> list[str]:
    """Per model: the largest folder's medians over the smallest's, on the tasks both ask."""
    lines = []
    for model in dict.fromkeys(s.model for s in rows):
        mine = [s for s in rows if s.model == model]
        small, large = mine[0], mine[-1]
        if small is large:
            continue
        shared = small.tasks & large.tasks
        tokens = ratio(large.median("prompt_tokens", shared), small.median("prompt_tokens", shared))
        wall = ratio(large.median("wall_ms", shared), small.median("wall_ms", shared))
        lines.append(
            f"- {model}: {large.files:,} files against {small.files:,}, over {len(shared)} shared tasks: "
            f"tokens read {tokens}, wall-clock {wall}."
        )
    return lines


def reports(rows: list[Size], out: Path) -> list[str]:
    """Links to each run's own report (its revision, each task), where one is beside its summary."""
    links = [
        f"[{s.model}, {s.files:,} files]({os.path.relpath(s.summary.parent / 'report.md', out.parent)})"
        for s in rows
        if (s.summary.parent / "report.md").is_file()
    ]
    return ["Each run's own report, with its revision and every task: " + ", ".join(links) + "."] if links else []


def wrong(rows: list[Size]) -> list[str]:
    return [
        f"- {s.model}, {s.files:,} files, {r['task']}: {r['failure']} ({r['why'] or 'no verdict'})"
        for s in rows
        for r in s.results
        if not r["correct"]
    ]


def chart(path: Path, rows: list[Size]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, (tokens, wall) = plt.subplots(1, 2, figsize=(10, 4))
    for model in dict.fromkeys(s.model for s in rows):
        mine = [s for s in rows if s.model == model]
        xs = [s.files for s in mine]
        tokens.plot(xs, [s.median("prompt_tokens") for s in mine], marker="o", label=model)
        wall.plot(xs, [s.median("wall_ms") / 1000 for s in mine], marker="o", label=model)
    for axes, label in ((tokens, "median tokens read per task"), (wall, "median wall-clock per task (s)")):
        axes.set_xscale("log")
        axes.set_xlabel("files in the folder (log scale)")
        axes.set_ylabel(label)
        axes.set_ylim(bottom=0)
        axes.grid(True, alpha=0.3)
        axes.legend()
    figure.suptitle("What a task costs as the folder grows")
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def write(runs: list[Path], out: Path, command: str) -> list[Path]:
    rows, commands = sizes(runs)
    plot = out.with_suffix(".png")
    lines = [
        "# What a task costs as the folder grows",
        "",
        results_header(command),
        "The runs: " + "; ".join(f"`{c}`" for c in commands) + ".",
        *reports(rows, out),
        "",
        *table(rows),
        "",
        *growth(rows),
        "",
        f"![cost against folder size]({plot.name})",
        "",
        "## Wrong answers",
        "",
        *(wrong(rows) or ["None."]),
        "",
    ]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines), encoding="utf-8")
    chart(plot, rows)
    return [out, plot]

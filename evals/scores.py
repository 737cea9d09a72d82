"""Scores of a run over many suites (a split): right answers per provider, and per kind of question, per
language asked in, per kind of project (generated, or the language of a real project's code), each with its
95% interval; pass^k when tasks were tried more than once.

A task tried k times counts once per trial in the shares (each trial is a run) and once in pass^k (all k
right). Harness and provider errors are not scored as answers and are counted apart.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from evals.languages import NAMES
from evals.runner import TaskResult
from evals.stats import Share, beyond, difference

Key = Callable[[TaskResult], str]
VIEWS: dict[str, Key] = {
    "kind of question": lambda r: r.kind,
    "language asked in": lambda r: r.language,
    "project": lambda r: f"real, {r.code}" if r.code else "generated",
}


def share(results: list[TaskResult]) -> Share:
    scored = [r for r in results if not r.harness_error]
    return Share(sum(r.correct for r in scored), len(scored))


def grouped(results: list[TaskResult], key: Key) -> dict[str, Share]:
    groups: dict[str, list[TaskResult]] = {}
    for r in results:
        groups.setdefault(key(r), []).append(r)
    return {name: share(rs) for name, rs in sorted(groups.items())}


def every_trial_right(results: list[TaskResult]) -> Share:
    """pass^k over tasks: a task counts as right when every one of its trials is."""
    by_task: dict[tuple[str, str], list[bool]] = {}
    for r in results:
        if not r.harness_error:
            by_task.setdefault((r.suite, r.task), []).append(r.correct)
    return Share(sum(all(v) for v in by_task.values()), len(by_task))


def by_provider(results: list[TaskResult]) -> dict[str, list[TaskResult]]:
    providers: dict[str, list[TaskResult]] = {}
    for r in results:
        providers.setdefault(r.provider, []).append(r)
    return providers


def scores(results: list[TaskResult], trials: int) -> dict[str, Any]:
    """The numbers the report shows, per provider, as JSON (each share as right and total)."""
    out: dict[str, Any] = {}
    for name, rs in by_provider(results).items():
        overall = share(rs)
        out[name] = {
            "model": rs[0].model,
            "all": {"right": overall.right, "total": overall.total},
            "errors": sum(r.harness_error for r in rs),
            **({"pass_hat_k": vars(every_trial_right(rs))} if trials > 1 else {}),
            **{view: {k: vars(v) for k, v in grouped(rs, key).items()} for view, key in VIEWS.items()},
        }
    return out


LANGUAGE_NAMES: dict[str, str] = {str(code): name for code, name in NAMES.items()}


def label(view: str, value: str) -> str:
    return f"{LANGUAGE_NAMES[value]} ({value})" if view == "language asked in" and value in NAMES else value


def tables(results: list[TaskResult], trials: int) -> list[str]:
    """Markdown: one line per provider, then a table per view with a column per provider."""
    providers = by_provider(results)
    lines = ["| provider | model | right, with its 95% interval |" + (f" pass^{trials} |" if trials > 1 else ""),
             "|---|---|---|" + ("---|" if trials > 1 else "")]  # fmt: skip
    for name, rs in providers.items():
        extra = f" {every_trial_right(rs)} |" if trials > 1 else ""
        errors = sum(r.harness_error for r in rs)
        note = f" ({errors} harness or provider errors not scored)" if errors else ""
        lines.append(f"| {name} | `{rs[0].model}` | {share(rs)}{note} |{extra}")
    for view, key in VIEWS.items():
        cells = {name: grouped(rs, key) for name, rs in providers.items()}
        values = sorted({v for table in cells.values() for v in table})
        lines += ["", f"By {view}:", "", "| " + view + " | " + " | ".join(providers) + " |",
                  "|---|" + "---|" * len(providers)]  # fmt: skip
        for value in values:
            row = [str(cells[name].get(value, Share(0, 0))) for name in providers]
            lines.append(f"| {label(view, value)} | " + " | ".join(row) + " |")
    return lines


def compared(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    """Two runs' scores side by side (a summary's `scores`), per provider present in both (or the one provider
    of each, whatever its name: `evals run` names it, `evals split` names it by its model): each share in A
    and in B, B minus A with Newcombe's 95% interval, and `*` where the difference is beyond it."""
    pairs = [(n, n) for n in a if n in b] or ([(next(iter(a)), next(iter(b)))] if len(a) == len(b) == 1 else [])
    if not pairs:
        return [f"No provider is in both runs (A has {', '.join(a) or 'none'}; B has {', '.join(b) or 'none'})."]
    lines = []
    for first, second in pairs:
        left_run, right_run = a[first], b[second]
        heading = first if first == second else f"{first} / {second}"
        lines += [f"## {heading}: A `{left_run['model']}`, B `{right_run['model']}`", "",
                  "| | A | B | B - A [95% interval] |", "|---|---|---|---|"]  # fmt: skip
        rows = [("all", left_run["all"], right_run["all"])]
        for view in VIEWS:
            for value in sorted(set(left_run.get(view, {})) | set(right_run.get(view, {}))):
                empty = {"right": 0, "total": 0}
                rows.append((f"{view}: {value}", left_run.get(view, {}).get(value, empty),
                             right_run.get(view, {}).get(value, empty)))  # fmt: skip
        for title, left, right in rows:
            sa, sb = Share(left["right"], left["total"]), Share(right["right"], right["total"])
            if not sa.total or not sb.total:
                lines.append(f"| {title} | {sa} | {sb} | - |")
                continue
            delta, low, high = difference(sa, sb)
            flag = " *" if beyond(sa, sb) else ""
            lines.append(f"| {title} | {sa} | {sb} | {delta:+.0%} [{low:+.0%}, {high:+.0%}]{flag} |")
        lines.append("")
    return [*lines, "`*`: the difference is beyond its 95% interval (the interval on B - A excludes 0)."]

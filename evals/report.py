"""Reports: the console tables, the side-by-side comparison, and the files in the results folder."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from evals import scores
from evals.manifest import results_header
from evals.runner import TaskResult, aggregate


def mark(result: TaskResult) -> str:
    return "ok " if result.correct else "ERR" if result.harness_error else "-- "


def clip(text: str | None, width: int = 70) -> str:
    flat = " ".join((text or "").split())
    return flat if len(flat) <= width else flat[: width - 3] + "..."


def serving_mode(manifest: dict[str, Any], name: str) -> str:
    """How the provider's server said it serves (/healthz `mode`), for a server that says."""
    mode = manifest.get("providers", {}).get(name, {}).get("server", {}).get("mode")
    return f", {mode} mode" if isinstance(mode, str) else ""


def provider_table(name: str, results: list[TaskResult], trials: int, manifest: dict[str, Any]) -> list[str]:
    lines = [f"== {name} ({results[0].model}{serving_mode(manifest, name)}) =="]
    width = max(len(r.prompt) for r in results)
    for r in results:
        failure = f"  [{r.failure}: {r.why}]" if r.failure else ""
        lines.append(
            f"{mark(r)} turns={r.turns} tools={len(r.tool_runs)} wall={r.wall_ms:>9,.0f}ms  "
            f'{r.prompt:<{width}} -> "{clip(r.answer)}"{failure}'
        )
    total = aggregate(results, trials)
    return [*lines, "TOTAL " + totals(total, trials), *split(total)]


def ms(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f}ms"


def totals(total: dict[str, Any], trials: int) -> str:
    """The totals (mean turn = wall / turns, the whole run per turn), then the model's own latency, then the score."""
    cost = "unknown" if total["cost_usd"] is None else f"${total['cost_usd']:.6f}"
    line = (
        f"turns={total['turns']} toolruns={total['tool_runs']} wall={ms(total['wall_ms'])} "
        f"mean turn={ms(total['mean_turn_ms'])}  model turn mean={ms(total['turn_ms_mean'])} "
        f"p50={ms(total['turn_ms_p50'])} p95={ms(total['turn_ms_p95'])} cost={cost}  "
        f"correct {total['correct']}/{total['scored']}"
    )
    if trials > 1:
        line += f"  pass^{trials}={total['pass_hat_k']:.2f}"
    if total["harness_or_provider_errors"]:
        line += f"  harness/provider errors={total['harness_or_provider_errors']}"
    return line


def split(total: dict[str, Any]) -> list[str]:
    """Where the time went, when the server said: prompt reading (with its cached share), generation, the rest of
    the model requests (HTTP, queueing, grammars), and the harness's own time (tool runs, bookkeeping)."""
    if total["prompt_ms"] is None:
        return []
    read, cached = total["prompt_tokens_read"], total["prompt_tokens_cached"]
    share = f"{cached / (read + cached):.0%}" if read + cached else "-"
    rest = total["model_ms"] - total["prompt_ms"] - total["generation_ms"]
    return [
        f"time: prompt reading={ms(total['prompt_ms'])} ({read:,} tokens read, {share} from the cache) "
        f"generation={ms(total['generation_ms'])} rest of the requests={ms(rest)} harness={ms(total['harness_ms'])}"
    ]


def by_provider(results: list[TaskResult]) -> dict[str, list[TaskResult]]:
    grouped: dict[str, list[TaskResult]] = {}
    for r in results:
        grouped.setdefault(r.provider, []).append(r)
    return grouped


def outcome(results: list[TaskResult]) -> str:
    right = sum(r.correct for r in results)
    turns = sum(r.turns for r in results) / len(results)
    return f"{right}/{len(results)} right, {turns:.1f} turns, {sum(r.wall_ms for r in results) / len(results):,.0f}ms"


def comparison(results: list[TaskResult]) -> list[str]:
    """Tasks side by side across providers; those whose outcome differs first."""
    grouped = by_provider(results)
    names = list(grouped)
    tasks = list(dict.fromkeys(r.task for r in results))
    rows = []
    for task in tasks:
        cells = [outcome([r for r in grouped[n] if r.task == task]) for n in names]
        differs = len({c.split(",")[0] for c in cells}) > 1
        rows.append((not differs, task, cells, differs))
    rows.sort(key=lambda row: row[0])
    lines = ["== side by side (tasks whose outcome differs first) ==", " | ".join(["task", *names])]
    lines += [" | ".join([("* " if differs else "  ") + task, *cells]) for _, task, cells, differs in rows]
    return lines


def suite_line(suite: str, name: str, results: list[TaskResult], trials: int) -> str:
    total = aggregate(results, trials)
    score = f"{total['correct']}/{total['scored']}"
    errors = (
        f", {total['harness_or_provider_errors']} harness/provider errors"
        if total["harness_or_provider_errors"]
        else ""
    )
    return (
        f"{suite:<12} {name} ({results[0].model}): {score} right, {total['turns']} turns, "
        f"{total['tool_runs']} tool runs, {ms(total['wall_ms'])}{errors}"
    )


def by_suite(finished: list[tuple[str, list[TaskResult]]], trials: int) -> list[str]:
    """One line per suite and provider: what a run over several suites comes to, at a glance."""
    return [
        suite_line(suite, name, rs, trials) for suite, results in finished for name, rs in by_provider(results).items()
    ]


def write_suites(out: Path, lines: list[str], command: str) -> Path:
    path = out / "report.md"
    head = [
        "# Eval: every suite",
        "",
        results_header(command),
        "Each suite's own report is in its folder.",
        "",
        "```",
    ]
    path.write_text("\n".join([*head, *lines, "```", ""]), encoding="utf-8")
    return path


def write_split(
    out: Path,
    results: list[TaskResult],
    trials: int,
    split: dict[str, Any],
    manifest: dict[str, Any],
    command: str,
    written_by: str | None = None,
    note: str = "",
) -> list[Path]:
    """A split's report (report.md: the scores with their intervals, per kind, language and project) and its
    summary.json (the scores and every task's result), beside the suites' own folders. `command` ran the
    split; `written_by` wrote these files when another command did (a rescore), and `note` says so."""
    out.mkdir(parents=True, exist_ok=True)
    languages = ", ".join(split["languages"])
    head = [
        f"# Eval: the {split['split']} split, seed {split['seed']}",
        "",
        results_header(written_by or command),
        *([note] if note else []),
        f"Drawn with `--seed {split['seed']}` in {languages}: {len(results)} runs over "
        f"{len({r.suite for r in results})} projects. Intervals are 95% Wilson score intervals.",
        "",
    ]
    misses = [f"- `{r.suite}` {r.kind} ({r.language}): {r.prompt} -> \"{clip(r.answer, 90)}\" ({r.why})"
              for r in results if not r.correct]  # fmt: skip
    body = [*head, *scores.tables(results, trials), "", "## Wrong answers", "", *misses, ""]
    report_path, summary_path = out / "report.md", out / "summary.json"
    report_path.write_text("\n".join(body), encoding="utf-8")
    data = {
        **split,
        "command": command,
        "manifest": manifest,
        **({"rescored_by": written_by} if written_by else {}),
        "scores": scores.scores(results, trials),
        "results": [{k: v for k, v in asdict(r).items() if k not in ("turn_log", "messages")} for r in results],
    }
    summary_path.write_text(json.dumps(data, indent=2, ensure_ascii=False), encoding="utf-8")
    return [report_path, summary_path]


def console(results: list[TaskResult], trials: int, manifest: dict[str, Any]) -> str:
    tables = [provider_table(name, rs, trials, manifest) for name, rs in by_provider(results).items()]
    parts = [line for table in tables for line in [*table, ""]]
    return "\n".join(parts + comparison(results))


def summary(
    results: list[TaskResult], trials: int, suite: str, settings: dict[str, Any], manifest: dict[str, Any]
) -> dict[str, Any]:
    return {
        "suite": suite,
        "settings": settings,
        "manifest": manifest,
        "providers": {name: aggregate(rs, trials) for name, rs in by_provider(results).items()},
        "results": [{k: v for k, v in asdict(r).items() if k not in ("turn_log", "messages")} for r in results],
    }


def write_turns(path: Path, results: list[TaskResult]) -> None:
    with path.open("w", encoding="utf-8") as out:
        for r in results:
            for turn in r.turn_log:
                out.write(
                    json.dumps(
                        {"provider": r.provider, "model": r.model, "task": r.task, "trial": r.trial, **asdict(turn)}
                    )
                    + "\n"
                )


def write_transcripts(path: Path, results: list[TaskResult]) -> None:
    with path.open("w", encoding="utf-8") as out:
        for r in results:
            head = {"provider": r.provider, "model": r.model, "task": r.task, "trial": r.trial, "run_id": r.run_id}
            out.write(json.dumps({**head, "correct": r.correct, "why": r.why, "messages": r.messages}) + "\n")


def markdown(results: list[TaskResult], data: dict[str, Any], trials: int) -> str:
    machine = data["manifest"]
    lines = [
        f"# Eval: suite `{data['suite']}`",
        "",
        results_header(data.get("command") or "python -m evals"),
        f"Python {machine['python']}.",
        "",
    ]
    for name, rs in by_provider(results).items():
        total = data["providers"][name]
        lines += [
            f"## {name} (`{rs[0].model}`{serving_mode(machine, name)})",
            "",
            "| task | right | turns | tool runs | wall | mean turn | model | tokens in/out | answer | why |",
        ]
        lines.append("|---|---|---|---|---|---|---|---|---|---|")
        for r in rs:
            verdict = "yes" if r.correct else f"no ({r.failure})"
            answer = clip(r.answer, 60).replace("|", "/")
            lines.append(
                f"| {r.task} | {verdict} | {r.turns} | {len(r.tool_runs)} | {ms(r.wall_ms)} | {ms(r.mean_turn_ms)} "
                f"| {ms(r.model_ms)} | {r.prompt_tokens:,}/{r.completion_tokens:,} | {answer} | {r.why} |"
            )
        lines += ["", "`" + totals(total, trials) + "`", *(f"`{line}`" for line in split(total)), ""]
    lines += ["## Side by side", "", "```", *comparison(results), "```", "", "![per-turn latency](latency.png)", ""]
    closing = [suite_line(data["suite"], name, rs, trials) for name, rs in by_provider(results).items()]
    lines += ["## In one line per provider", "", "```", *closing, "```", ""]
    return "\n".join(lines)


def chart(path: Path, results: list[TaskResult]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(8, 4.5))
    for offset, (name, rs) in enumerate(by_provider(results).items()):
        points = [(t.index, t.latency_ms) for r in rs for t in r.turn_log]
        if points:
            xs, ys = zip(*points, strict=True)
            axes.scatter([x + (offset - 0.5) * 0.15 for x in xs], ys, label=f"{name} ({rs[0].model})", alpha=0.7)
    axes.set_xlabel("turn index")
    axes.set_ylabel("model latency per turn (ms, log scale)")
    axes.set_yscale("log")
    axes.set_title("Per-turn latency by provider")
    if axes.collections:  # no turn at all (every provider failed): no legend to draw
        axes.legend()
    axes.grid(True, alpha=0.3)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def write_all(out: Path, results: list[TaskResult], trials: int, data: dict[str, Any]) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    files = {
        "turns": out / "turns.jsonl",
        "transcripts": out / "transcripts.jsonl",
        "summary": out / "summary.json",
        "report": out / "report.md",
        "chart": out / "latency.png",
    }
    write_turns(files["turns"], results)
    write_transcripts(files["transcripts"], results)
    files["summary"].write_text(json.dumps(data, indent=2, ensure_ascii=False), encoding="utf-8")
    files["report"].write_text(markdown(results, data, trials), encoding="utf-8")
    chart(files["chart"], results)
    return list(files.values())

"""python -m evals split: a split drawn once from its seed, run on each model in turn (each served by
`serve.llama` on a free port while its turn lasts), and one report of all of them side by side, with
intervals. `make report` writes docs/results/test/ this way, and `python -m evals readme` puts its table in
the README.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

from evals import report, scores
from evals.manifest import manifest
from evals.runner import EvalSettings, Provider, TaskResult, run_suite
from evals.servers import ServerProcess
from evals.splits import Draw, suites_named
from evals.stats import Share

README_START, README_END = "<!-- results: written by python -m evals readme -->", "<!-- /results -->"


async def run_models(models: list[str], draw: Draw, split: str, settings: EvalSettings) -> list[TaskResult]:
    suites = suites_named([split], draw)
    results: list[TaskResult] = []
    with tempfile.TemporaryDirectory(prefix="split-") as scratch:
        for model in models:
            with ServerProcess("serve.llama", "--model", model, "--quiet") as server:
                provider = Provider(model, server.base_url, model)
                for suite in suites:
                    done = await run_suite(suite, [provider], settings, Path(scratch) / model / suite.name, progress)
                    results += done
    return results


def progress(label: str) -> None:
    print(f"  {label}", file=sys.stderr, flush=True)


def main(models: list[str], draw: Draw, split: str, settings: EvalSettings, out: Path, command: str) -> int:
    results = asyncio.run(run_models(models, draw, split, settings))
    facts = manifest([])
    facts["models"] = models
    described = {"split": split, "seed": draw.seed, "languages": list(draw.languages)}
    described |= {"generated": draw.generated, "real": draw.real}
    written = report.write_split(out, results, settings.trials, described, facts, command)
    report.write_transcripts(out / "transcripts.jsonl", results)
    print("\n".join(scores.tables(results, settings.trials)))
    print("\nwrote " + ", ".join(str(p) for p in [*written, out / "transcripts.jsonl"]))
    return 0


def readme_table(summaries: list[tuple[dict[str, Any], str]]) -> list[str]:
    """The README's table, read from one or more summary.json files of one split drawn from one seed (each
    with the link to its report): each model's right answers in all, on generated and on real projects, and
    per language asked in, each with its interval; and where each row comes from."""
    first = summaries[0][0]
    drawn = {(s.get("split"), s.get("seed"), tuple(s.get("languages") or [])) for s, _ in summaries}
    if len(drawn) > 1:
        raise ValueError(f"one table joins runs of one split drawn from one seed, not {sorted(map(str, drawn))}")
    languages = first.get("languages") or []
    head = ["model", "all", "generated projects", "real projects", *languages]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    seen: set[str] = set()
    sources = []
    for summary, link in summaries:
        for model, facts in summary["scores"].items():
            if model in seen:
                raise ValueError(f"{model} has rows in more than one summary; keep one of its runs")
            seen.add(model)
            lines.append(f"| {model} | " + " | ".join(row_cells(facts, languages)) + " |")
        machine = summary.get("manifest", {})
        again = f", judged again by `{summary['rescored_by']}`" if summary.get("rescored_by") else ""
        sources.append(
            f"{', '.join(summary['scores'])} at git revision `{str(machine.get('git_revision'))[:12]}` on "
            f"{machine.get('cpu')} ({machine.get('cores')} cores), from `{summary.get('command')}`{again} "
            f"([{link}]({link}))"
        )
    lines += [
        "",
        f"The {first.get('split')} split drawn with seed {first.get('seed')}: " + "; ".join(sources) + ". Each "
        "report has the scores per kind of question and language of code too; 95% Wilson intervals in brackets.",
    ]
    return lines


def row_cells(facts: dict[str, Any], languages: list[str]) -> list[str]:
    """One model's cells: all, generated projects, real projects (every language of code together), then each
    language asked in."""
    projects = facts.get("project", {})
    real = [v for k, v in projects.items() if k.startswith("real")]
    cells = [str(Share(facts["all"]["right"], facts["all"]["total"])),
             str(Share(**projects.get("generated", {"right": 0, "total": 0}))),
             str(Share(sum(v["right"] for v in real), sum(v["total"] for v in real)))]  # fmt: skip
    return cells + [str(Share(**facts.get("language asked in", {}).get(code, {"right": 0, "total": 0})))
                    for code in languages]  # fmt: skip


def write_readme(readme: Path, summary_paths: list[Path]) -> Path:
    """Replace the README's results block with the table read from the split's summaries."""
    summaries = [(json.loads(p.read_text(encoding="utf-8")), p.parent.joinpath("report.md").as_posix())
                 for p in summary_paths]  # fmt: skip
    text = readme.read_text(encoding="utf-8")
    pattern = re.compile(re.escape(README_START) + r".*?" + re.escape(README_END), re.S)
    if not pattern.search(text):
        raise ValueError(f"{readme} has no results block ({README_START} ... {README_END})")
    block = "\n".join([README_START, *readme_table(summaries), README_END])
    readme.write_text(pattern.sub(lambda _: block, text), encoding="utf-8")
    return readme

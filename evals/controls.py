"""python -m evals controls: what each control of the small profile is worth, measured on every suite.

Runs each suite with the small profile, with no controls, and with each control of the profile taken out
or changed (one at a time), for the scripted provider and each model named, and prints one table: right
answers per suite, turns, tool runs, wall-clock. Models are served one at a time by `serve.llama` on a
free port.
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from evals.manifest import results_header
from evals.runner import EvalSettings, Provider, TaskResult, aggregate, run_suite
from evals.servers import ServerProcess
from evals.splits import suites_named
from harness.controls import SMALL, TINY
from harness.core.config import NO_CONTROLS, ControlParameter, ControlSpec, Profile
from harness.prompts import GENERIC_SYSTEM_PROMPT

MEASURED_SUITES = ("dev",)  # a control is tuned on the development split, never on the test split


@dataclass(frozen=True)
class Variant:
    name: str
    profile: Profile
    system: str | None = None  # None: the default for the suite's tools


def without(profile: Profile, name: str) -> Profile:
    return replace(
        profile,
        name=f"{profile.name} without {name}",
        controls=tuple(spec for spec in profile.controls if spec.name != name),
    )


def changed(profile: Profile, name: str, **params: ControlParameter) -> Profile:
    specs = tuple(ControlSpec(s.name, {**s.params, **params}) if s.name == name else s for s in profile.controls)
    shown = ", ".join(f"{k} {v}" for k, v in params.items())
    return replace(profile, name=f"{profile.name}, {name} {shown}", controls=specs)


def variants() -> list[Variant]:
    rows = [
        Variant("small", SMALL),
        Variant("tiny", TINY),
        Variant("none", NO_CONTROLS),
        Variant("none, generic system prompt", NO_CONTROLS, GENERIC_SYSTEM_PROMPT),
        Variant("small, generic system prompt", SMALL, GENERIC_SYSTEM_PROMPT),
    ]
    rows += [Variant(f"small without {spec.name}", without(SMALL, spec.name)) for spec in SMALL.controls]
    rows += [
        Variant("small, look_while_unread 0", changed(SMALL, "unread_paths", look_while_unread=0)),
        Variant("small, look_while_unread 12", changed(SMALL, "unread_paths", look_while_unread=12)),
        Variant("small, look_first turns 3", changed(SMALL, "look_first", turns=3)),
    ]
    return rows


async def measure(
    provider: Provider, variant: Variant, concurrency: int, scratch: Path, suites: tuple[str, ...] = MEASURED_SUITES
) -> list[dict[str, Any]]:
    rows = []
    for name in suites:
        results: list[TaskResult] = []
        for suite in suites_named([name]):
            settings = EvalSettings(concurrency=concurrency, controls=variant.profile, system=variant.system)
            # Workspaces are named by task id, which the suites share: each suite of each variant gets its own.
            fresh = Path(tempfile.mkdtemp(dir=scratch))
            results += await run_suite(suite, [provider], settings, fresh, lambda _: None)
        total = aggregate(results, 1)
        wrong = {
            r.task if r.suite == name else f"{r.suite}/{r.task}": {"failure": r.failure, "why": r.why}
            for r in results
            if not r.correct
        }
        rows.append({"suite": name, **total, "wrong": wrong})
    return rows


def line(model: str, variant: str, rows: list[dict[str, Any]]) -> str:
    cells = [f"{r['correct']}/{r['scored']}" for r in rows]
    turns = sum(r["turns"] for r in rows)
    tools = sum(r["tool_runs"] for r in rows)
    wall = sum(r["wall_ms"] for r in rows) / 1000
    return f"| {model} | {variant} | {' | '.join(cells)} | {turns} | {tools} | {wall:,.0f} s |"


def wrong_answers(details: list[dict[str, Any]]) -> list[str]:
    """One line per task a variant got wrong: its suite, its failure class and what the scorer saw."""
    lines = []
    for row in details:
        for suite in row["suites"]:
            for task, wrong in suite["wrong"].items():
                where = f"{row['model']}, {row['variant']}, {suite['suite']}, {task}"
                lines.append(f"- {where}: {wrong['failure']} ({wrong['why'] or 'no verdict'})")
    return lines


async def run(
    models: list[str], scripted: bool, concurrency: int, only: list[str] | None, suites: tuple[str, ...]
) -> tuple[list[str], list[dict[str, Any]]]:
    chosen = [v for v in variants() if only is None or v.name in only]
    head = ["model", "controls", *suites, "turns", "tool runs", "wall"]
    table = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    details: list[dict[str, Any]] = []
    targets: list[tuple[str, Any]] = [("scripted", None)] if scripted else []
    targets += [(model, model) for model in models]
    with tempfile.TemporaryDirectory(prefix="controls-") as scratch:
        for label, model in targets:
            module, args = ("serve.scripted", ()) if model is None else ("serve.llama", ("--model", model, "--quiet"))
            with ServerProcess(module, *args) as server:
                provider = Provider(label, server.base_url, "solve" if model is None else model)
                for variant in chosen:
                    rows = await measure(provider, variant, concurrency, Path(scratch), suites)
                    table.append(line(label, variant.name, rows))
                    details.append({"model": label, "variant": variant.name, "suites": rows})
                    print(table[-1], flush=True)
    return table, details


def main(
    models: list[str], scripted: bool, concurrency: int, only: list[str] | None, out: Path, suites: tuple[str, ...]
) -> int:
    table, details = asyncio.run(run(models, scripted, concurrency, only, suites))
    out.parent.mkdir(parents=True, exist_ok=True)
    head = [results_header("python -m evals " + " ".join(sys.argv[1:])), ""]
    wrong = wrong_answers(details)
    tail = ["", "## Wrong answers", "", *(wrong or ["None."])]
    out.write_text("\n".join(head + table + tail) + "\n", encoding="utf-8")
    out.with_suffix(".json").write_text(json.dumps(details, indent=2), encoding="utf-8")
    print(f"wrote {out} and {out.with_suffix('.json')}")
    return 0

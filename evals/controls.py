"""python -m evals controls: what each small-model control is worth, measured.

Runs the default and the generated suite with every control at its default and with each one changed
(one at a time), for the scripted provider and each model named, and prints one table: right answers,
turns, tool runs, wall-clock. Models are served one at a time by `serve.llama` on a free port.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from evals.runner import Provider, Settings, TaskResult, aggregate, run_suite
from evals.servers import ServerProcess
from evals.suite import SUITES, load_suite
from harness.config import Controls
from harness.prompts import GENERIC_SYSTEM_PROMPT, SYSTEM_PROMPT


@dataclass(frozen=True)
class Variant:
    name: str
    controls: Controls
    system: str = SYSTEM_PROMPT


def variants() -> list[Variant]:
    default = Controls()
    return [
        Variant("defaults", default),
        Variant("the seed's loop: every control off, generic prompt", Controls.off(), GENERIC_SYSTEM_PROMPT),
        Variant("generic system prompt", default, GENERIC_SYSTEM_PROMPT),
        Variant("look_turns 0", replace(default, look_turns=0)),
        Variant("look_turns 1", replace(default, look_turns=1)),
        Variant("look_turns 2", replace(default, look_turns=2)),
        Variant("look_turns 4", replace(default, look_turns=4)),
        Variant("act_on_intent on", replace(default, act_on_intent=True)),
        Variant("call_after_error on", replace(default, call_after_error=True)),
        Variant("repeat_guard off", replace(default, repeat_guard=False)),
        Variant("answer_at_cap on", replace(default, answer_at_cap=True)),
        Variant("answer_mode offered", replace(default, answer_mode="offered")),
        Variant("answer_mode restated", replace(default, answer_mode="restated")),
        Variant("answer_mode prose", replace(default, answer_mode="prose")),
        Variant("parallel_calls off", replace(default, parallel_calls=False)),
        Variant("empty_retries 0", replace(default, empty_retries=0)),
        Variant("empty_mode ask", replace(default, empty_mode="ask")),
        Variant("remind_question on", replace(default, remind_question=True)),
        Variant("verify_answer on", replace(default, verify_answer=True)),
        Variant("tool_talk on", replace(default, tool_talk=True)),
        Variant("answer_from_results on", replace(default, answer_from_results=True)),
        Variant(
            "the previous defaults: look_turns 2, answer_mode prose, answer_from_results off",
            replace(default, look_turns=2, answer_mode="prose", answer_from_results=False),
        ),
        Variant("rendering hermes", replace(default, rendering="hermes")),
        Variant("rendering words", replace(default, rendering="words")),
    ]


async def measure(provider: Provider, variant: Variant, concurrency: int, scratch: Path) -> list[dict[str, Any]]:
    rows = []
    for suite_name in ("default", "generated"):
        suite = load_suite(SUITES / f"{suite_name}.json")
        settings = Settings(concurrency=concurrency, controls=variant.controls, system=variant.system)
        # Workspaces are named by task id, which both suites share: each suite of each variant gets its own.
        fresh = Path(tempfile.mkdtemp(dir=scratch))
        results: list[TaskResult] = await run_suite(suite, [provider], settings, fresh, lambda _: None)
        total = aggregate(results, 1)
        rows.append({"suite": suite_name, **total, "wrong": {r.task: r.failure for r in results if not r.correct}})
    return rows


def line(model: str, variant: str, rows: list[dict[str, Any]]) -> str:
    cells = [f"{r['correct']}/{r['scored']}" for r in rows]
    turns = sum(r["turns"] for r in rows)
    tools = sum(r["tool_runs"] for r in rows)
    wall = sum(r["wall_ms"] for r in rows) / 1000
    return f"| {model} | {variant} | {cells[0]} | {cells[1]} | {turns} | {tools} | {wall:,.0f} s |"


async def run(
    models: list[str], scripted: bool, concurrency: int, only: list[str] | None
) -> tuple[list[str], list[dict[str, Any]]]:
    chosen = [v for v in variants() if only is None or v.name in only]
    table = ["| model | controls | default | generated | turns | tool runs | wall |", "|---|---|---|---|---|---|---|"]
    details: list[dict[str, Any]] = []
    targets: list[tuple[str, Any]] = [("scripted", None)] if scripted else []
    targets += [(model, model) for model in models]
    with tempfile.TemporaryDirectory(prefix="controls-") as scratch:
        for label, model in targets:
            module, args = ("serve.scripted", ()) if model is None else ("serve.llama", ("--model", model, "--quiet"))
            with ServerProcess(module, *args) as server:
                provider = Provider(label, server.base_url, "solve" if model is None else model)
                for variant in chosen:
                    rows = await measure(provider, variant, concurrency, Path(scratch))
                    table.append(line(label, variant.name, rows))
                    details.append({"model": label, "variant": variant.name, "suites": rows})
                    print(table[-1], flush=True)
    return table, details


def main(models: list[str], scripted: bool, concurrency: int, only: list[str] | None, out: Path) -> int:
    table, details = asyncio.run(run(models, scripted, concurrency, only))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(table) + "\n", encoding="utf-8")
    out.with_suffix(".json").write_text(json.dumps(details, indent=2), encoding="utf-8")
    print(f"wrote {out} and {out.with_suffix('.json')}")
    return 0

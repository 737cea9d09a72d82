"""What every experiment shares: the scripted provider, fresh workspaces, one-call runs, tables, invariants."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from evals.workspace import default_workspace
from harness.app.runtime import runnable, start
from harness.app.trace import MemoryTrace
from harness.core.config import NO_CONTROLS, RunConfig
from harness.core.limits import Limits
from harness.core.state import RunState
from harness.prompts import GENERIC_SYSTEM_PROMPT as SYSTEM_PROMPT  # the seed's setup: its plain prompt

TASK = "Which file mentions a timeout?"


class InvariantFailed(AssertionError):
    """An experiment's number is not what the harness promises."""


def check(condition: bool, message: str) -> None:
    if not condition:
        raise InvariantFailed(message)


@dataclass
class Table:
    title: str
    columns: Sequence[str]
    rows: list[Sequence[object]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def add(self, *row: object) -> None:
        self.rows.append(row)

    def cells(self) -> list[list[str]]:
        return [[cell if isinstance(cell, str) else fmt(cell) for cell in row] for row in self.rows]

    def text(self) -> str:
        cells = [list(self.columns), *self.cells()]
        widths = [max(len(row[i]) for row in cells) for i in range(len(self.columns))]
        lines = [
            "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip() for row in cells
        ]
        lines.insert(1, "  ".join("-" * width for width in widths))
        return "\n".join([self.title, *lines, *self.notes])

    def markdown(self) -> str:
        def escape(cell: str) -> str:
            return cell.replace("|", "\\|").replace("\n", " ")

        head = "| " + " | ".join(self.columns) + " |"
        rule = "| " + " | ".join("---" for _ in self.columns) + " |"
        body = ["| " + " | ".join(escape(c) for c in row) + " |" for row in self.cells()]
        notes = [f"\n{note}" for note in self.notes]
        return "\n".join([f"### {self.title}", "", head, rule, *body, *notes])


def fmt(value: object) -> str:
    if isinstance(value, float):
        return f"{value:,.6f}" if value < 1 else f"{value:,.1f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def usd(value: float) -> str:
    return f"${value:.6f}"


@dataclass
class Outcome:
    state: RunState
    trace: MemoryTrace
    wall_ms: float
    workspace: Path

    @property
    def prompt_tokens_per_turn(self) -> list[int]:
        return [e["prompt_tokens"] for e in self.trace.of("turn") if e["run_id"] == self.state.run_id]

    @property
    def answer(self) -> str:
        return self.state.answer or ""


@dataclass
class Lab:
    base_url: str
    root: Path
    counter: int = 0

    def workspace(self) -> Path:
        self.counter += 1
        return default_workspace(self.root / f"ws{self.counter}")

    def config(
        self,
        model: str,
        workspace: Path,
        latency_ms: int | None,
        approve_deletes: bool,
        research: tuple[str, Limits] | None,
    ) -> RunConfig:
        """The catalogue the scripted scenarios are written against, with no controls (the plain loop)."""
        headers = {"X-Scripted-Latency-Ms": str(latency_ms)} if latency_ms is not None else {}
        tools = ("list_files", "read_file", "delete_file", "scan_archive") + (("research",) if research else ())
        config = RunConfig(
            self.base_url,
            model,
            str(workspace),
            tools=tools,
            approve_deletes=approve_deletes,
            headers=headers,
            controls=NO_CONTROLS,
        )
        if research is not None:
            config = replace(config, research_model=research[0], research_limits=research[1])
        return config

    async def run(
        self,
        model: str,
        prompt: str = TASK,
        *,
        limits: Limits | None = None,
        workspace: Path | None = None,
        latency_ms: int | None = None,
        state: RunState | None = None,
        approve_deletes: bool = True,
        research: tuple[str, Limits] | None = None,
        **options: Any,
    ) -> Outcome:
        """One run through the harness runtime; `options` set RunOptions fields (errors, dedupe, signal...)."""
        where = workspace or self.workspace()
        trace = options.pop("trace", None) or MemoryTrace()
        config = self.config(model, where, latency_ms, approve_deletes, research)
        start_state = state or start(prompt, config, limits=limits or Limits(), system=SYSTEM_PROMPT)
        async with runnable(start_state, trace=trace) as runner:
            for name, value in options.items():
                setattr(runner.options, name, value)
            began = time.perf_counter()
            final = await runner.run()
            wall = (time.perf_counter() - began) * 1000
        return Outcome(final, trace, wall, where)

"""research: a sub-agent with its own transcript and limits, under the parent's Stop signal.

The child's state lives inside the parent's (`children`, under the call that started it) and is saved
with it at every step, so a parent killed part-way resumes the child where it stopped: no child turn is
paid twice, and every request it paid for is in the parent's totals exactly once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from harness.core.config import research_limits
from harness.core.limits import Limits, Prices
from harness.core.loop import run
from harness.core.options import RunOptions
from harness.core.protocols import Model, ToolContext, TraceSink
from harness.core.registry import Registry
from harness.core.state import Parent, RunState, new_run
from harness.core.turn import Control
from harness.prompts import RESEARCH_SYSTEM
from harness.tools.roles import OnlyLooks

QUESTION: Mapping[str, Any] = {
    "type": "object",
    "properties": {"question": {"type": "string", "description": "the question to investigate"}},
    "required": ["question"],
    "additionalProperties": False,
}


@dataclass
class Research(OnlyLooks):
    """Runs (or resumes) a child run per call; its spend is the parent's `child_usage`."""

    model: Model
    tools: Registry
    limits: Limits = field(default_factory=research_limits)
    prices: Prices = field(default_factory=Prices)
    trace: TraceSink | None = None
    controls: Sequence[Control] = ()  # the parent's controls
    name: str = "research"
    description: str = "Investigate one question with the file tools and return a short summary."
    parameters: Mapping[str, Any] = field(default_factory=lambda: QUESTION)

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> str:
        child = ctx.children.load()
        if child is None or child.status in ("running", "interrupted"):  # new, or killed or stopped part-way
            child = child or new_run(
                args["question"],
                system=RESEARCH_SYSTEM,
                limits=Limits(**vars(self.limits)),
                prices=self.prices,
                run_id=f"{ctx.run_id}.{ctx.call_id}",
                parent=Parent(ctx.run_id, ctx.call_id),
            )
            ctx.children.save(child)
            options = RunOptions(
                model=self.model, store=ctx.children, trace=self.trace, signal=ctx.signal, controls=self.controls
            )
            child = await run(child, self.tools, options)
            ctx.signal.check()
        return result_of(child)


def result_of(child: RunState) -> str:
    if child.answer:
        return child.answer
    return f"no result (the research stopped: {child.status}, {child.reason})"

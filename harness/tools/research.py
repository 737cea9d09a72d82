"""research: a sub-agent with its own transcript and limits, under the parent's Stop signal."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from harness.limits import Limits, Prices
from harness.loop import run
from harness.options import RunOptions
from harness.protocols import Model, ToolContext, TraceSink
from harness.state import new_run
from harness.tools.base import Registry

RESEARCH_SYSTEM = (
    "You are a research assistant. Use the tools to investigate the question, then answer it in one or two sentences."
)
QUESTION: Mapping[str, Any] = {
    "type": "object",
    "properties": {"question": {"type": "string", "description": "the question to investigate"}},
    "required": ["question"],
    "additionalProperties": False,
}


@dataclass
class Research:
    """Runs a child run per call; its tokens and cost are reported to the parent's `child_usage`."""

    model: Model
    tools: Registry
    limits: Limits = field(default_factory=lambda: Limits(max_turns=6, max_budget_usd=0.05))
    prices: Prices = field(default_factory=Prices)
    trace: TraceSink | None = None
    name: str = "research"
    description: str = "Investigate one question with the file tools and return a short summary."
    parameters: Mapping[str, Any] = field(default_factory=lambda: QUESTION)
    read_only: bool = True
    needs_approval: bool = False
    honours_idempotency_key: bool = True

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> str:
        child = new_run(
            args["question"],
            system=RESEARCH_SYSTEM,
            limits=Limits(**vars(self.limits)),
            prices=self.prices,
            run_id=f"{ctx.run_id}.{ctx.call_id}",
        )
        try:
            await run(child, self.tools, RunOptions(model=self.model, trace=self.trace, signal=ctx.signal))
        finally:
            ctx.account(child.usage)
            ctx.account(child.child_usage)
        ctx.signal.check()
        if child.answer:
            return child.answer
        return f"no result (the research stopped: {child.status}, {child.reason})"

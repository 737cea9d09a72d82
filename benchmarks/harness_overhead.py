"""The harness's own time per turn: in-process with a scripted model, and over loopback beyond the provider."""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from evals.servers import ServerProcess
from evals.workspace import default_workspace
from harness.app.client import FunctionModel, OpenAIClient
from harness.app.trace import MemoryTrace
from harness.core.limits import Limits
from harness.core.loop import run
from harness.core.options import RunOptions
from harness.core.protocols import ModelReply, ModelRequest, ToolContext
from harness.core.registry import NO_ARGUMENTS, Registry
from harness.core.state import new_run
from harness.fs.workspace import Workspace
from harness.prompts import SYSTEM_PROMPT
from harness.tools.catalogue import reading_tools
from serve.scripted.backend import to_message
from serve.scripted.scenarios import scenarios
from serve.scripted.script import Transcript
from wire.tokens import TokenCounter
from wire.types import usage_of

TURNS = 200


class Noop:
    name, description, parameters = "list_files", "does nothing", NO_ARGUMENTS
    read_only, needs_approval, honours_idempotency_key = True, False, True

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> str:
        return "a.txt (1 bytes)"


def scripted_model(name: str, counter: TokenCounter) -> FunctionModel:
    """The scripted provider's scenario, in-process; token counting is done ahead so it is not timed as harness."""
    scenario = scenarios()[name]

    def reply(request: ModelRequest) -> ModelReply:
        message, finish = to_message(scenario.reply(Transcript(name, list(request.messages))), counter, [], None)
        return ModelReply(message, usage_of(100, 10), finish)

    return FunctionModel(reply)


class TimedModel:
    """Delegates to a model and adds up the time spent inside it."""

    def __init__(self, model: FunctionModel) -> None:
        self.model, self.ms = model, 0.0

    async def complete(self, request: ModelRequest) -> ModelReply:
        began = time.perf_counter()
        try:
            return await self.model.complete(request)
        finally:
            self.ms += (time.perf_counter() - began) * 1000


class RecordingClient(OpenAIClient):
    """Keeps every request body it sends, so the same requests can be replayed raw."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.sent: list[dict[str, Any]] = []

    def body(self, request: ModelRequest) -> dict[str, Any]:
        payload = super().body(request)
        self.sent.append(payload)
        return payload


async def in_process(tools: Registry, label: str) -> str:
    inner, per_turn = scripted_model("runaway", TokenCounter()), []
    for _ in range(3):
        model = TimedModel(inner)
        began = time.perf_counter()
        await run(
            new_run("go", system=SYSTEM_PROMPT, limits=Limits(max_turns=TURNS)),
            tools,
            RunOptions(model=model, trace=MemoryTrace()),
        )
        per_turn.append(((time.perf_counter() - began) * 1000 - model.ms) / TURNS)
    return f"  {label:<48} {statistics.median(per_turn):7.3f} ms/turn  (median of 3 runs of {TURNS} turns)"


async def over_loopback(server: ServerProcess, workspace: Path) -> str:
    """A 3-turn plan run through the harness vs the same three requests sent raw: the difference is ours."""
    overheads, tools = [], Registry(reading_tools(Workspace(workspace)))
    for _ in range(5):
        client = RecordingClient(server.base_url, "plan")
        async with client:
            began = time.perf_counter()
            await run(
                new_run("Which file mentions a timeout?", system=SYSTEM_PROMPT, model="plan"),
                tools,
                RunOptions(model=client),
            )
            harness_ms = (time.perf_counter() - began) * 1000
        async with httpx.AsyncClient() as raw:
            began = time.perf_counter()
            for payload in client.sent:
                (await raw.post(f"{server.base_url}/chat/completions", json=payload)).raise_for_status()
            provider_ms = (time.perf_counter() - began) * 1000
        overheads.append(harness_ms - provider_ms)
    label = "3-turn plan over loopback, beyond the provider"
    return f"  {label:<48} {statistics.median(overheads):7.2f} ms/run   (includes the 2 tool runs)"


def main() -> list[str]:
    lines = ["harness overhead"]
    lines.append(asyncio.run(in_process(Registry([Noop()]), "in-process scripted model, no-op tool")))
    with tempfile.TemporaryDirectory() as scratch:
        workspace = default_workspace(Path(scratch) / "ws")
        lines.append(
            asyncio.run(
                in_process(Registry(reading_tools(Workspace(workspace))), "in-process scripted model, real list_files")
            )
        )
        with ServerProcess("serve.scripted") as server:
            lines.append(asyncio.run(over_loopback(server, workspace)))
    return lines

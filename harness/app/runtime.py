"""From a RunConfig to a runnable run: the model client, the tools and the options.

The CLI, the eval, the experiments and the benchmarks all start and resume runs through here, so a run
started one way can be resumed another and behaves the same.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace

from harness.app.client import OpenAIClient
from harness.controls import build, choose
from harness.controls.profiles import card_for, context_of, fitted_profile, needs_card
from harness.core.config import RunConfig
from harness.core.limits import Limits, Prices
from harness.core.loop import run
from harness.core.options import MAX_REPLY_TOKENS, RunOptions
from harness.core.policy import ToolErrorPolicy
from harness.core.protocols import Model, StateStore, TraceSink
from harness.core.registry import Registry
from harness.core.state import RunState, new_run
from harness.core.stop import StopSignal
from harness.fs.workspace import Workspace
from harness.index.index import WorkspaceIndex
from harness.prompts import FOR_TOOLS, ForTools, system_prompt
from harness.tools.catalogue import catalogue


def start(
    prompt: str,
    config: RunConfig,
    *,
    limits: Limits | None = None,
    prices: Prices | None = None,
    run_id: str | None = None,
    system: str | ForTools | None = FOR_TOOLS,
) -> RunState:
    """A new run of `config` (its system prompt the default for its tools unless given; None: none); its
    workspace is checked before anything is saved."""
    Workspace(config.workspace)
    text = system_prompt(config.tools) if isinstance(system, ForTools) else system
    return new_run(prompt, system=text, model=config.model, limits=limits, prices=prices, run_id=run_id, config=config)


@dataclass
class Runnable:
    state: RunState
    tools: Registry
    options: RunOptions
    clients: Sequence[OpenAIClient] = field(default_factory=list)

    async def run(self) -> RunState:
        self.state = await run(self.state, self.tools, self.options)
        return self.state


def client_for(config: RunConfig, model: str) -> OpenAIClient:
    api_key = os.environ.get(config.api_key_env)
    return OpenAIClient(
        config.base_url, model, api_key=api_key, timeout_s=config.request_timeout_s, headers=config.headers
    )


async def chosen(config: RunConfig, client: OpenAIClient | None) -> RunConfig:
    """The config with its controls profile chosen and the model's window noted, from what the server says of
    the model (asked once per run: a resumed run keeps both): `auto` picks a profile by the model's size; a
    profile named outright is told the window, when a control of it fits one."""
    auto = config.controls.name == "auto"
    if client is None or not (auto or needs_card(config.controls) or config.window is None):
        return config
    cards = await client.models()
    card = card_for(config.model, cards) if cards else None
    window = config.window or context_of(card)
    if auto:
        return replace(config, controls=choose(config.model, cards), window=window)
    if needs_card(config.controls):
        return replace(config, controls=fitted_profile(config.controls, config.model, cards), window=window)
    return replace(config, window=window)


def tools_for(
    config: RunConfig,
    research: Model | None = None,
    trace: TraceSink | None = None,
    index: WorkspaceIndex | None = None,
) -> Registry:
    """The tools the config names, over its workspace and its index (research only with a model to run it)."""
    workspace = Workspace(config.workspace, private=config.private)
    return catalogue(
        workspace,
        names=config.tools,
        research_model=research,
        research_limits=config.research_limits,
        presets=config.presets,
        approve_writes=not config.allow_writes,
        approve_deletes=config.approve_deletes,
        trace=trace,
        controls=build(config.controls),
        window=config.window,
        index=index or WorkspaceIndex(workspace),
    )


def index_progress(on_progress: Callable[[str, str], None] | None) -> Callable[[str], None] | None:
    """Where the index says how far its build has got on a large folder: the run's progress lines."""
    if on_progress is None:
        return None
    return lambda message: on_progress("index", message)


@asynccontextmanager
async def runnable(
    state: RunState,
    *,
    store: StateStore | None = None,
    trace: TraceSink | None = None,
    signal: StopSignal | None = None,
    on_progress: Callable[[str, str], None] | None = None,
    trace_payloads: bool = False,
    model: Model | None = None,
) -> AsyncIterator[Runnable]:
    """The run rebuilt from its state's config; `model` stands in for the HTTP client (tests, benchmarks)."""
    config = state.config
    if config is None:
        raise ValueError(f"run {state.run_id} has no configuration to rebuild it from")
    clients = [] if model is not None else [client_for(config, config.model)]
    config = state.config = await chosen(config, clients[0] if clients else None)
    research: Model | None = None
    if "research" in config.tools:
        research = model if model is not None else client_for(config, config.research_model or config.model)
        if isinstance(research, OpenAIClient):
            clients.append(research)
    index = WorkspaceIndex(Workspace(config.workspace, private=config.private), progress=index_progress(on_progress))
    tools = tools_for(config, research, trace, index)
    options = RunOptions(
        model=model or clients[0],
        store=store,
        trace=trace,
        signal=signal or StopSignal(),
        errors=ToolErrorPolicy(mode=config.tool_errors),
        dedupe=config.dedupe,
        on_progress=on_progress,
        max_tokens=config.max_tokens or MAX_REPLY_TOKENS,
        trace_payloads=trace_payloads,
        controls=build(config.controls),
        index=index,
    )
    try:
        yield Runnable(state, tools, options, clients)
    finally:
        for client in clients:
            await client.aclose()

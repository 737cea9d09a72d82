"""From a config to a runnable run: `auto` picks the controls by what the server says of the model, once per run
(a resumed run keeps its choice and asks nothing), and a run starts only over a workspace that exists."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from pathlib import Path

import httpx
import pytest

from harness.app.client import OpenAIClient
from harness.app.runtime import chosen, runnable, start
from harness.controls import TINY
from harness.core.config import RunConfig
from harness.core.state import new_run
from harness.errors import ConfigError


def server(n_params: int, seen: list[str]) -> httpx.MockTransport:
    """A server whose /models says the model has `n_params` parameters and a 32,768-token window."""

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request.url.path)
        card = {"id": "m", "object": "model", "owned_by": "x", "meta": {"n_params": n_params, "context": 32768}}
        return httpx.Response(200, json={"object": "list", "data": [card]})

    return httpx.MockTransport(handle)


def config_over(workspace: Path, **fields: object) -> RunConfig:
    return RunConfig("http://127.0.0.1:9/v1", "m", str(workspace), **fields)  # type: ignore[arg-type]


async def choose(config: RunConfig, n_params: int) -> tuple[RunConfig, list[str]]:
    seen: list[str] = []
    client = OpenAIClient(config.base_url, "m", transport=server(n_params, seen), max_retries=0)
    try:
        return await chosen(config, client), seen
    finally:
        await client.aclose()


@pytest.mark.parametrize(("n_params", "profile"), [(494_000_000, "tiny"), (1_540_000_000, "small"), (7e9, "none")])
def test_auto_picks_the_controls_by_the_models_size_and_notes_its_window(
    tmp_path: Path, n_params: int, profile: str
) -> None:
    config, seen = asyncio.run(choose(config_over(tmp_path), int(n_params)))
    assert config.controls.name == profile and config.window == 32768
    assert seen == ["/v1/models"]


def test_a_run_that_has_chosen_asks_the_server_nothing_when_it_resumes(tmp_path: Path) -> None:
    first, _ = asyncio.run(choose(config_over(tmp_path), 494_000_000))
    again, seen = asyncio.run(choose(first, 7_000_000_000))  # the server now says something else
    assert again == first and seen == []
    named = replace(config_over(tmp_path), controls=TINY)  # a profile named outright is told the window
    told, seen = asyncio.run(choose(named, 494_000_000))
    assert told.window == 32768 and told.controls.name == "tiny" and seen == ["/v1/models"]


def test_a_run_starts_only_over_a_workspace_that_exists_and_only_a_configured_run_rebuilds(tmp_path: Path) -> None:
    with pytest.raises(ConfigError):
        start("q?", config_over(tmp_path / "missing"))
    state = start("What is here?", config_over(tmp_path))
    assert state.question == "What is here?" and state.config is not None
    assert json.dumps(state.messages[0]["content"]).startswith('"You answer questions about the files')

    async def rebuild() -> None:
        async with runnable(new_run("q?")):
            pass

    with pytest.raises(ValueError, match="has no configuration"):
        asyncio.run(rebuild())

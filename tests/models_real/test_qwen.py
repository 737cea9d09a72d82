"""The real Qwen checks (`make test-models`): they run only where the Qwen files are already on disk.

With Qwen2.5-Coder-0.5B, each of the six tasks' first request through the harness gets a tool call whose
arguments are valid for the tool's schema; the server reports the file it loaded.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import jsonschema
import pytest

from benchmarks import forced_calls
from benchmarks.serving import Peer
from evals.suite import DEFAULT_SUITE, Task, load_suite
from evals.workspace import default_workspace
from harness.core.registry import Registry
from harness.fs.workspace import Workspace
from harness.prompts import SYSTEM_PROMPT
from harness.tools.catalogue import reading_tools
from models.registry import QWEN_CODER_05, QWEN_CODER_15, ModelSpec
from models.weights import on_disk
from tests.conftest import Server
from tests.serve.llama.invariance import same_numbers_everywhere

pytestmark = [
    pytest.mark.models,
    pytest.mark.skipif(on_disk(QWEN_CODER_05) is None, reason="qwen2.5-coder-0.5b-instruct is not on disk"),
]


@pytest.fixture(scope="module")
def qwen() -> Iterator[Server]:
    server = Server("serve.llama", "--model", QWEN_CODER_05.name, "--quiet")
    yield server
    server.stop()


def test_the_server_reports_the_file_it_loaded(qwen: Server) -> None:
    health = httpx.get(f"{qwen.url}/healthz").json()
    assert health["quantisation"] == "Q4_K_M" and health["sha256"] == QWEN_CODER_05.file.sha256


@pytest.mark.parametrize("task", load_suite(DEFAULT_SUITE).tasks, ids=lambda t: t.id)
def test_every_first_turn_asked_for_a_call_is_a_valid_tool_call(qwen: Server, tmp_path: Path, task: Task) -> None:
    """Asked for a call (tool_choice required), the model writes the arguments itself; they must fit the schema.
    Unasked, the 0.5B answers some of these in words: that is its choice, not a parse failure."""
    tools = Registry(reading_tools(Workspace(default_workspace(tmp_path / "ws"))))
    messages = [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": task.prompt}]
    body = {"model": QWEN_CODER_05.name, "messages": messages, "tools": tools.definitions(), "tool_choice": "required"}
    reply = httpx.post(f"{qwen.base_url}/chat/completions", json=body | {"max_tokens": 128}, timeout=600).json()
    first = reply["choices"][0]["message"]
    assert first.get("tool_calls"), first
    for call in first["tool_calls"]:
        tool = tools.get(call["function"]["name"])
        assert tool is not None
        jsonschema.validate(json.loads(call["function"]["arguments"]), dict(tool.parameters))


def test_every_forced_call_parses_validates_and_fits(qwen: Server) -> None:
    """The generated schemas of `make bench`'s forced section, strict and not, required and named."""
    good, total = forced_calls.rate(Peer("ours", qwen.base_url, QWEN_CODER_05.name))
    assert good == total


@pytest.mark.skipif(on_disk(QWEN_CODER_15) is None, reason="qwen2.5-coder-1.5b-instruct is not on disk")
async def test_the_15b_gives_each_of_four_concurrent_requests_the_reply_it_gets_alone() -> None:
    # The 1.5B's Q4_K weights are the ones llama.cpp would repack (a different kernel for 1 and 4 rows).
    server = Server("serve.llama", "--model", QWEN_CODER_15.name, "--quiet", "--parallel", "4")
    prompts = [f"Explain in two sentences what a {w} is." for w in ("tree", "log file", "queue", "cache")]
    try:
        async with httpx.AsyncClient(base_url=server.base_url, timeout=600) as http:

            async def one(prompt: str) -> list[tuple[str, float]]:
                body: dict[str, Any] = {"model": QWEN_CODER_15.name, "messages": [{"role": "user", "content": prompt}]}
                body |= {"max_tokens": 24, "logprobs": True}
                reply = (await http.post("/chat/completions", json=body)).json()
                # Log-probabilities, not just text: greedy text hides small differences in the numbers.
                return [(t["token"], t["logprob"]) for t in reply["choices"][0]["logprobs"]["content"]]

            alone = [await one(p) for p in prompts]
            together = await asyncio.gather(*(one(p) for p in prompts))
    finally:
        server.stop()
    assert list(together) == alone


@pytest.mark.parametrize("spec", [QWEN_CODER_05, QWEN_CODER_15], ids=lambda s: s.name)
async def test_a_long_greedy_request_gets_the_same_numbers_fresh_cached_after_any_cut_and_beside_others(
    spec: ModelSpec,
) -> None:
    if on_disk(spec) is None:
        pytest.skip(f"{spec.name} is not on disk")
    await same_numbers_everywhere(spec.name, "--threads", "2", "--ctx", "2048")

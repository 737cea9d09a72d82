"""The scripted provider: requests per second on loopback, and what token counting costs per request."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx

from evals.servers import ServerProcess
from harness.fs.workspace import Workspace
from harness.prompts import SYSTEM_PROMPT
from harness.tools.catalogue import catalogue
from wire.tokens import TokenCounter

REQUESTS, CONCURRENCY = 600, 8
LISTING = "access.log (90 bytes)\nerrors.log (393 bytes)\nnotes.txt (30 bytes)"


def call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def typical_request(tools: list[Any]) -> dict[str, Any]:
    """Turn 3 of `plan`: a system prompt, the question, two calls and their results, the full catalogue."""
    return {
        "model": "plan",
        "tools": tools,
        "messages": [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": "Which file mentions a timeout?"},
            {"role": "assistant", "content": None, "tool_calls": [call("c1", "list_files", "{}")]},
            {"role": "tool", "tool_call_id": "c1", "content": LISTING},
            {"role": "assistant", "content": None, "tool_calls": [call("c2", "read_file", '{"path":"errors.log"}')]},
            {"role": "tool", "tool_call_id": "c2", "content": "ERROR worker 7 timed out after 30000 ms\n" * 8},
        ],
    }  # fmt: skip


async def throughput(url: str, body: dict[str, Any]) -> float:
    async with httpx.AsyncClient(limits=httpx.Limits(max_connections=CONCURRENCY)) as client:
        queue = asyncio.Queue[int]()
        for i in range(REQUESTS):
            queue.put_nowait(i)

        async def worker() -> None:
            while not queue.empty():
                queue.get_nowait()
                (await client.post(url, json=body)).raise_for_status()

        began = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))
        return REQUESTS / (time.perf_counter() - began)


def main() -> list[str]:
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        tools = catalogue(Workspace(scratch)).definitions()
    body = typical_request(list(tools))
    counter = TokenCounter()
    began = time.perf_counter()
    for _ in range(200):
        counter.prompt(body["messages"], body["tools"])
    counting_us = (time.perf_counter() - began) / 200 * 1e6
    with ServerProcess("serve.scripted") as server:
        rps = asyncio.run(throughput(f"{server.base_url}/chat/completions", body))
    per_request_us, tokens = 1e6 / rps, counter.prompt(body["messages"], body["tools"])
    return [
        "scripted provider",
        f"  requests per second on loopback ({CONCURRENCY} clients)  {rps:8.0f} req/s  ({per_request_us:,.0f} us each)",
        f"  token counting per request ({tokens} prompt tokens)     {counting_us:8.0f} us    "
        f"({counting_us / per_request_us:.0%} of a request's time)",
    ]

"""The local model server's HTTP app: one generation at a time, queued; a client that leaves stops its own."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import anyio
from fastapi import FastAPI, Request
from fastapi.responses import StreamingResponse

from serve.errors import UnknownModel
from serve.http import install_error_handlers, sse_event
from serve.llama import chat
from serve.llama.engine import Engine, Generation
from wire.types import (
    ChatCompletion,
    ChatCompletionChunk,
    ChatCompletionRequest,
    Choice,
    ModelCard,
    ModelList,
    completion_id,
    tool_call_deltas,
    usage_of,
)

DISCONNECT_POLL_S = 0.05


async def watch_disconnect(request: Request, cancel: threading.Event) -> None:
    while not cancel.is_set():
        if await request.is_disconnected():
            cancel.set()
            return
        await asyncio.sleep(DISCONNECT_POLL_S)


@dataclass
class Served:
    """The loaded model, the queue in front of it, and what the server counts about it."""

    engine: Engine
    name: str
    quantisation: str = ""
    dialect: str = "hermes"
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    worker: ThreadPoolExecutor = field(default_factory=lambda: ThreadPoolExecutor(1, thread_name_prefix="llama"))
    grammars: chat.Grammars = field(default_factory=chat.Grammars)
    requests: int = 0
    malformed_tool_calls: int = 0

    def health(self) -> dict[str, Any]:
        engine = self.engine
        return {
            "status": "ok",
            "model": self.name,
            "loaded": True,
            "file": str(engine.gguf),
            "quantisation": self.quantisation,
            "tool_call_dialect": self.dialect,
            "context": engine.n_ctx,
            "threads": engine.threads,
            "prompt_cache": {
                "enabled": engine.prompt_cache,
                "entries": len(engine.cache.entries),
                "bytes": engine.cache.size,
            },
            "requests": self.requests,
            "malformed_tool_calls": self.malformed_tool_calls,
        }

    def prepare(self, body: ChatCompletionRequest) -> tuple[list[int], chat.ToolPlan]:
        if body.model != self.name:
            raise UnknownModel(body.model, [self.name])
        plan = chat.tool_plan(body, self.grammars)
        self.requests += 1
        return self.engine.tokenize(chat.prompt_text(self.engine.template, body, plan)), plan

    async def generate(
        self,
        prompt: list[int],
        body: ChatCompletionRequest,
        plan: chat.ToolPlan,
        cancel: threading.Event,
        on_text: Callable[[str], None] | None = None,
    ) -> Generation:
        """Queue for the model, then generate in its thread; the lock is held until llama.cpp is really done."""
        sampling = chat.sampling(body, plan)
        async with self.lock:
            if cancel.is_set():  # the client left while it waited in the queue: no prefill for nobody
                return Generation("", finish="cancelled")
            job = asyncio.get_running_loop().run_in_executor(
                self.worker, self.engine.generate, prompt, sampling, plan.grammar, cancel, on_text
            )
            try:
                return await asyncio.shield(job)
            except asyncio.CancelledError:
                cancel.set()
                with anyio.CancelScope(shield=True):
                    await asyncio.wait({job})
                raise

    async def complete(self, body: ChatCompletionRequest, request: Request) -> ChatCompletion:
        prompt, plan = self.prepare(body)
        cancel = threading.Event()
        watcher = asyncio.create_task(watch_disconnect(request, cancel))
        try:
            generation = await self.generate(prompt, body, plan, cancel)
        finally:
            watcher.cancel()
        message, finish, parsed = chat.reply(generation, prompt, plan)
        self.malformed_tool_calls += parsed.malformed
        return ChatCompletion(
            model=self.name,
            choices=[Choice(message=message, finish_reason=finish)],
            usage=usage_of(len(prompt), generation.predicted_n, generation.cache_n),
            timings=chat.timings(generation),
        )

    async def stream(self, body: ChatCompletionRequest) -> AsyncIterator[str]:
        prompt, plan = self.prepare(body)
        loop, pieces, cancel = asyncio.get_running_loop(), asyncio.Queue[str | None](), threading.Event()
        chunks = Chunks(completion_id(), int(time.time()), self.name)

        def on_text(text: str) -> None:
            loop.call_soon_threadsafe(pieces.put_nowait, text)

        async def produce() -> Generation:
            try:
                return await self.generate(prompt, body, plan, cancel, on_text)
            finally:
                loop.call_soon_threadsafe(pieces.put_nowait, None)

        job = asyncio.create_task(produce())
        try:
            yield chunks.delta({"role": "assistant", "content": ""})
            while (piece := await pieces.get()) is not None:
                yield chunks.delta({"content": piece})
            generation = await job
            message, finish, parsed = chat.reply(generation, prompt, plan)
            self.malformed_tool_calls += parsed.malformed
            for delta in tool_call_deltas(message.get("tool_calls", [])):
                yield chunks.delta(dict(delta))
            yield chunks.delta({}, finish)
            if body.stream_options and body.stream_options.include_usage:
                yield chunks.usage(
                    usage_of(len(prompt), generation.predicted_n, generation.cache_n), chat.timings(generation)
                )
            yield sse_event("[DONE]")
        finally:
            cancel.set()  # the client left (or we are done): stop generating for nobody
            with anyio.CancelScope(shield=True):
                await asyncio.wait({job})


@dataclass(frozen=True)
class Chunks:
    """Server-sent events of one streamed completion."""

    id: str
    created: int
    model: str

    def delta(self, delta: dict[str, Any], finish: str | None = None) -> str:
        return self.event([{"index": 0, "delta": delta, "finish_reason": finish}])

    def usage(self, usage: Any, timings: Any) -> str:
        return self.event([], usage=usage, timings=timings)

    def event(self, choices: list[dict[str, Any]], **extra: Any) -> str:
        raw = {"id": self.id, "created": self.created, "model": self.model, "choices": choices, **extra}
        return sse_event(ChatCompletionChunk.model_validate(raw))


def create_app(served: Served) -> FastAPI:
    app = FastAPI(title="local model server", docs_url=None, redoc_url=None)
    install_error_handlers(app)

    @app.get("/healthz")
    async def healthz() -> dict[str, Any]:
        return served.health()

    @app.get("/v1/models")
    async def models() -> ModelList:
        return ModelList(data=[ModelCard(id=served.name, owned_by="llama.cpp", description=str(served.engine.gguf))])

    @app.post("/v1/chat/completions", response_model=None)
    async def completions(body: ChatCompletionRequest, request: Request) -> ChatCompletion | StreamingResponse:
        if body.stream:
            stream = served.stream(body)
            first = await anext(stream)  # validation errors surface here, as a 4xx, before any byte is sent
            return StreamingResponse(prepend(first, stream), media_type="text/event-stream")
        return await served.complete(body, request)

    return app


async def prepend(first: str, rest: AsyncIterator[str]) -> AsyncIterator[str]:
    yield first
    async for item in rest:
        yield item

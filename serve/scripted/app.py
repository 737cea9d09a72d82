"""The scripted provider's HTTP app: stateless, so any process gives the same reply to the same request."""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections.abc import Iterator

from fastapi import FastAPI, Header
from fastapi.responses import StreamingResponse

from serve.errors import InvalidRequest, UnknownModel
from serve.http import install_error_handlers, sse_stream
from serve.scripted.scenarios import scenarios
from serve.scripted.script import Reply, Transcript
from wire.tokens import TokenCounter
from wire.types import (
    AssistantMessage,
    ChatCompletion,
    ChatCompletionChunk,
    ChatCompletionRequest,
    Choice,
    FinishReason,
    ModelCard,
    ModelList,
    ToolCall,
    Usage,
    tool_call_deltas,
    usage_of,
)

LATENCY_HEADER = "X-Scripted-Latency-Ms"


def to_message(reply: Reply, counter: TokenCounter, max_tokens: int | None) -> tuple[AssistantMessage, FinishReason]:
    """The wire message for a scenario's reply; text beyond `max_tokens` is cut as a model would be."""
    calls: list[ToolCall] = [
        {
            "id": c.id,
            "type": "function",
            "function": {"name": c.name, "arguments": json.dumps(dict(c.arguments), separators=(",", ":"))},
        }
        for c in reply.calls
    ]
    content = reply.content
    finish: FinishReason = "tool_calls" if calls else "stop"
    if content is not None and max_tokens is not None:
        tokens = counter.encoding.encode(content, disallowed_special=())
        if len(tokens) > max_tokens:
            content, finish = counter.encoding.decode(tokens[:max_tokens]), "length"
    message: AssistantMessage = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = calls
    return message, finish


def request_id(body: ChatCompletionRequest) -> str:
    """Same request, same id: the provider keeps no state, not even a counter."""
    return "chatcmpl-" + hashlib.sha256(body.model_dump_json().encode()).hexdigest()[:24]


def chunks(completion: ChatCompletion, include_usage: bool) -> Iterator[ChatCompletionChunk]:
    choice = completion.choices[0]
    message = choice.message

    def chunk(delta: dict[str, object], finish: FinishReason | None = None) -> ChatCompletionChunk:
        return ChatCompletionChunk.model_validate(
            {
                "id": completion.id,
                "created": completion.created,
                "model": completion.model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }
        )

    yield chunk({"role": "assistant", "content": ""})
    content = message.get("content") or ""
    for start in range(0, len(content), 16):
        yield chunk({"content": content[start : start + 16]})
    for delta in tool_call_deltas(message.get("tool_calls", [])):
        yield chunk(dict(delta))
    yield chunk({}, choice.finish_reason)
    if include_usage:
        yield ChatCompletionChunk(
            id=completion.id,
            created=completion.created,
            model=completion.model,
            choices=[],
            usage=completion.usage,
        )


def create_app(latency_ms: int = 0, counter: TokenCounter | None = None) -> FastAPI:
    tokens = counter or TokenCounter()
    table = scenarios()
    app = FastAPI(title="scripted provider", docs_url=None, redoc_url=None)
    install_error_handlers(app)

    @app.get("/healthz")
    async def healthz() -> dict[str, object]:
        return {"status": "ok", "scenarios": len(table), "latency_ms": latency_ms}

    @app.get("/v1/models")
    async def models() -> ModelList:
        return ModelList(
            data=[ModelCard(id=s.name, owned_by="scripted", description=s.description) for s in table.values()]
        )

    @app.post("/v1/chat/completions", response_model=None)
    async def chat(
        body: ChatCompletionRequest,
        latency: int | None = Header(default=None, alias=LATENCY_HEADER),
    ) -> ChatCompletion | StreamingResponse:
        scenario = table.get(body.model)
        if scenario is None:
            raise UnknownModel(body.model, sorted(table))
        delay = latency_ms if latency is None else latency
        if delay < 0:
            raise InvalidRequest(f"{LATENCY_HEADER} must be >= 0", param=LATENCY_HEADER)
        if delay:
            await asyncio.sleep(delay / 1000)
        reply = scenario.reply(Transcript(body.model, body.messages))
        message, finish = to_message(reply, tokens, body.completion_limit())
        usage: Usage = usage_of(tokens.prompt(body.messages, body.tools or []), tokens.completion(message))
        completion = ChatCompletion(
            id=request_id(body),
            created=int(time.time()),
            model=body.model,
            choices=[Choice(message=message, finish_reason=finish)],
            usage=usage,
        )
        if not body.stream:
            return completion
        include_usage = bool(body.stream_options and body.stream_options.include_usage)
        return StreamingResponse(sse_stream(chunks(completion, include_usage)), media_type="text/event-stream")

    return app

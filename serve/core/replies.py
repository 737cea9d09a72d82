"""From a backend's events to what the client reads: one ChatCompletion, or server-sent chunks."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from serve.core.backend import Event, Finished, TextOut
from serve.errors import APIError, InvalidRequest
from wire.types import (
    ChatCompletion,
    ChatCompletionChunk,
    Choice,
    ErrorBody,
    ErrorDetail,
    TokenLogprob,
    tool_call_deltas,
)

log = logging.getLogger(__name__)


def error_body(exc: APIError) -> dict[str, Any]:
    return ErrorBody(error=ErrorDetail(message=exc.message, type=exc.type, code=exc.code, param=exc.param)).model_dump()


def sse(payload: BaseModel | str) -> str:
    data = payload if isinstance(payload, str) else payload.model_dump_json(exclude_none=True)
    return f"data: {data}\n\n"


async def completion(
    completion_id: str, model: str, events: AsyncIterator[Event], logprobs: bool
) -> tuple[ChatCompletion, Finished]:
    """Collect a reply's events into one ChatCompletion."""
    async for event in events:
        if isinstance(event, Finished):
            content = {"content": event.logprobs or []} if logprobs else None
            choice = Choice(message=event.message, finish_reason=event.finish_reason, logprobs=content)  # type: ignore[arg-type]
            reply = ChatCompletion(
                id=completion_id, model=model, choices=[choice], usage=event.usage, timings=event.timings
            )
            return reply, event
    raise InvalidRequest("the reply ended without finishing")


@dataclass(frozen=True)
class Chunks:
    """Server-sent events of one streamed completion."""

    id: str
    created: int
    model: str

    def delta(
        self, delta: dict[str, Any], finish: str | None = None, logprobs: list[TokenLogprob] | None = None
    ) -> str:
        choice: dict[str, Any] = {"index": 0, "delta": delta, "finish_reason": finish}
        if logprobs is not None:
            choice["logprobs"] = {"content": logprobs}
        return self.event([choice])

    def event(self, choices: list[dict[str, Any]], **extra: object) -> str:
        raw = {"id": self.id, "created": self.created, "model": self.model, "choices": choices, **extra}
        return sse(ChatCompletionChunk.model_validate(raw))


HEARTBEAT_S = 5.0  # while nothing else is sent (a request waiting, a long prompt read), a comment this often


async def with_heartbeats(
    events: AsyncGenerator[Event, None], every: float, working: Callable[[], bool]
) -> AsyncIterator[Event | None]:
    """The events, and None whenever `every` seconds pass without one while the backend says it is `working`
    (making progress): a wedged backend goes silent, as it should. The generation is never interrupted."""
    while True:
        following = asyncio.ensure_future(anext(events))
        try:
            while not (await asyncio.wait({following}, timeout=every))[0]:
                if working():
                    yield None
        finally:  # the reader left while waiting: the pending step is called off before the events are closed
            if not following.done():
                following.cancel()
                with contextlib.suppress(asyncio.CancelledError, StopAsyncIteration):
                    await following
        try:
            event = following.result()
        except StopAsyncIteration:
            return
        yield event


async def stream(
    completion_id: str,
    model: str,
    events: AsyncGenerator[Event, None],
    include_usage: bool,
    on_finish: Callable[[Finished], None],
    working: Callable[[], bool] = lambda: True,
    heartbeat_s: float = HEARTBEAT_S,
) -> AsyncIterator[str]:
    """The reply as OpenAI chunks: role, text deltas, tool-call deltas, finish, usage, [DONE]; and an SSE comment
    (`: working`, which clients skip) whenever nothing else was sent for `heartbeat_s` and the backend is
    `working`, so a client can tell a server that is reading a long prompt from one that stopped.

    An error after the first byte cannot change the status any more: it is sent as an `error` event and the
    stream is closed properly, which the official clients raise as an APIError."""
    chunks = Chunks(completion_id, int(time.time()), model)
    try:
        yield chunks.delta({"role": "assistant", "content": ""})
        async for event in with_heartbeats(events, heartbeat_s, working):
            if event is None:
                yield ": working\n\n"
                continue
            if isinstance(event, TextOut):
                yield chunks.delta({"content": event.text}, logprobs=event.logprobs)
                continue
            for delta in tool_call_deltas(event.message.get("tool_calls", [])):
                yield chunks.delta(dict(delta))
            yield chunks.delta({}, event.finish_reason)
            if include_usage:
                yield chunks.event([], usage=event.usage, timings=event.timings)
            on_finish(event)
    except APIError as exc:
        yield sse(json.dumps(error_body(exc)))
    except Exception as exc:  # a bug: the client still gets a well-formed end of stream
        log.exception("a streamed reply failed")
        yield sse(json.dumps(error_body(APIError(f"internal error: {type(exc).__name__}"))))
    finally:
        await events.aclose()  # the client may have left: stop the generation behind the stream now
    yield sse("[DONE]")

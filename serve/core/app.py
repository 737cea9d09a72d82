"""The one FastAPI app both servers are: endpoints, body limits, validation, errors, metrics, the access log.

Nothing a client sends can end the process or produce a 5xx: bodies over the limit are refused before
they are read whole, large bodies are parsed off the event loop, every failure leaves as an OpenAI error
body on a connection that stays usable, and an error after streaming has begun is sent as an SSE event.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import anyio
from fastapi import FastAPI, Request, Response
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import BaseModel, Field, StrictInt, ValidationError
from starlette.requests import ClientDisconnect
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from serve.core.backend import Backend, Finished, JobT
from serve.core.metrics import Metrics, printable
from serve.core.replies import completion, error_body, stream
from serve.core.validation import MAX_BODY_DEPTH, SchemaChecks, check_request, depth, has_schemas
from serve.errors import APIError, InvalidRequest, PayloadTooLarge, RouteNotFound, Unavailable, UnknownModel
from wire.types import ChatCompletionRequest, ModelList, completion_id, first_error

log = logging.getLogger("serve.access")
PARSE_INLINE_BYTES = 64_000
DISCONNECT_POLL_S = 0.05


@dataclass(frozen=True)
class BodyLimits:
    max_body_bytes: int = 4_000_000


class TokenizeBody(BaseModel):
    content: str
    add_special: bool = False
    with_pieces: bool = False


class DetokenizeBody(BaseModel):
    tokens: list[StrictInt] = Field(max_length=1_000_000)  # true and "5" are not token ids


def error_response(exc: APIError) -> JSONResponse:
    return JSONResponse(error_body(exc), status_code=exc.status)


async def read_body(request: Request, limit: int) -> bytes:
    """The body, refused with 413 as soon as it is known to be over the limit (by header or while reading)."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise PayloadTooLarge(f"the request body is {int(declared):,} bytes; this server accepts at most {limit:,}")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise PayloadTooLarge(f"the request body is over {limit:,} bytes, this server's limit")
        chunks.append(chunk)
    return b"".join(chunks)


def decode_json(raw: bytes) -> object:
    """JSON that is valid UTF-8 all the way down: a lone surrogate escape is refused here, not deep in a tokenizer."""
    try:
        value = json.loads(raw)
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidRequest("the body contains a lone surrogate escape (such as \\ud800), which is not text") from exc
    except (ValueError, RecursionError) as exc:
        raise InvalidRequest(f"the body is not valid JSON: {exc}") from exc
    if depth(value, MAX_BODY_DEPTH) > MAX_BODY_DEPTH:
        raise InvalidRequest(f"the body is nested deeper than {MAX_BODY_DEPTH} levels")
    return value


ModelT = TypeVar("ModelT", bound=BaseModel)


def parse_model(raw: bytes, shape: type[ModelT]) -> ModelT:
    value = decode_json(raw)
    if not isinstance(value, dict):
        raise InvalidRequest("the body must be a JSON object")
    try:
        return shape.model_validate(value)
    except ValidationError as exc:
        location = exc.errors()[0].get("loc", ())
        raise InvalidRequest(
            f"invalid request: {first_error(exc)}", param=".".join(map(str, location)) or None
        ) from exc
    except RecursionError as exc:
        raise InvalidRequest("the body is nested too deeply to read") from exc


async def parse_body(request: Request, shape: type[ModelT], limit: int) -> ModelT:
    raw = await read_body(request, limit)
    if len(raw) <= PARSE_INLINE_BYTES:
        return parse_model(raw, shape)
    return await anyio.to_thread.run_sync(parse_model, raw, shape)  # a big body must not stall the event loop


async def watch_disconnect(request: Request, task: asyncio.Task[Any]) -> None:
    """Cancel `task` (the request's own) when the client goes away, so nothing is generated for nobody."""
    while not task.done():
        if await request.is_disconnected():
            request.state.client_gone = True
            task.cancel()
            return
        await asyncio.sleep(DISCONNECT_POLL_S)


class Server(Generic[JobT]):
    """The endpoints over one backend."""

    def __init__(self, backend: Backend[JobT], limits: BodyLimits, metrics: Metrics) -> None:
        self.backend, self.limits, self.metrics = backend, limits, metrics
        self.check_schema = SchemaChecks()

    def model_ids(self) -> list[str]:
        return [card.id for card in self.backend.model_cards()]

    async def chat(self, request: Request) -> Response:
        body: ChatCompletionRequest = await parse_body(request, ChatCompletionRequest, self.limits.max_body_bytes)
        if body.model not in self.model_ids():
            raise UnknownModel(body.model, self.model_ids())
        if has_schemas(body):  # checking schemas is CPU work: other requests go on meanwhile
            await anyio.to_thread.run_sync(check_request, body, self.check_schema)
        else:
            check_request(body, self.check_schema)
        job = await self.backend.prepare(body, request.headers)
        request.state.prompt_tokens = job.prompt_tokens
        if body.stream:
            include_usage = bool(body.stream_options and body.stream_options.include_usage)
            chunks = stream(
                job.id or completion_id(),
                body.model,
                self.backend.run(job),
                include_usage,
                self.finished_for(request),
                working=lambda: self.backend.fault() is None,
            )
            return StreamingResponse(chunks, media_type="text/event-stream")
        return await self.complete(request, body, job)

    async def complete(self, request: Request, body: ChatCompletionRequest, job: JobT) -> Response:
        events = self.backend.run(job)
        me = asyncio.current_task()
        assert me is not None
        watcher = asyncio.ensure_future(watch_disconnect(request, me))
        try:
            reply, finished = await completion(job.id or completion_id(), body.model, events, bool(body.logprobs))
        finally:
            watcher.cancel()
            await events.aclose()
        self.finished_for(request)(finished)
        data = reply.model_dump(exclude_none=True)
        for choice in data["choices"]:  # OpenAI's shape: these two are null rather than absent
            choice["message"].setdefault("content", None)
            choice.setdefault("logprobs", None)
        return JSONResponse(data)

    @staticmethod
    def finished_for(request: Request) -> Callable[[Finished], None]:
        def record(finished: Finished) -> None:
            request.state.finished = finished

        return record


def install_routes(app: FastAPI, server: Server[JobT]) -> None:
    backend = server.backend

    @app.post("/v1/chat/completions", response_model=None)
    async def chat(request: Request) -> Response:
        return await server.chat(request)

    @app.get("/v1/models")
    async def models() -> ModelList:
        return ModelList(data=backend.model_cards())

    @app.get("/v1/models/{model_id:path}")
    async def model(model_id: str) -> Response:
        for card in backend.model_cards():
            if card.id == model_id:
                return JSONResponse(card.model_dump(exclude_none=True))
        raise UnknownModel(model_id, server.model_ids())

    @app.get("/health")
    async def health() -> dict[str, str]:
        fault = backend.fault()
        if fault is not None:
            raise Unavailable(fault)
        return {"status": "ok"}

    @app.get("/healthz")
    async def healthz() -> dict[str, Any]:
        return backend.health()


def install_tool_routes(app: FastAPI, server: Server[JobT]) -> None:
    """llama-server's /tokenize and /detokenize, and Prometheus' /metrics."""
    backend = server.backend

    @app.post("/tokenize")
    async def tokenize(request: Request) -> dict[str, Any]:
        body: TokenizeBody = await parse_body(request, TokenizeBody, server.limits.max_body_bytes)
        tokens = await anyio.to_thread.run_sync(backend.tokenize, body.content, body.add_special)
        if body.with_pieces:
            return {"tokens": [{"id": t.id, "piece": t.piece} for t in tokens]}
        return {"tokens": [t.id for t in tokens]}

    @app.post("/detokenize")
    async def detokenize(request: Request) -> dict[str, Any]:
        body: DetokenizeBody = await parse_body(request, DetokenizeBody, server.limits.max_body_bytes)
        return {"content": await anyio.to_thread.run_sync(backend.detokenize, body.tokens)}

    @app.get("/metrics")
    async def metrics() -> Response:
        return Response(server.metrics.render(backend.queue_depth()), media_type=server.metrics.content_type)


CLIENT_CLOSED = 499  # nginx's status for a request its client gave up on before the last byte


class Guard:
    """Pure ASGI, around everything the app does: an unexpected error becomes a 500 in the OpenAI shape sent
    from here (so the keep-alive connection survives); a request the server cuts at shutdown gets a 503 in
    that shape; a client that leaves before the last byte is counted as 499, with no traceback; and every
    request is counted and logged once, when its last byte has gone (streams included)."""

    def __init__(self, app: ASGIApp, metrics: Metrics) -> None:
        self.app, self.metrics = app, metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        began, status, started, ended = time.perf_counter(), [500], [False], [False]

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                status[0], started[0] = message["status"], True
            elif message["type"] == "http.response.body" and not message.get("more_body", False):
                ended[0] = True
            await send(message)

        request = Request(scope)
        try:
            await self.app(scope, receive, sending)
        except ClientDisconnect:  # the client left in the middle of its body: nobody to answer, nothing to log
            request.state.client_gone = True
        except asyncio.CancelledError:  # the client left (answered by no one), or the server is stopping
            if not getattr(request.state, "client_gone", False) and not started[0]:
                await error_response(Unavailable("the server is stopping; this request was cut"))(
                    scope, receive, sending
                )
        except Exception as exc:  # a bug, never the client's fault: answered, logged, and the server goes on
            log.exception("unexpected error on %s %s", printable(scope["method"]), printable(scope["path"]))
            if not started[0]:
                await error_response(APIError(f"internal error: {type(exc).__name__}"))(scope, receive, sending)
        finally:
            gone = getattr(request.state, "client_gone", False) or (started[0] and not ended[0])
            self.metrics.observe(request, CLIENT_CLOSED if gone else status[0], time.perf_counter() - began)


def install_error_handling(app: FastAPI) -> None:
    async def api_error(_: Request, exc: Exception) -> Response:
        assert isinstance(exc, APIError)
        return error_response(exc)

    async def not_found(request: Request, _: Exception) -> Response:
        return error_response(RouteNotFound(f"no route {request.method} {request.url.path}"))

    app.add_exception_handler(APIError, api_error)
    app.add_exception_handler(404, not_found)
    app.add_exception_handler(405, not_found)


def create_app(backend: Backend[JobT], limits: BodyLimits | None = None, title: str = "model server") -> FastAPI:
    app = FastAPI(title=title, docs_url=None, redoc_url=None, openapi_url=None)
    server = Server(backend, limits or BodyLimits(), Metrics())
    install_routes(app, server)
    install_tool_routes(app, server)
    install_error_handling(app)
    app.add_middleware(Guard, metrics=server.metrics)
    app.state.server = server
    return app

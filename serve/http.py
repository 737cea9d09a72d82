"""What both servers share: OpenAI-shaped error responses, server-sent events, and the uvicorn runner."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable

import uvicorn
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from starlette.exceptions import HTTPException as StarletteHTTPException

from serve.errors import APIError
from wire.types import ErrorBody, ErrorDetail


def error_response(
    status: int, message: str, type_: str, code: str | None = None, param: str | None = None
) -> JSONResponse:
    body = ErrorBody(error=ErrorDetail(message=message, type=type_, code=code, param=param))
    return JSONResponse(body.model_dump(), status_code=status)


def describe_validation_errors(exc: RequestValidationError) -> tuple[str, str | None]:
    problems = []
    for error in exc.errors()[:5]:
        where = ".".join(str(part) for part in error.get("loc", ()) if part != "body")
        problems.append(f"{where or 'body'}: {error.get('msg', 'invalid')}")
    first = exc.errors()[0].get("loc", ()) if exc.errors() else ()
    param = ".".join(str(part) for part in first if part != "body") or None
    return "invalid request: " + "; ".join(problems), param


def install_error_handlers(app: FastAPI) -> None:
    """Every failure leaves as an OpenAI error body; nothing the client sends can produce a bare 500."""

    @app.exception_handler(APIError)
    async def api_error(_: Request, exc: APIError) -> JSONResponse:
        return error_response(exc.status, exc.message, exc.type, exc.code, exc.param)

    @app.exception_handler(RequestValidationError)
    async def invalid_body(_: Request, exc: RequestValidationError) -> JSONResponse:
        message, param = describe_validation_errors(exc)
        return error_response(400, message, "invalid_request_error", "invalid_request", param)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        return error_response(exc.status_code, str(exc.detail), "invalid_request_error")

    @app.exception_handler(Exception)
    async def unexpected(_: Request, exc: Exception) -> JSONResponse:
        return error_response(500, f"internal error: {type(exc).__name__}: {exc}", "server_error")


def sse_event(payload: BaseModel | str) -> str:
    data = payload if isinstance(payload, str) else payload.model_dump_json(exclude_none=True)
    return f"data: {data}\n\n"


async def sse_stream(chunks: Iterable[BaseModel]) -> AsyncIterator[str]:
    for chunk in chunks:
        yield sse_event(chunk)
    yield sse_event("[DONE]")


def run_server(app: FastAPI, host: str, port: int) -> None:
    """Serve until interrupted; loopback unless the operator asks otherwise."""
    uvicorn.run(app, host=host, port=port, log_level="warning", access_log=False)

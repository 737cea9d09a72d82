"""Models: the OpenAI-compatible HTTP client, and FunctionModel, which lets a plain function be a model.

httpx errors are translated here, once, into ProviderError subclasses; every reply is validated before
the loop sees it.
"""

from __future__ import annotations

import asyncio
import email.utils
import inspect
import json
import os
import random
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any
from urllib.parse import urlsplit

import httpx
from pydantic import ValidationError

from harness.errors import MalformedReply, ProviderRejected, ProviderUnavailable
from harness.protocols import ModelReply, ModelRequest
from wire.types import AssistantMessage, ChatCompletion, Message, ToolDefinition, first_error

DEFAULT_BASE_URL = "http://127.0.0.1:8000/v1"
RETRYABLE = {408, 409, 429, 500, 502, 503, 504}
MAX_RETRY_WAIT_S = 30.0


def base_url_from_env(flag: str | None = None) -> str:
    """The flag, else LLM_BASE_URL, else the local model server; a bare host gets OpenAI's /v1 path."""
    url = (flag or os.environ.get("LLM_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
    return url + "/v1" if urlsplit(url).path in ("", "/") else url


def validate_reply(payload: Any) -> ModelReply:
    """Check a chat-completions body before anything acts on it."""
    if isinstance(payload, dict):
        for choice in payload.get("choices") or []:
            if isinstance(choice, dict) and isinstance(choice.get("message"), dict):
                # providers write absent fields as null; the wire types leave them out
                choice["message"] = {k: v for k, v in choice["message"].items() if v is not None}
    try:
        completion = ChatCompletion.model_validate(payload)
    except ValidationError as exc:
        raise MalformedReply(f"malformed reply from the provider: {first_error(exc)}") from exc
    choice = completion.choices[0]
    message: AssistantMessage = dict(choice.message)  # type: ignore[assignment]
    ids = [call["id"] for call in message.get("tool_calls", [])]
    if len(ids) != len(set(ids)):
        raise MalformedReply(f"malformed reply from the provider: duplicate tool call ids {ids}")
    if not message.get("tool_calls"):
        message.pop("tool_calls", None)
    message.setdefault("content", None)
    return ModelReply(message, completion.usage, choice.finish_reason, completion.timings)


def retry_after(response: httpx.Response, attempt: int, backoff: float) -> float:
    header = response.headers.get("retry-after")
    if header:
        try:
            return min(MAX_RETRY_WAIT_S, max(0.0, float(header)))
        except ValueError:
            when = email.utils.parsedate_to_datetime(header)
            if when is not None:
                return min(MAX_RETRY_WAIT_S, max(0.0, when.timestamp() - time.time()))
    return exponential(attempt, backoff)


def exponential(attempt: int, backoff: float) -> float:
    return float(min(MAX_RETRY_WAIT_S, backoff * 2**attempt * (1 + random.random() / 2)))


def provider_message(response: httpx.Response) -> str:
    try:
        body = response.json()
        message = body["error"]["message"] if isinstance(body.get("error"), dict) else body.get("error") or body
    except (ValueError, KeyError, TypeError, AttributeError):
        message = response.text[:500]
    return f"provider answered {response.status_code}: {message}"


class OpenAIClient:
    """Chat completions over httpx: retries with backoff on 429, 5xx and connection errors."""

    def __init__(
        self,
        base_url: str | None = None,
        model: str = "",
        *,
        api_key: str | None = None,
        timeout_s: float = 120.0,
        max_retries: int = 3,
        backoff_s: float = 0.5,
        headers: Mapping[str, str] | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.base_url = base_url_from_env(base_url)
        self.model = model
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        auth = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._http = httpx.AsyncClient(
            base_url=self.base_url,
            headers={**auth, **(headers or {})},
            timeout=httpx.Timeout(timeout_s, connect=10.0),
            transport=transport,
        )

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> OpenAIClient:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()

    def body(self, request: ModelRequest) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.model, "messages": list(request.messages)}
        if request.tools:
            body["tools"] = list(request.tools)
        if request.max_tokens is not None:
            body["max_tokens"] = request.max_tokens
        return body

    async def complete(self, request: ModelRequest) -> ModelReply:
        body = self.body(request)
        for attempt in range(self.max_retries + 1):
            last = attempt == self.max_retries
            try:
                response = await self._http.post("/chat/completions", json=body)
            except httpx.TransportError as exc:
                if last:
                    raise ProviderUnavailable(f"cannot reach {self.base_url}: {exc!r}") from exc
                await asyncio.sleep(exponential(attempt, self.backoff_s))
                continue
            if response.status_code < 400:
                try:
                    return validate_reply(response.json())
                except ValueError as exc:
                    raise MalformedReply(f"malformed reply from the provider: not JSON ({exc})") from exc
            if response.status_code not in RETRYABLE:
                raise ProviderRejected(provider_message(response), response.status_code)
            if last:
                raise ProviderUnavailable(
                    f"{provider_message(response)} (after {attempt + 1} attempts)", response.status_code
                )
            await asyncio.sleep(retry_after(response, attempt, self.backoff_s))
        raise AssertionError("unreachable")


ModelFunction = Callable[
    [list[Message], list[ToolDefinition]],
    "AssistantMessage | ModelReply | str | Awaitable[AssistantMessage | ModelReply | str]",
]


class FunctionModel:
    """A plain function (sync or async) of (messages, tools) as a model; it may return text, a message or a reply."""

    def __init__(self, function: ModelFunction) -> None:
        self.function = function

    async def complete(self, request: ModelRequest) -> ModelReply:
        result = self.function(list(request.messages), list(request.tools))
        if inspect.isawaitable(result):
            result = await result
        if isinstance(result, ModelReply):
            return result
        if isinstance(result, str):
            return ModelReply({"role": "assistant", "content": result}, None, "stop")
        return validate_reply({"model": "function", "choices": [{"message": json.loads(json.dumps(result))}]})

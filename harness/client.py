"""Models: the OpenAI-compatible HTTP client, and FunctionModel, which lets a plain function be a model.

httpx errors are translated here, once, into ProviderError subclasses; every reply is validated before
the loop sees it.
"""

from __future__ import annotations

import asyncio
import email.utils
import inspect
import json
import math
import os
import random
import ssl
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any
from urllib.parse import urlsplit

import httpx
from pydantic import ValidationError

from harness.errors import ConfigError, MalformedReply, ProviderRejected, ProviderUnavailable
from harness.protocols import ModelReply, ModelRequest
from wire.text import scrubbed
from wire.types import AssistantMessage, ChatCompletion, Message, ToolDefinition, first_error

DEFAULT_BASE_URL = "http://127.0.0.1:8000/v1"
RETRYABLE = {408, 409, 429, 500, 502, 503, 504}
MAX_RETRY_WAIT_S = 30.0


def base_url_from_env(flag: str | None = None) -> str:
    """The flag, else LLM_BASE_URL, else the local model server; a bare host gets OpenAI's /v1 path."""
    url = (flag or os.environ.get("LLM_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
    try:
        parts = urlsplit(url)
        httpx.URL(url)
    except (ValueError, httpx.InvalidURL) as exc:
        raise ConfigError(f"invalid base URL {url!r}: {exc}") from exc
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"invalid base URL {url!r}: use http(s)://host[:port][/path]")
    return url + "/v1" if parts.path in ("", "/") else url


PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")


def tls(url: str) -> ssl.SSLContext | bool:
    """An https URL, or any URL when a proxy is configured (the proxy may be https), gets the system's CA store.
    A plain-HTTP URL gets a context that trusts no CA: loading the store takes a tenth of a second per client
    (one client per run), such a client never opens TLS, and any TLS connection it did open would fail."""
    if urlsplit(url).scheme == "https" or any(os.environ.get(name) for name in PROXY_VARIABLES):
        return True
    return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)


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
    """The wait a 429/503 asks for (seconds or an HTTP date), capped; anything unreadable means our own backoff."""
    header = response.headers.get("retry-after", "").strip()
    try:
        seconds = float(header)
    except ValueError:
        try:
            seconds = email.utils.parsedate_to_datetime(header).timestamp() - time.time()
        except (TypeError, ValueError, IndexError, OverflowError):
            return exponential(attempt, backoff)
    if not math.isfinite(seconds):
        return exponential(attempt, backoff)
    return min(MAX_RETRY_WAIT_S, max(0.0, seconds))


def exponential(attempt: int, backoff: float) -> float:
    return float(min(MAX_RETRY_WAIT_S, backoff * 2**attempt * (1 + random.random() / 2)))


def provider_message(response: httpx.Response) -> str:
    try:
        body = response.json()
        message = body["error"]["message"] if isinstance(body.get("error"), dict) else body.get("error") or body
    except (ValueError, KeyError, TypeError, AttributeError):
        message = response.text[:500]
    return f"provider answered {response.status_code}: {message}"


def refused_field(response: httpx.Response, fields: Mapping[str, Any]) -> str | None:
    """The field of `fields` a 400 names as its `param`, if it names one of them."""
    try:
        param = response.json()["error"]["param"]
    except (ValueError, KeyError, TypeError):
        return None
    return param if isinstance(param, str) and param in fields else None


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
        self.model, self.timeout_s = model, timeout_s
        self.refused: set[str] = set()  # optional fields (ModelRequest.extra) this server said it does not take
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        auth = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._http = httpx.AsyncClient(
            base_url=self.base_url,
            headers={**auth, **(headers or {})},
            timeout=httpx.Timeout(timeout_s, connect=10.0),
            transport=transport,
            verify=tls(self.base_url),
        )

    def timed_out(self, exc: httpx.TimeoutException) -> str:
        if isinstance(exc, httpx.ConnectTimeout):
            return f"cannot reach {self.base_url}: no connection within {self.timeout_s:g} s"
        waited = f"{self.timeout_s:g} s"
        return f"{self.base_url} accepted the request but sent no reply within {waited} ({type(exc).__name__})"

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> OpenAIClient:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()

    def body(self, request: ModelRequest) -> dict[str, Any]:
        extra = {k: v for k, v in request.extra.items() if k not in self.refused}
        body: dict[str, Any] = {**extra, "model": self.model, "messages": list(request.messages)}
        if request.tools:
            body["tools"] = list(request.tools)
            if request.tool_choice is not None:
                body["tool_choice"] = request.tool_choice
            if request.parallel_tool_calls is not None:
                body["parallel_tool_calls"] = request.parallel_tool_calls
        if request.max_tokens is not None:
            body["max_tokens"] = request.max_tokens
        return body

    async def models(self) -> list[dict[str, Any]] | None:
        """The server's model cards (`GET /models`), or None when they cannot be read: only what the server says
        about its models (their size, for `auto` controls), never needed for a run to go on. Asked again, as a
        completion is, while the server cannot be reached or answers busy: a server still loading its model
        must not make a run go on as if it had said nothing. A server that takes the request and then says
        nothing is not asked again."""
        response: httpx.Response | None = None
        for attempt in range(self.max_retries + 1):
            try:
                response = await self._http.get("/models", timeout=10.0)
            except httpx.TimeoutException:
                return None
            except httpx.TransportError:
                response = None
            if response is not None and response.status_code not in RETRYABLE:
                break
            if attempt < self.max_retries:
                await asyncio.sleep(
                    exponential(attempt, self.backoff_s)
                    if response is None
                    else retry_after(response, attempt, self.backoff_s)
                )
        try:
            data = response.json().get("data") if response is not None and response.status_code == 200 else None
        except (ValueError, AttributeError):
            return None
        return [card for card in data if isinstance(card, dict)] if isinstance(data, list) else None

    async def complete(self, request: ModelRequest) -> ModelReply:
        body, attempt = self.body(request), 0
        while True:
            last = attempt >= self.max_retries
            response = await self.send(body, attempt, last)
            attempt += 1
            if response is None:
                continue
            if response.status_code < 400:
                return self.reply_of(response)
            field = refused_field(response, request.extra) if response.status_code == 400 else None
            if field is not None and field not in self.refused:
                self.refused.add(field)  # an optional field this server does not take: asked again without it
                body, attempt = self.body(request), attempt - 1
                continue
            if response.status_code not in RETRYABLE:
                raise ProviderRejected(provider_message(response), response.status_code)
            if last:
                raise ProviderUnavailable(
                    f"{provider_message(response)} (after {attempt} attempts)", response.status_code
                )
            await asyncio.sleep(retry_after(response, attempt - 1, self.backoff_s))

    async def send(self, body: dict[str, Any], attempt: int, last: bool) -> httpx.Response | None:
        """One POST; None when it failed in a way worth trying again (after a backoff)."""
        try:
            return await self._http.post("/chat/completions", json=body)
        except httpx.TimeoutException as exc:
            if last or (isinstance(exc, httpx.ReadTimeout) and attempt >= 1):  # a peer that hangs: try once more
                raise ProviderUnavailable(self.timed_out(exc)) from exc
        except httpx.TransportError as exc:
            if last:
                raise ProviderUnavailable(f"cannot reach {self.base_url}: {exc!r}") from exc
        await asyncio.sleep(exponential(attempt, self.backoff_s))
        return None

    def reply_of(self, response: httpx.Response) -> ModelReply:
        try:
            payload = scrubbed(response.json())
        except (ValueError, RecursionError) as exc:
            raise MalformedReply(f"malformed reply from the provider: not usable JSON ({exc})") from exc
        return validate_reply(payload)


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

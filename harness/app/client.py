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
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import httpx
from pydantic import ValidationError

from harness.core.protocols import ModelReply, ModelRequest
from harness.errors import ConfigError, MalformedReply, ProviderRejected, ProviderUnavailable
from wire.text import scrubbed
from wire.types import AssistantMessage, ChatCompletion, ModelCard, first_error

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


@dataclass(frozen=True)
class Received:
    """A response read whole, and the completion its stream's events make (None for a body that is not a stream)."""

    response: httpx.Response
    payload: dict[str, Any] | None


@dataclass
class Gathered:
    """A streamed completion's chunks as one chat.completion body: the content joined, each tool call's pieces
    joined by index, the finish reason, and the usage and timings of the last chunk that has them."""

    text: list[str] = field(default_factory=list)
    calls: dict[int, dict[str, Any]] = field(default_factory=dict)
    top: dict[str, Any] = field(default_factory=lambda: {"model": ""})
    finish: str | None = None

    def add(self, chunk: dict[str, Any]) -> None:
        for key in ("id", "created", "model", "usage", "timings"):
            if chunk.get(key) is not None:
                self.top[key] = chunk[key]
        for choice in chunk.get("choices") or []:
            delta = choice.get("delta") or {}
            if isinstance(delta.get("content"), str):
                self.text.append(delta["content"])
            for piece in delta.get("tool_calls") or []:
                self.add_call(piece)
            self.finish = choice.get("finish_reason") or self.finish

    def add_call(self, piece: dict[str, Any]) -> None:
        call = self.calls.setdefault(int(piece.get("index", 0)), {"type": "function", "function": {"arguments": ""}})
        call["id"] = piece.get("id") or call.get("id")
        function = piece.get("function") or {}
        if function.get("name"):
            call["function"]["name"] = function["name"]
        call["function"]["arguments"] += function.get("arguments") or ""

    def body(self) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": "".join(self.text) or None}
        if self.calls:
            message["tool_calls"] = [self.calls[index] for index in sorted(self.calls)]
        return {**self.top, "choices": [{"index": 0, "message": message, "finish_reason": self.finish}]}


async def gathered(response: httpx.Response) -> dict[str, Any]:
    """The completion a stream's events make; an `error` event (an error after the stream began) is a
    ProviderUnavailable."""
    whole = Gathered()
    async for line in response.aiter_lines():
        if not line.startswith("data:"):
            continue  # a comment (the server is working), an event name, a blank line between events
        data = line[5:].strip()
        if data == "[DONE]":
            break
        try:
            chunk = json.loads(data)
        except ValueError as exc:
            raise MalformedReply(f"malformed reply from the provider: a stream event is not JSON ({exc})") from exc
        if not isinstance(chunk, dict):
            raise MalformedReply("malformed reply from the provider: a stream event is not a JSON object")
        if "error" in chunk:
            raise ProviderUnavailable(f"the provider failed while streaming: {describe_error(chunk['error'])}")
        whole.add(chunk)
    return whole.body()


def describe_error(error: object) -> str:
    return str(error.get("message", error)) if isinstance(error, dict) else str(error)


class OpenAIClient:
    """Chat completions over httpx: streamed (so the timeout is for silence, not for the whole reply), retries
    with backoff on 429, 5xx and connection errors."""

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
        streaming: bool = True,
    ) -> None:
        self.base_url = base_url_from_env(base_url)
        self.streaming = streaming
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
        if self.streaming:
            body |= {"stream": True, "stream_options": {"include_usage": True}}
        if request.tools:
            body["tools"] = list(request.tools)
            if request.tool_choice is not None:
                body["tool_choice"] = request.tool_choice
            if request.parallel_tool_calls is not None:
                body["parallel_tool_calls"] = request.parallel_tool_calls
        if request.max_tokens is not None:
            body["max_tokens"] = request.max_tokens
        return body

    async def models(self) -> list[ModelCard] | None:
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
        return [card for raw in data if (card := ModelCard.read(raw)) is not None] if isinstance(data, list) else None

    async def complete(self, request: ModelRequest) -> ModelReply:
        body, attempt = self.body(request), 0
        while True:
            last = attempt >= self.max_retries
            received = await self.send(body, attempt, last)
            attempt += 1
            if received is None:
                continue
            response = received.response
            if response.status_code < 400:
                return validate_reply(received.payload) if received.payload is not None else self.reply_of(response)
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

    async def send(self, body: dict[str, Any], attempt: int, last: bool) -> Received | None:
        """One POST, read whole (a stream's events gathered into one reply); None when it failed in a way worth
        trying again (after a backoff). The timeout is for silence: a server that streams, or sends its
        comments while it reads a long prompt, may take as long as it keeps saying something."""
        try:
            async with self._http.stream("POST", "/chat/completions", json=body) as response:
                if response.status_code >= 400 or not response.headers.get("content-type", "").startswith(
                    "text/event-stream"
                ):
                    await response.aread()
                    return Received(response, None)
                return Received(response, await gathered(response))
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
    [ModelRequest],
    "AssistantMessage | ModelReply | str | Awaitable[AssistantMessage | ModelReply | str]",
]


class FunctionModel:
    """A plain function (sync or async) of the whole request (messages, tools, max_tokens, tool_choice, extra
    body fields) as a model; it may return text, a message or a reply."""

    def __init__(self, function: ModelFunction) -> None:
        self.function = function

    async def complete(self, request: ModelRequest) -> ModelReply:
        result = self.function(request)
        if inspect.isawaitable(result):
            result = await result
        if isinstance(result, ModelReply):
            return result
        if isinstance(result, str):
            return ModelReply({"role": "assistant", "content": result}, None, "stop")
        return validate_reply({"model": "function", "choices": [{"message": json.loads(json.dumps(result))}]})

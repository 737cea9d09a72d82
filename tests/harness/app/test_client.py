"""The model client: retries, error translation and reply validation, against httpx.MockTransport."""

from __future__ import annotations

import asyncio
import json
import ssl
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from harness.app.client import PROXY_VARIABLES, OpenAIClient, base_url_from_env, tls, validate_reply
from harness.core.protocols import ModelRequest
from harness.errors import MalformedReply, ProviderRejected, ProviderUnavailable
from tests.conftest import AppServer

REQUEST = ModelRequest([{"role": "user", "content": "hi"}], [])


def completion(message: dict[str, object], usage: bool = True) -> dict[str, object]:
    body: dict[str, object] = {"model": "m", "choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}
    if usage:
        body["usage"] = {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}
    return body


def client(handler: Callable[[httpx.Request], httpx.Response]) -> OpenAIClient:
    return OpenAIClient("http://test/v1", "m", transport=httpx.MockTransport(handler), backoff_s=0.001, max_retries=3)


async def test_a_plain_reply_and_what_is_sent() -> None:
    seen: list[dict[str, object]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(json.loads(request.content))
        assert request.url.path == "/v1/chat/completions"
        assert request.headers["authorization"] == "Bearer k"
        return httpx.Response(200, json=completion({"role": "assistant", "content": "hello", "tool_calls": None}))

    model = OpenAIClient("http://test/v1", "m", api_key="k", transport=httpx.MockTransport(handler))
    reply = await model.complete(ModelRequest([{"role": "user", "content": "hi"}], [], max_tokens=9))
    assert reply.message == {"role": "assistant", "content": "hello"}
    assert reply.usage is not None and reply.usage.total_tokens == 7
    assert seen[0] == {
        "model": "m",
        "messages": [{"role": "user", "content": "hi"}],
        "max_tokens": 9,
        "stream": True,
        "stream_options": {"include_usage": True},
    }


async def test_retries_429_honouring_retry_after_then_succeeds() -> None:
    answers = [httpx.Response(429, headers={"Retry-After": "0.01"}, json={"error": {"message": "slow down"}})] * 2
    answers.append(httpx.Response(200, json=completion({"role": "assistant", "content": "ok"})))
    attempts = iter(answers)
    reply = await client(lambda request: next(attempts)).complete(REQUEST)
    assert reply.message["content"] == "ok"


async def test_5xx_and_connection_errors_are_retried_then_reported() -> None:
    count = 0

    def flaky(request: httpx.Request) -> httpx.Response:
        nonlocal count
        count += 1
        if count == 1:
            raise httpx.ConnectError("refused")
        return httpx.Response(503, json={"error": {"message": "overloaded"}})

    with pytest.raises(ProviderUnavailable, match=r"503: overloaded.*after 4 attempts"):
        await client(flaky).complete(REQUEST)
    assert count == 4


@pytest.mark.parametrize("status", [400, 401, 404])
async def test_non_retryable_errors_carry_the_providers_message(status: int) -> None:
    count = 0

    def handler(request: httpx.Request) -> httpx.Response:
        nonlocal count
        count += 1
        return httpx.Response(status, json={"error": {"message": f"nope {status}", "type": "invalid_request_error"}})

    with pytest.raises(ProviderRejected, match=f"provider answered {status}: nope {status}") as caught:
        await client(handler).complete(REQUEST)
    assert caught.value.status == status and count == 1


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        ({"model": "m", "choices": []}, "choices"),
        ({"model": "m"}, "choices"),
        ({"model": "m", "choices": [{"message": {"role": "user", "content": "x"}}]}, "role"),
        ({"model": "m", "choices": [{"message": {"role": "assistant", "tool_calls": [{"id": "a"}]}}]}, "tool_calls"),
        (
            {"model": "m", "choices": [{"message": {"role": "assistant", "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}},
                {"id": "a", "type": "function", "function": {"name": "g", "arguments": "{}"}}]}}]},
            "duplicate tool call ids",
        ),
        ({"model": "m", "choices": [{"message": {"role": "assistant", "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "f", "arguments": {"x": 1}}}]}}]}, "arguments"),
    ],
)  # fmt: skip
def test_malformed_replies_are_refused_before_anything_acts(body: dict[str, object], problem: str) -> None:
    with pytest.raises(MalformedReply, match=problem):
        validate_reply(body)


async def test_a_body_that_is_not_json_is_malformed() -> None:
    with pytest.raises(MalformedReply, match="not usable JSON"):
        await client(lambda request: httpx.Response(200, text="<html>")).complete(REQUEST)


def test_base_url_from_flag_env_or_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LLM_BASE_URL", raising=False)
    assert base_url_from_env() == "http://127.0.0.1:8000/v1"
    monkeypatch.setenv("LLM_BASE_URL", "http://h:9/")
    assert base_url_from_env() == "http://h:9/v1"
    assert base_url_from_env("http://x/openai/v1") == "http://x/openai/v1"


def test_https_is_verified_against_the_system_store_and_plain_http_trusts_no_certificate(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    assert tls("https://api.example.com/v1") is True  # httpx's default: the CA store, hostnames checked
    plain = tls("http://127.0.0.1:8000/v1")
    assert isinstance(plain, ssl.SSLContext) and plain.verify_mode == ssl.CERT_REQUIRED and plain.check_hostname
    assert plain.cert_store_stats()["x509_ca"] == 0
    monkeypatch.setenv("HTTP_PROXY", "https://proxy.example.com:443")  # the hop to an https proxy is verified
    assert tls("http://127.0.0.1:8000/v1") is True


async def test_an_optional_field_the_server_refuses_is_dropped_and_never_sent_again() -> None:
    seen: list[dict[str, object]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        seen.append(body)
        if "grammar" in body:
            error = {"message": "no grammars here", "type": "invalid_request_error", "param": "grammar"}
            return httpx.Response(400, json={"error": error})
        return httpx.Response(200, json=completion({"role": "assistant", "content": "words"}))

    model = OpenAIClient("http://test/v1", "m", transport=httpx.MockTransport(handler), max_retries=0)
    asked = ModelRequest([{"role": "user", "content": "hi"}], [], extra={"grammar": "root ::= [a-z]+"})
    assert (await model.complete(asked)).message["content"] == "words"
    assert (await model.complete(asked)).message["content"] == "words"
    assert ["grammar" in body for body in seen] == [True, False, False]


async def test_a_refused_field_that_is_not_optional_is_the_error() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        error = {"message": "bad messages", "type": "invalid_request_error", "param": "messages"}
        return httpx.Response(400, json={"error": error})

    with pytest.raises(ProviderRejected, match="bad messages"):
        await client(handler).complete(ModelRequest(REQUEST.messages, [], extra={"grammar": "g"}))


async def test_the_model_list_is_asked_again_while_the_server_is_loading_and_none_only_when_it_cannot_be_read() -> None:
    """`auto` controls read the model's size here: a server still starting must not make a run go on without them."""
    answers: list[Exception | httpx.Response] = [
        httpx.ConnectError("refused"), httpx.Response(503, json={"error": {"message": "Loading model"}})
    ]  # fmt: skip
    card = {"id": "m", "meta": {"n_params": 494_000_000}}

    def loading(request: httpx.Request) -> httpx.Response:
        assert request.url.path == "/v1/models"
        if answers:
            answer = answers.pop(0)
            if isinstance(answer, Exception):
                raise answer
            return answer
        return httpx.Response(200, json={"object": "list", "data": [card]})

    cards = await client(loading).models()
    assert cards is not None and [(c.id, c.meta and c.meta.n_params) for c in cards] == [("m", 494_000_000)]
    assert await client(lambda request: httpx.Response(503)).models() is None
    assert await client(lambda request: httpx.Response(404, text="not here")).models() is None
    asked: list[str] = []

    def hangs(request: httpx.Request) -> httpx.Response:
        asked.append(request.url.path)
        raise httpx.ReadTimeout("no reply", request=request)

    assert await client(hangs).models() is None and len(asked) == 1  # a peer that hangs is not waited on again


async def test_a_card_field_that_does_not_read_as_its_type_is_left_unsaid_and_the_card_kept() -> None:
    """Cards come from any server: what one says wrongly is not taken as said (a size of `true` is no size),
    and a card without an id is not a card."""
    data = [
        {"id": "a", "created": "yesterday", "meta": {"n_params": True, "context": "4096", "n_vocab": 151_936}},
        {"id": "b", "meta": {"n_params": -5, "extensions": ["tool_parameters", "teleport", 7]}},
        {"id": "c", "meta": "big"},
        {"meta": {"n_params": 1}},
        "d",
    ]

    def listing(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"object": "list", "data": data})

    cards = await client(listing).models()
    assert cards is not None and [c.id for c in cards] == ["a", "b", "c"]
    a, b, c = (card.meta for card in cards)
    assert a is not None and a.n_params is None and a.context is None and a.model_extra == {"n_vocab": 151_936}
    assert b is not None and b.n_params is None and b.extensions == ["tool_parameters"]
    assert c is None


def sse(*events: object, comments: int = 0) -> bytes:
    lines = [": working\n\n"] * comments
    lines += [f"data: {json.dumps(e) if not isinstance(e, str) else e}\n\n" for e in events]
    return "".join(lines).encode()


def chunk(delta: dict[str, object], finish: str | None = None, **top: object) -> dict[str, object]:
    return {
        "id": "c",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        **top,
    }


TIMINGS = {"cache_n": 0, "prompt_n": 5, "prompt_ms": 1.0, "prompt_per_second": 5000.0, "predicted_n": 9,
           "predicted_ms": 2.0, "predicted_per_second": 4500.0}  # fmt: skip


async def test_a_streamed_reply_is_gathered_text_calls_usage_and_timings() -> None:
    call = {"index": 0, "id": "call_1", "type": "function", "function": {"name": "read_file", "arguments": '{"pa'}}
    body = sse(
        chunk({"role": "assistant", "content": ""}),
        chunk({"content": "Let me "}),
        chunk({"content": "look."}),
        chunk({"tool_calls": [call]}),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": 'th": "a.txt"}'}}]}),
        chunk({}, "tool_calls"),
        {"id": "c", "created": 1, "model": "m", "choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 9,
         "total_tokens": 14}, "timings": TIMINGS},
        "[DONE]",
        comments=3,
    )  # fmt: skip
    model = client(lambda request: httpx.Response(200, content=body, headers={"content-type": "text/event-stream"}))
    reply = await model.complete(REQUEST)
    assert reply.message["content"] == "Let me look." and reply.finish_reason == "tool_calls"
    [gathered] = reply.message["tool_calls"]
    assert gathered["id"] == "call_1" and json.loads(gathered["function"]["arguments"]) == {"path": "a.txt"}
    assert reply.usage is not None and reply.usage.total_tokens == 14
    assert reply.timings is not None and reply.timings.prompt_n == 5


async def test_an_error_event_in_a_stream_is_the_providers_failure() -> None:
    body = sse(chunk({"role": "assistant", "content": ""}), {"error": {"message": "the model failed"}}, "[DONE]")
    model = client(lambda request: httpx.Response(200, content=body, headers={"content-type": "text/event-stream"}))
    with pytest.raises(ProviderUnavailable, match="the model failed"):
        await model.complete(REQUEST)


def streaming_app(gap_s: float, beats: bool) -> Any:
    """A server that streams a reply after 1.5 s of reading: saying so every `gap_s` (when it `beats`), or not."""
    from fastapi import FastAPI
    from fastapi.responses import StreamingResponse

    app = FastAPI()

    @app.post("/v1/chat/completions")
    async def chat() -> StreamingResponse:
        async def events() -> Any:
            yield sse(chunk({"role": "assistant", "content": ""}))
            for _ in range(int(1.5 / gap_s)):
                await asyncio.sleep(gap_s)
                if beats:
                    yield b": working\n\n"
            yield sse(chunk({"content": "done"}, "stop"), "[DONE]")

        return StreamingResponse(events(), media_type="text/event-stream")

    return app


async def test_a_slow_reply_that_keeps_saying_it_is_working_is_waited_for_and_a_silent_one_is_not() -> None:
    """The timeout is for silence: a server reading a long prompt says so, a stuck one says nothing."""
    for beats, ok in ((True, True), (False, False)):
        server = AppServer(streaming_app(0.1, beats))
        try:
            model = OpenAIClient(server.base_url, "m", timeout_s=0.5, max_retries=0)
            if ok:
                assert (await model.complete(REQUEST)).message["content"] == "done"
            else:
                with pytest.raises(ProviderUnavailable, match=r"sent no reply within 0\.5 s"):
                    await model.complete(REQUEST)
            await model.aclose()
        finally:
            server.stop()

"""The serving core, in-process over httpx's ASGI transport, with a fake backend at the Backend seam."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncGenerator, Iterator, Mapping, MutableMapping
from typing import Any

import httpx
import pytest

from serve.core.app import BodyLimits, create_app
from serve.core.backend import Event, Finished, Prepared, TextOut, Token
from serve.core.replies import stream
from serve.errors import APIError
from tests.serve.schemas import heavy_schema
from wire.types import ChatCompletionRequest, ModelCard, allowing, usage_of

TOOL: Any = {"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {}}}}


class Echo:
    """Answers with the last message's text, in pieces; `explode` makes it fail after the first piece."""

    def __init__(self) -> None:
        self.seen: list[ChatCompletionRequest] = []

    def model_cards(self) -> list[ModelCard]:
        return [ModelCard(id="echo")]

    def health(self) -> dict[str, Any]:
        return {"status": "ok"}

    def fault(self) -> str | None:
        return None

    def queue_depth(self) -> int:
        return 0

    async def prepare(self, request: ChatCompletionRequest, headers: Mapping[str, str]) -> Prepared:
        self.seen.append(request)
        if request.messages[-1].get("content") == "crash":
            raise RuntimeError("the backend has a bug")
        return Prepared(request, 3)

    async def run(self, job: Prepared) -> AsyncGenerator[Event, None]:
        text = str(job.request.messages[-1].get("content"))
        yield TextOut(text[:2])
        if text == "explode":
            raise APIError("the model fell over")
        yield TextOut(text[2:])
        yield Finished({"role": "assistant", "content": text}, "stop", usage_of(3, 2, 0))

    def tokenize(self, text: str, special: bool) -> list[Token]:
        return [Token(ord(c), c) for c in text]

    def detokenize(self, tokens: list[int]) -> str:
        return "".join(map(chr, tokens))


@pytest.fixture
def backend() -> Echo:
    return Echo()


@pytest.fixture
async def client(backend: Echo) -> AsyncGenerator[httpx.AsyncClient, None]:
    app = create_app(backend, BodyLimits(max_body_bytes=100_000))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as c:
        yield c


SELF_REQUIRED = {"type": "object", "properties": {"next": {"$ref": "#"}}, "required": ["next"]}


def chat(content: Any = "hello", **extra: Any) -> dict[str, Any]:
    return {"model": "echo", "messages": [{"role": "user", "content": content}], **extra}


async def error_of(response: httpx.Response, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert set(error) >= {"message", "type", "code", "param"}
    return dict(error)


async def test_a_reply_and_its_stream(client: httpx.AsyncClient) -> None:
    reply = (await client.post("/v1/chat/completions", json=chat())).json()
    assert reply["choices"][0]["message"] == {"role": "assistant", "content": "hello"}
    assert reply["choices"][0]["logprobs"] is None and reply["usage"]["total_tokens"] == 5
    stream = await client.post("/v1/chat/completions", json=chat(stream=True))
    events = [line[6:] for line in stream.text.splitlines() if line.startswith("data: ")]
    assert events[-1] == "[DONE]"
    text = "".join(json.loads(e)["choices"][0]["delta"].get("content", "") for e in events[:-1])
    assert text == "hello"


async def test_content_parts_and_the_developer_role_are_read(client: httpx.AsyncClient, backend: Echo) -> None:
    body = {
        "model": "echo",
        "messages": [
            {"role": "developer", "content": [{"type": "text", "text": "Be brief."}]},
            {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
        ],
    }
    assert (await client.post("/v1/chat/completions", json=body)).status_code == 200
    assert backend.seen[-1].messages == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "a\nb"},
    ]
    image = chat([{"type": "image_url", "image_url": {"url": "x"}}])
    error = await error_of(await client.post("/v1/chat/completions", json=image), 400)
    assert "reads only text parts" in error["message"]


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        (chat(n=2), "n must be 1"),
        (chat(tools=[{"type": "function", "function": {"name": 'a"b'}}]), "invalid function name"),
        (chat(tools=[TOOL, TOOL]), "used twice"),
        (chat(tools=[{**TOOL, "function": {"name": "g", "parameters": {"type": "banana"}}}]), "tool 'g'"),
        (chat(tools=[{**TOOL, "function": {"name": "g", "parameters": {"$ref": "http://evil/x"}}}]), "not local"),
        (chat(tools=[{**TOOL, "function": {"name": "g", "parameters": {"pattern": "(("}}}]), "tool 'g'"),
        (chat(tool_choice="required"), "no tools are offered"),
        (chat(tools=[TOOL], tool_choice={"type": "function", "function": {"name": "zz"}}), "not among the tools"),
        (chat(tools=[TOOL], tool_choice=allowing("auto", ["f", "zz"])), "names 'zz', which is not among the tools"),
        (chat(tool_choice=allowing("required", ["f"])), "names 'f', which is not among the tools"),
        (chat(tools=[TOOL], tool_choice=allowing("auto", [])), "tool_choice"),
        (chat(tools=[TOOL], tool_choice=allowing("any", ["f"])), "tool_choice"),  # type: ignore[arg-type]
        (chat(response_format={"type": "json_schema", "json_schema": {"name": "x"}}), "json_schema.schema"),
        (chat(stop=["x"] * 17), "at most 16"),
        (chat(tools=[TOOL], tool_parameters={"zz": {"type": "object"}}), "tool_parameters names 'zz'"),
        (chat(tools=[TOOL], tool_parameters={"f": {"type": "array"}}), "must describe an object"),
        (chat(tools=[TOOL], tool_parameters={"f": {"$ref": "http://evil/x"}}), "not local"),
        (chat(tools=[TOOL], tool_parameters={"f": []}), "tool_parameters"),
        (chat(tools=[{**TOOL, "function": {"name": "g", "parameters": SELF_REQUIRED}}]), "no value of finite size"),
        (chat(tools=[TOOL], distinct_calls=["zz"]), "distinct_calls names 'zz'"),
        (chat(tools=[TOOL], distinct_calls="f"), "distinct_calls"),
        (chat(tools=[TOOL], distinct_calls=["f"] * 1025), "distinct_calls"),
    ],
)
async def test_bad_requests_are_400s_that_say_what_is_wrong(client: httpx.AsyncClient, body: Any, needle: str) -> None:
    error = await error_of(await client.post("/v1/chat/completions", json=body), 400)
    assert needle in error["message"] and error["type"] == "invalid_request_error"


async def test_a_deeply_nested_schema_names_its_tool(client: httpx.AsyncClient) -> None:
    schema: dict[str, Any] = {"type": "object"}
    for _ in range(60):
        schema = {"type": "object", "properties": {"x": schema}}
    body = chat(tools=[{"type": "function", "function": {"name": "deep", "parameters": schema}}])
    error = await error_of(await client.post("/v1/chat/completions", json=body), 400)
    assert "tool 'deep'" in error["message"] and "deeper than 32" in error["message"]


async def test_token_ids_are_integers_not_booleans_or_strings(client: httpx.AsyncClient) -> None:
    for tokens in ([True], ["97"], [97.0], [[97]]):
        await error_of(await client.post("/detokenize", json={"tokens": tokens}), 400)


async def test_a_client_that_leaves_within_its_body_gets_nothing_and_the_server_goes_on(backend: Echo) -> None:
    app = create_app(backend, BodyLimits(max_body_bytes=100_000))
    messages: Iterator[dict[str, Any]] = iter(
        [{"type": "http.request", "body": b'{"model": "ec', "more_body": True}, {"type": "http.disconnect"}]
    )
    sent: list[MutableMapping[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return next(messages)

    async def send(message: MutableMapping[str, Any]) -> None:
        sent.append(message)

    scope = {"type": "http", "method": "POST", "path": "/v1/chat/completions", "headers": [], "query_string": b""}
    await app(
        {**scope, "http_version": "1.1", "scheme": "http", "server": ("test", 80), "root_path": ""}, receive, send
    )
    assert not any(m.get("status", 0) >= 500 for m in sent), sent
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client:
        assert (await client.post("/v1/chat/completions", json=chat())).status_code == 200


async def test_hostile_bodies(client: httpx.AsyncClient) -> None:
    surrogate = b'{"model": "echo", "messages": [{"role": "user", "content": "\\ud800"}]}'
    error = await error_of(await client.post("/v1/chat/completions", content=surrogate), 400)
    assert "lone surrogate" in error["message"]
    nested = b"[" * 50_000 + b"]" * 50_000
    assert (await error_of(await client.post("/v1/chat/completions", content=nested), 400))["message"]
    huge = b'{"model": "echo", "pad": "' + b"x" * 200_000 + b'"}'
    error = await error_of(await client.post("/v1/chat/completions", content=huge), 413)
    assert "100,000" in error["message"]
    for raw in (b"", b"null", b"[]", b"{", b'{"model": 1}', "é".encode("latin-1")):
        await error_of(await client.post("/v1/chat/completions", content=raw), 400)


async def test_an_unknown_model_a_missing_route_and_a_bug(client: httpx.AsyncClient) -> None:
    error = await error_of(await client.post("/v1/chat/completions", json={**chat(), "model": "gpt"}), 404)
    assert error["code"] == "model_not_found" and "echo" in error["message"]
    assert (await error_of(await client.get("/v1/models/gpt"), 404))["code"] == "model_not_found"
    assert (await client.get("/v1/models/echo")).json()["id"] == "echo"
    assert (await error_of(await client.get("/nope"), 404))["code"] == "not_found"
    error = await error_of(await client.post("/v1/chat/completions", json=chat("crash")), 500)
    assert error["type"] == "server_error" and "RuntimeError" in error["message"]


async def test_an_error_after_the_stream_began_is_an_sse_error_event(client: httpx.AsyncClient) -> None:
    stream = await client.post("/v1/chat/completions", json=chat("explode", stream=True))
    assert stream.status_code == 200
    events = [line[6:] for line in stream.text.splitlines() if line.startswith("data: ")]
    assert json.loads(events[-2])["error"]["message"] == "the model fell over" and events[-1] == "[DONE]"


async def test_tokenize_metrics_and_the_access_log(client: httpx.AsyncClient, caplog: pytest.LogCaptureFixture) -> None:
    assert (await client.post("/tokenize", json={"content": "ab"})).json() == {"tokens": [97, 98]}
    assert (await client.post("/detokenize", json={"tokens": [97, 98]})).json() == {"content": "ab"}
    with caplog.at_level(logging.INFO, logger="serve.access"):
        await client.post("/v1/chat/completions", json=chat())
    assert "POST /v1/chat/completions 200 prompt=3 cached=0 generated=2 finish=stop" in caplog.text
    metrics = (await client.get("/metrics")).text
    assert 'requests_total{path="/v1/chat/completions",status="200"} 1.0' in metrics
    assert "completion_tokens_total 2.0" in metrics


async def test_metrics_label_requests_by_route_so_unknown_paths_cannot_grow_them(client: httpx.AsyncClient) -> None:
    await client.get("/no/such/path")
    await client.get("/metrics")  # its own series appears from the second scrape on
    before = len((await client.get("/metrics")).text)
    for index in range(299):
        response = await client.get(f"/no/such/{index}/{'x' * 2000}")
        assert response.status_code == 404
    metrics = (await client.get("/metrics")).text
    assert 'requests_total{path="unmatched",status="404"} 300.0' in metrics
    assert "no/such" not in metrics, [line for line in metrics.splitlines() if "no/such" in line][:3]
    assert len(metrics) < before + 100  # only the counts' digits grew


async def test_the_access_log_escapes_what_is_not_printable(
    client: httpx.AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    """Escape codes, NUL and line separators in a path could drive a terminal or forge log lines."""
    with caplog.at_level(logging.INFO, logger="serve.access"):
        await client.get("/x%1b%5b2J%1b]0;owned%07%00%e2%80%a8forged%c2%85line%0d%0aGET")
    [record] = [r for r in caplog.records if r.name == "serve.access"]
    line = record.getMessage()
    assert len(line.splitlines()) == 1 and line.isprintable()
    assert "\\x1b[2J" in line and "\\u2028forged" in line and "\\x85line" in line


async def slow_events(seconds: float) -> AsyncGenerator[Event, None]:
    await asyncio.sleep(seconds)
    yield TextOut("ok", None)
    yield Finished({"role": "assistant", "content": "ok"}, "stop", usage_of(1, 1), None, None)


async def test_a_stream_says_it_is_working_while_nothing_else_is_sent_and_only_then() -> None:
    """Comments while the backend works and sends nothing (a long prompt being read); none from a backend that
    says it is not making progress, which a client's silence timeout then catches."""
    for working, expected in ((True, True), (False, False)):
        progress = (lambda: True) if working else (lambda: False)
        sent = [piece async for piece in stream("c", "m", slow_events(0.35), False, lambda f: None, progress, 0.1)]
        assert (": working\n\n" in sent) is expected
        assert sent[-1] == "data: [DONE]\n\n" and any('"content":"ok"' in p for p in sent if p.startswith("data: {"))


def heavy_tools(count: int, properties: int = 120) -> list[dict[str, Any]]:
    return [{"type": "function", "function": {"name": f"t{i}", "parameters": heavy_schema(i, properties)}}
            for i in range(count)]  # fmt: skip


async def test_a_request_whose_schemas_are_too_big_together_is_refused_before_any_is_checked(backend: Echo) -> None:
    app = create_app(backend, BodyLimits(max_body_bytes=4_000_000))
    body = chat(tools=heavy_tools(128, properties=40))  # each schema under its own limit, together over 512 KB
    assert len(json.dumps(body)) > 512_000
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as c:
        error = await error_of(await c.post("/v1/chat/completions", json=body), 400)
    assert "together" in error["message"] and error["param"] == "tools" and not backend.seen


async def test_checking_one_requests_schemas_does_not_hold_the_others(backend: Echo) -> None:
    """Schema checks are CPU work off the event loop: while one request's schemas are checked, a health check
    and a request without tools are answered. (A ratio of times in one run, not a timing.)"""
    app = create_app(backend, BodyLimits(max_body_bytes=4_000_000))
    body = chat(tools=heavy_tools(5, properties=100))  # small enough to be read on the loop, slow to check
    assert len(json.dumps(body)) < 64_000
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as c:
        loop = asyncio.get_running_loop()
        start = loop.time()
        heavy = asyncio.ensure_future(c.post("/v1/chat/completions", json=body))
        await asyncio.sleep(0.01)  # the heavy request is being checked
        health = await c.get("/health")
        hi = await c.post("/v1/chat/completions", json=chat("hi"))
        answered = loop.time()
        reply = await heavy
        done = loop.time()
    assert health.status_code == 200 and hi.json()["choices"][0]["message"]["content"] == "hi"
    assert reply.status_code == 200, reply.text
    assert answered - start < (done - start) / 3, (answered - start, done - start)

"""The local model server on the real SmolLM2 GGUF, offline, through the official openai client."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from typing import Any

import httpx
import jsonschema
import openai
import pytest
from openai import AsyncOpenAI, OpenAI

from tests.conftest import Server

MODEL = "smollm2-135m-instruct"
READ_FILE: Any = {
    "type": "function",
    "function": {
        "name": "read_file",
        "description": "Read a text file from the workspace.",
        "parameters": {
            "type": "object",
            "properties": {"path": {"type": "string", "description": "file path relative to the workspace"}},
            "required": ["path"],
            "additionalProperties": False,
        },
    },
}
NO_ARGUMENTS = {"type": "object", "properties": {}, "additionalProperties": False}
LIST_FILES: Any = {
    "type": "function",
    "function": {"name": "list_files", "description": "List the files.", "parameters": NO_ARGUMENTS},
}
QUESTION: Any = [
    {"role": "system", "content": "You are a file assistant."},
    {"role": "user", "content": "What does notes.txt say?"},
]


@pytest.fixture(scope="module")
def llama() -> Iterator[Server]:
    server = Server("serve.llama", "--model", MODEL, "--threads", "2", "--ctx", "4096")
    yield server
    server.stop()


@pytest.fixture(scope="module")
def client(llama: Server) -> Iterator[OpenAI]:
    with OpenAI(base_url=llama.base_url, api_key="unused", max_retries=0, timeout=300) as c:
        yield c


def test_a_reply_has_usage_and_llama_server_timings(client: OpenAI) -> None:
    raw = client.chat.completions.with_raw_response.create(model=MODEL, messages=QUESTION, max_tokens=24)
    reply = raw.parse()
    assert reply.choices[0].message.content and reply.choices[0].finish_reason in ("stop", "length")
    assert reply.usage is not None and reply.usage.prompt_tokens > 10 and 0 < reply.usage.completion_tokens <= 24
    assert reply.usage.total_tokens == reply.usage.prompt_tokens + reply.usage.completion_tokens
    timings = json.loads(raw.text)["timings"]
    assert set(timings) == {
        "cache_n",
        "prompt_n",
        "prompt_ms",
        "prompt_per_second",
        "predicted_n",
        "predicted_ms",
        "predicted_per_second",
    }
    assert timings["cache_n"] + timings["prompt_n"] == reply.usage.prompt_tokens
    assert timings["predicted_n"] == reply.usage.completion_tokens and timings["predicted_per_second"] > 0


def test_identical_requests_get_identical_replies(client: OpenAI) -> None:
    messages: Any = [{"role": "user", "content": "Name three colours."}]
    first = client.chat.completions.create(model=MODEL, messages=messages, max_tokens=40)
    client.chat.completions.create(
        model=MODEL, messages=[{"role": "user", "content": "Something else entirely."}], max_tokens=8
    )
    second = client.chat.completions.create(model=MODEL, messages=messages, max_tokens=40)
    assert first.choices[0].message.content == second.choices[0].message.content


def test_a_second_turn_reuses_the_cached_prefix(llama: Server) -> None:
    messages: Any = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Say one word about logs."},
    ]
    first = httpx.post(
        f"{llama.base_url}/chat/completions", json={"model": MODEL, "messages": messages, "max_tokens": 16}, timeout=300
    ).json()
    messages += [first["choices"][0]["message"], {"role": "user", "content": "And one word about files."}]
    second = httpx.post(
        f"{llama.base_url}/chat/completions", json={"model": MODEL, "messages": messages, "max_tokens": 16}, timeout=300
    ).json()
    cached, prompt = second["usage"]["prompt_tokens_details"]["cached_tokens"], second["usage"]["prompt_tokens"]
    assert cached >= first["usage"]["prompt_tokens"] - 1  # the whole first prompt, at least
    assert second["timings"]["prompt_n"] == prompt - cached < prompt / 2  # only the new suffix was processed


def test_interleaved_conversations_both_keep_their_cache(llama: Server) -> None:
    def ask(messages: Any) -> dict[str, Any]:
        return httpx.post(
            f"{llama.base_url}/chat/completions",
            json={"model": MODEL, "messages": messages, "max_tokens": 8},
            timeout=300,
        ).json()  # type: ignore[no-any-return]

    a: Any = [{"role": "user", "content": "Conversation A is about apples. " * 20}]
    b: Any = [{"role": "user", "content": "Conversation B is about boats. " * 20}]
    a_first, b_first = ask(a), ask(b)
    a_second = ask([*a, a_first["choices"][0]["message"], {"role": "user", "content": "More?"}])
    b_second = ask([*b, b_first["choices"][0]["message"], {"role": "user", "content": "More?"}])
    assert a_second["usage"]["prompt_tokens_details"]["cached_tokens"] >= a_first["usage"]["prompt_tokens"] - 1
    assert b_second["usage"]["prompt_tokens_details"]["cached_tokens"] >= b_first["usage"]["prompt_tokens"] - 1


def test_a_forced_tool_call_is_valid_against_the_tools_schema(client: OpenAI) -> None:
    reply = client.chat.completions.create(
        model=MODEL, messages=QUESTION, tools=[READ_FILE, LIST_FILES], tool_choice="required", max_tokens=80
    )
    choice = reply.choices[0]
    assert choice.finish_reason == "tool_calls" and choice.message.tool_calls
    call = choice.message.tool_calls[0]
    assert call.id.startswith("call_") and call.function.name in ("read_file", "list_files")
    schema = (READ_FILE if call.function.name == "read_file" else LIST_FILES)["function"]["parameters"]
    jsonschema.validate(json.loads(call.function.arguments), schema)


def test_a_named_function_is_forced(client: OpenAI) -> None:
    named: Any = {"type": "function", "function": {"name": "read_file"}}
    reply = client.chat.completions.create(
        model=MODEL, messages=QUESTION, tools=[READ_FILE, LIST_FILES], tool_choice=named, max_tokens=80
    )
    calls = reply.choices[0].message.tool_calls or []
    assert [c.function.name for c in calls] == ["read_file"]
    jsonschema.validate(json.loads(calls[0].function.arguments), READ_FILE["function"]["parameters"])


def test_tool_choice_none_never_calls(client: OpenAI) -> None:
    reply = client.chat.completions.create(
        model=MODEL, messages=QUESTION, tools=[READ_FILE], tool_choice="none", max_tokens=30
    )
    assert not reply.choices[0].message.tool_calls and "<tool_call>" not in (reply.choices[0].message.content or "")


def test_streaming_text_and_tool_call_deltas(client: OpenAI) -> None:
    plain = client.chat.completions.create(model=MODEL, messages=QUESTION, max_tokens=24)
    chunks = list(
        client.chat.completions.create(
            model=MODEL, messages=QUESTION, max_tokens=24, stream=True, stream_options={"include_usage": True}
        )
    )
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text.strip() == (plain.choices[0].message.content or "").strip()
    assert chunks[-1].usage is not None and chunks[-1].usage.completion_tokens == plain.usage.completion_tokens  # type: ignore[union-attr]
    calls = list(
        client.chat.completions.create(
            model=MODEL, messages=QUESTION, tools=[READ_FILE], tool_choice="required", max_tokens=80, stream=True
        )
    )
    deltas = [d.tool_calls[0] for c in calls if c.choices and (d := c.choices[0].delta).tool_calls]
    assert deltas[0].function and deltas[0].function.name == "read_file" and deltas[0].id
    arguments = "".join(d.function.arguments or "" for d in deltas if d.function)
    jsonschema.validate(json.loads(arguments), READ_FILE["function"]["parameters"])
    assert [c.choices[0].finish_reason for c in calls if c.choices][-1] == "tool_calls"


def test_a_prompt_longer_than_the_context_is_a_400(client: OpenAI) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(
            model=MODEL, messages=[{"role": "user", "content": "logs rotate daily. " * 1500}], max_tokens=4
        )
    assert isinstance(caught.value.body, dict) and caught.value.body["code"] == "context_length_exceeded"


def test_an_unknown_model_is_a_404_and_a_malformed_body_a_400(llama: Server, client: OpenAI) -> None:
    with pytest.raises(openai.NotFoundError):
        client.chat.completions.create(model="gpt-9", messages=QUESTION)
    for body in (
        b"{",
        b'{"model": "x"}',
        json.dumps({"model": MODEL, "messages": [{"role": "user", "content": 3}]}).encode(),
    ):
        response = httpx.post(
            f"{llama.base_url}/chat/completions", content=body, headers={"content-type": "application/json"}
        )
        assert response.status_code == 400 and response.json()["error"]["type"] == "invalid_request_error"
    named: Any = {"type": "function", "function": {"name": "nope"}}
    with pytest.raises(openai.BadRequestError, match="not among the tools"):
        client.chat.completions.create(model=MODEL, messages=QUESTION, tools=[READ_FILE], tool_choice=named)


def test_a_client_that_disconnects_stops_its_generation(llama: Server) -> None:
    long: Any = {
        "model": MODEL,
        "messages": [{"role": "user", "content": "Write a very long story about logs."}],
        "max_tokens": 3000,
    }
    with pytest.raises(httpx.ReadTimeout):
        httpx.post(f"{llama.base_url}/chat/completions", json=long, timeout=1.0)
    began = time.monotonic()
    short = httpx.post(
        f"{llama.base_url}/chat/completions", json={"model": MODEL, "messages": QUESTION, "max_tokens": 4}, timeout=300
    )
    assert short.status_code == 200 and time.monotonic() - began < 5  # 3000 tokens would take ~30 s
    with httpx.stream(
        "POST", f"{llama.base_url}/chat/completions", json={**long, "stream": True}, timeout=60
    ) as response:
        for _ in zip(range(5), response.iter_lines(), strict=False):
            pass
    began = time.monotonic()
    httpx.post(
        f"{llama.base_url}/chat/completions", json={"model": MODEL, "messages": QUESTION, "max_tokens": 4}, timeout=300
    )
    assert time.monotonic() - began < 5


async def test_concurrent_requests_queue_and_all_get_answers(llama: Server) -> None:
    async with AsyncOpenAI(base_url=llama.base_url, api_key="unused", max_retries=0, timeout=300) as aclient:
        prompts = [f"Give one word that rhymes with {w}." for w in ("cat", "log", "file", "tree")]
        replies = await asyncio.gather(
            *(
                aclient.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": p}], max_tokens=12)
                for p in prompts
            )
        )
    assert all(r.choices[0].message.content for r in replies) and len(replies) == 4
    health = httpx.get(f"{llama.url}/healthz").json()
    assert (
        health["loaded"] and health["context"] == 4096 and health["threads"] == 2 and health["file"].endswith(".gguf")
    )


def test_the_harness_cli_completes_a_run_with_only_the_base_url_changed(llama: Server, tmp_path: Any) -> None:
    import subprocess
    import sys

    from tests.conftest import ROOT, default_files

    workspace = default_files(tmp_path / "ws")
    args = ["run", "Read notes.txt and tell me what it says.", "--base-url", llama.base_url, "--model", MODEL]
    args += ["--workspace", str(workspace), "--state-dir", str(tmp_path / "st"), "--max-tokens", "64", "--json"]
    done = subprocess.run(
        [sys.executable, "-m", "harness", *args], cwd=ROOT, capture_output=True, text=True, timeout=600
    )
    facts = json.loads(done.stdout.strip().splitlines()[-1])
    assert done.returncode == 0 and facts["status"] == "completed" and facts["turns"] >= 1
    assert facts["prompt_tokens"] > 0 and facts["cost_usd"] > 0 and facts["answer"]

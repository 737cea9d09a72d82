"""The scripted provider through the official openai client: in-process (the app behind starlette's TestClient,
a sync httpx client), and over loopback where a process is the point (a second process, the CLI's latency
flag, shutdown)."""

from __future__ import annotations

import json
import signal
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import openai
import pytest
from openai import OpenAI
from starlette.testclient import TestClient

from evals.servers import ServerProcess
from serve.scripted.app import create_app
from tests.conftest import AppServer, Server
from tests.serve.scripted.driver import TOOLS, drive, folder_tools, trajectory
from wire.tokens import o200k
from wire.types import allowing

if TYPE_CHECKING:
    import httpx2  # what starlette's TestClient answers with


@pytest.fixture(scope="module")
def http() -> Iterator[TestClient]:
    with TestClient(create_app(), base_url="http://testserver/v1") as app:
        yield app


@pytest.fixture(scope="module")
def client(http: TestClient) -> Iterator[OpenAI]:
    with OpenAI(base_url="http://testserver/v1", api_key="unused", max_retries=0, http_client=http) as c:
        yield c


def fixed(results: dict[str, str]) -> Any:
    return lambda name, args: results.get(f"{name}:{args.get('path', '')}", results.get(name, ""))


def test_plan(client: OpenAI, workspace: Path) -> None:
    steps = trajectory(drive(client, "plan", "Which file mentions a timeout?", folder_tools(workspace)))
    assert steps == [
        "list_files({})",
        'read_file({"path":"errors.log"})',
        "errors.log mentions a timeout: ERROR worker 7 timed out after 30000 ms",
    ]


def test_runaway_never_answers_and_uses_fresh_ids(client: OpenAI) -> None:
    replies = drive(client, "runaway", "go", fixed({}), max_turns=6)
    assert all(r.tool_calls[0].function.name == "list_files" for r in replies) and len(replies) == 6
    assert [r.tool_calls[0].id for r in replies] == ["c1", "c2", "c3", "c4", "c5", "c6"]


def test_recover_corrects_itself_only_when_told_what_happened(client: OpenAI, workspace: Path) -> None:
    told = trajectory(drive(client, "recover", "q", folder_tools(workspace)))
    assert told == [
        'read_file({"path":"timeout.log"})',
        "list_files({})",
        'read_file({"path":"errors.log"})',
        "errors.log mentions a timeout.",
    ]
    silent = trajectory(drive(client, "recover", "q", fixed({"read_file:timeout.log": "Error: something went wrong."})))
    assert silent == ['read_file({"path":"timeout.log"})', "I could not read the file, so I do not know."]


@pytest.mark.parametrize(
    ("slot", "answer"),
    [
        ("Deleted access.log.", "Deleted access.log to free space."),
        (
            "Not run: the user declined this delete_file call, so nothing was done.",
            "I did not delete anything: you declined the deletion.",
        ),
        ("", "Deleted access.log to free space."),
    ],
)
def test_destructive_answer_reflects_the_words_in_the_slot(client: OpenAI, slot: str, answer: str) -> None:
    steps = trajectory(
        drive(
            client,
            "destructive",
            "tidy up",
            fixed({"list_files": "access.log (10 bytes)", "delete_file:access.log": slot}),
        )
    )
    assert steps == ["list_files({})", 'delete_file({"path":"access.log"})', answer]


def test_repeat_and_repeat_write_ask_twice_under_two_ids(client: OpenAI) -> None:
    reads = drive(client, "repeat", "q", fixed({"read_file:errors.log": "x"}))
    assert (
        trajectory(reads)[:2] == ['read_file({"path":"errors.log"})'] * 2
        and reads[0].tool_calls[0].id != reads[1].tool_calls[0].id
    )
    writes = trajectory(drive(client, "repeat_write", "q", fixed({})))
    assert writes == ['delete_file({"path":"access.log"})'] * 2 + ["Deleted access.log."]
    assert trajectory(drive(client, "single_read", "q", fixed({}))) == [
        'read_file({"path":"errors.log"})',
        "errors.log mentions a timeout.",
    ]


def test_forbidden_retries_forever_slow_and_command_answer(client: OpenAI) -> None:
    assert (
        trajectory(drive(client, "forbidden", "q", fixed({}), max_turns=4)) == ['read_file({"path":"secret.txt"})'] * 4
    )
    assert trajectory(drive(client, "slow", "q", fixed({"scan_archive": "scanned 1200 files"}))) == [
        "scan_archive({})",
        "The archive scan finished: scanned 1200 files",
    ]
    assert (
        trajectory(drive(client, "command", "q", fixed({"run_command": "exit code: 0\nok"})))[1]
        == "The check command finished: exit code: 0"
    )


def test_research_parent_and_children(client: OpenAI, workspace: Path) -> None:
    parent = trajectory(drive(client, "research", "q", fixed({"research": "errors.log says worker 7 timed out"})))
    assert parent == [
        'research({"question":"What does errors.log say about the timeout?"})',
        "Research says: errors.log says worker 7 timed out",
    ]
    child = trajectory(drive(client, "research.child", "q", folder_tools(workspace)))
    assert child[-1].startswith("errors.log mentions a timeout")
    assert len(drive(client, "research.child_runaway", "q", fixed({}), max_turns=5)) == 5


def test_token_counts_match_tiktoken_under_the_documented_convention(client: OpenAI) -> None:
    encoding = o200k()

    def count(value: object) -> int:
        return len(encoding.encode(json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)))

    messages: list[Any] = [
        {"role": "system", "content": "Be brief. ✓"},
        {"role": "user", "content": "Which file mentions a timeout?"},
    ]
    first = client.chat.completions.create(model="plan", messages=messages, tools=TOOLS)
    assert first.usage is not None
    assert first.usage.prompt_tokens == sum(map(count, messages)) + sum(map(count, TOOLS))
    calls = [c.model_dump() for c in first.choices[0].message.tool_calls or []]
    assert first.usage.completion_tokens == count(calls)
    assert first.usage.total_tokens == first.usage.prompt_tokens + first.usage.completion_tokens
    messages += [
        {"role": "assistant", "content": None, "tool_calls": calls},
        {"role": "tool", "tool_call_id": "c1", "content": "errors.log (9 bytes)"},
    ]
    messages += [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c2",
                    "type": "function",
                    "function": {"name": "read_file", "arguments": '{"path":"errors.log"}'},
                }
            ],
        }
    ]
    messages += [{"role": "tool", "tool_call_id": "c2", "content": "worker 7 timed out after 30000 ms"}]
    last = client.chat.completions.create(model="plan", messages=messages)
    assert last.usage is not None and last.usage.prompt_tokens == sum(map(count, messages))
    assert last.usage.completion_tokens == count(last.choices[0].message.content)


def test_streaming_gives_chunks_with_tool_call_deltas_and_usage(client: OpenAI) -> None:
    messages: Any = [{"role": "user", "content": "Which file mentions a timeout?"}]
    stream = client.chat.completions.create(
        model="plan", messages=messages, tools=TOOLS, stream=True, stream_options={"include_usage": True}
    )
    chunks = list(stream)
    deltas = [c.choices[0].delta for c in chunks if c.choices]
    name = "".join(d.tool_calls[0].function.name or "" for d in deltas if d.tool_calls and d.tool_calls[0].function)
    args = "".join(
        d.tool_calls[0].function.arguments or "" for d in deltas if d.tool_calls and d.tool_calls[0].function
    )
    assert (name, args) == ("list_files", "{}")
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "tool_calls"
    plain = client.chat.completions.create(model="plan", messages=messages, tools=TOOLS)
    assert chunks[-1].usage == plain.usage and not chunks[-1].choices
    text_stream = client.chat.completions.create(
        model="solve", messages=[{"role": "user", "content": "What is the weather?"}], stream=True
    )
    text = "".join(c.choices[0].delta.content or "" for c in text_stream if c.choices)
    assert text == "I can only answer plain questions about the files in the workspace."


def test_a_second_server_process_gives_the_same_reply(scripted: AppServer) -> None:
    other = Server("serve.scripted")
    try:
        listed = {"id": "c1", "type": "function", "function": {"name": "list_files", "arguments": "{}"}}
        messages = [
            {"role": "user", "content": "q"},
            {"role": "assistant", "content": None, "tool_calls": [listed]},
            {"role": "tool", "tool_call_id": "c1", "content": "errors.log (3 bytes)"},
        ]
        body = {"model": "plan", "messages": messages, "tools": TOOLS}
        first = httpx.post(f"{scripted.base_url}/chat/completions", json=body).json()
        second = httpx.post(f"{other.base_url}/chat/completions", json=body).json()
        assert (first["id"], first["choices"], first["usage"]) == (second["id"], second["choices"], second["usage"])
        assert first["choices"][0]["message"]["tool_calls"][0]["function"]["name"] == "read_file"
    finally:
        other.stop()


def test_latency_injection_server_wide_and_per_request(scripted: AppServer) -> None:
    slow = AppServer(create_app(latency_ms=300))
    body = {"model": "plan", "messages": [{"role": "user", "content": "q"}]}
    try:
        began = time.monotonic()
        assert httpx.post(f"{slow.base_url}/chat/completions", json=body).status_code == 200
        assert time.monotonic() - began >= 0.3
        began = time.monotonic()
        httpx.post(f"{slow.base_url}/chat/completions", json=body, headers={"X-Scripted-Latency-Ms": "0"})
        assert time.monotonic() - began < 0.25
    finally:
        slow.stop()
    delayed = {"X-Scripted-Latency-Ms": "400"}
    with httpx.Client() as http, ThreadPoolExecutor(4) as pool:  # the wait is async: delayed requests overlap
        began = time.monotonic()
        list(
            pool.map(lambda _: http.post(f"{scripted.base_url}/chat/completions", json=body, headers=delayed), range(4))
        )
        assert time.monotonic() - began < 1.2


def test_models_lists_every_scenario_with_a_description(client: OpenAI) -> None:
    models = {m.id: m for m in client.models.list()}
    for name in (
        "plan",
        "runaway",
        "recover",
        "destructive",
        "repeat",
        "repeat_write",
        "forbidden",
        "slow",
        "research",
        "solve",
    ):
        assert name in models
        extra = models[name].model_extra
        assert extra and extra["description"]


def test_unknown_scenario_is_a_404_listing_the_valid_ones(client: OpenAI) -> None:
    with pytest.raises(openai.NotFoundError) as caught:
        client.chat.completions.create(model="nope", messages=[{"role": "user", "content": "q"}])
    error = caught.value.body
    assert isinstance(error, dict) and error["code"] == "model_not_found" and "plan" in error["message"]


@pytest.mark.parametrize(
    "body",
    [
        b"{not json",
        b"[]",
        json.dumps({"messages": [{"role": "user", "content": "q"}]}).encode(),
        json.dumps({"model": "plan", "messages": []}).encode(),
        json.dumps({"model": "plan", "messages": [{"role": "wizard", "content": "q"}]}).encode(),
        json.dumps({"model": "plan", "messages": [{"role": "user"}]}).encode(),
        json.dumps({"model": "plan", "messages": [{"role": "user", "content": "q"}], "max_tokens": -1}).encode(),
        json.dumps({"model": "plan", "messages": [{"role": "user", "content": "q"}], "temperature": "hot"}).encode(),
    ],
)
def test_malformed_bodies_get_a_400_with_an_openai_error(http: TestClient, body: bytes) -> None:
    response = http.post("/chat/completions", content=body, headers={"content-type": "application/json"})
    assert response.status_code == 400
    assert response.json()["error"]["type"] == "invalid_request_error" and response.json()["error"]["message"]


def test_a_script_that_has_run_out_says_so(http: TestClient) -> None:
    messages = [{"role": "user", "content": "q"}] + [{"role": "assistant", "content": "x"}] * 3
    response = http.post("/chat/completions", json={"model": "plan", "messages": messages})
    assert response.status_code == 400 and response.json()["error"]["code"] == "script_exhausted"
    assert "has no reply for turn 3" in response.json()["error"]["message"]


def test_healthz(http: TestClient) -> None:
    assert http.get("http://testserver/healthz").json()["status"] == "ok"


def exchange(call_id: str, name: str, result: str) -> list[Any]:
    """An assistant message calling `name`, and the tool's result."""
    call = {"id": call_id, "type": "function", "function": {"name": name, "arguments": "{}"}}
    return [{"role": "assistant", "tool_calls": [call]}, {"role": "tool", "tool_call_id": call_id, "content": result}]


def post(http: TestClient, body: Any, **headers: str) -> httpx2.Response:
    return http.post("/chat/completions", json=body, headers=headers)


def test_tool_choice_is_honoured_on_the_scripts_reply(http: TestClient) -> None:
    body: Any = {"model": "solve", "messages": [{"role": "user", "content": "How many files are there?"}]}
    body["tools"] = TOOLS
    asks = post(http, body).json()["choices"][0]
    assert asks["finish_reason"] == "tool_calls"
    answer = post(http, {**body, "tool_choice": "none"}).json()["choices"][0]
    assert answer["finish_reason"] == "stop" and "have not looked" in answer["message"]["content"]
    named = {"type": "function", "function": {"name": "list_files"}}
    assert post(http, {**body, "tool_choice": named}).json()["choices"][0]["finish_reason"] == "tool_calls"
    other = {"type": "function", "function": {"name": "read_file"}}
    refused = post(http, {**body, "tool_choice": other})
    assert refused.status_code == 400 and refused.json()["error"]["code"] == "script_exhausted"
    text: Any = {"model": "single_read", "tools": TOOLS, "tool_choice": "required", "messages": body["messages"]}
    text["messages"] = [*body["messages"], {"role": "assistant", "content": "x"}]
    assert post(http, text).json()["error"]["param"] == "tool_choice"


def test_allowed_tools_keep_the_scripts_calls_to_the_tools_they_list(http: TestClient) -> None:
    body: Any = {"model": "solve", "messages": [{"role": "user", "content": "How many files are there?"}]}
    body["tools"] = TOOLS
    for mode in ("auto", "required"):
        asks = post(http, {**body, "tool_choice": allowing(mode, ["list_files", "read_file"])}).json()["choices"][0]
        assert [c["function"]["name"] for c in asks["message"]["tool_calls"]] == ["list_files"]
        refused = post(http, {**body, "tool_choice": allowing(mode, ["read_file"])})
        assert refused.status_code == 400 and refused.json()["error"]["code"] == "script_exhausted"
        assert "calls list_files" in refused.json()["error"]["message"]


def test_stop_strings_cut_the_text(http: TestClient) -> None:
    body: Any = {"model": "plan", "messages": [{"role": "user", "content": "q"}], "stop": ["timeout"]}
    body["messages"] += [
        *exchange("c1", "list_files", "errors.log (10 bytes)"),
        *exchange("c2", "read_file", "worker timed out"),
    ]
    choice = post(http, body).json()["choices"][0]
    assert choice["message"]["content"] == "errors.log mentions a " and choice["finish_reason"] == "stop"


def test_what_the_script_cannot_do_is_refused_not_ignored(http: TestClient) -> None:
    body: Any = {"model": "plan", "messages": [{"role": "user", "content": "q"}]}
    for extra, param in (
        ({"logprobs": True}, "logprobs"),
        ({"response_format": {"type": "json_object"}}, "response_format"),
        ({"n": 3}, "n"),
    ):
        response = post(http, {**body, **extra})
        assert response.status_code == 400 and response.json()["error"]["param"] == param
    for latency in ("99999999999999999999", "-1", "soon"):
        response = post(http, body, **{"X-Scripted-Latency-Ms": latency})
        assert response.status_code == 400 and response.json()["error"]["param"] == "X-Scripted-Latency-Ms"


def test_structured_answers_fit_the_schema(client: OpenAI) -> None:
    schema: dict[str, Any] = {
        "type": "object", "properties": {"city": {"type": "string"}, "n": {"type": "integer", "minimum": 2}}
    }  # fmt: skip
    schema |= {"required": ["city", "n"], "additionalProperties": False}
    reply = client.chat.completions.create(
        model="structured",
        messages=[{"role": "user", "content": "Where?"}],
        response_format={"type": "json_schema", "json_schema": {"name": "place", "schema": schema}},
    )
    assert json.loads(reply.choices[0].message.content or "") == {"city": "Where?", "n": 2}


def test_a_listing_with_impossible_sizes_is_no_crash(http: TestClient) -> None:
    listing = json.dumps([{"name": "a.log", "size": 1e308 * 10}, {"name": "b.log", "size": 5}])
    body: Any = {"model": "solve", "messages": [{"role": "user", "content": "Which file is the largest?"}]}
    body["messages"] += exchange("c1", "list_files", listing.replace("Infinity", "1e999"))
    response = post(http, body)
    assert response.status_code == 200 and "b.log" in response.json()["choices"][0]["message"]["content"]


@pytest.mark.slow
def test_a_client_that_leaves_is_counted_apart_and_a_request_cut_at_shutdown_gets_an_openai_error(
    tmp_path: Path,
) -> None:
    log = tmp_path / "server.log"
    server = ServerProcess("serve.scripted", log=log).start()
    body = {"model": "solve", "messages": [{"role": "user", "content": "How many files are there?"}]}
    slow = {"X-Scripted-Latency-Ms": "20000"}
    try:
        for stream in (False, True):
            with pytest.raises(httpx.ReadTimeout):
                httpx.post(f"{server.base_url}/chat/completions", json={**body, "stream": stream}, headers=slow,
                           timeout=0.5)  # fmt: skip
        time.sleep(0.5)
        metrics = httpx.get(f"{server.url}/metrics").text
        assert 'requests_total{path="/v1/chat/completions",status="499"} 2.0' in metrics
        assert 'status="500"' not in metrics
        with ThreadPoolExecutor(1) as pool:
            cut = pool.submit(httpx.post, f"{server.base_url}/chat/completions", json=body, headers=slow, timeout=60)
            time.sleep(0.5)
            assert server.process is not None
            server.process.send_signal(signal.SIGINT)
            response = cut.result()
        assert response.status_code == 503 and response.json()["error"]["code"] == "unavailable"
    finally:
        server.stop()
    assert "Traceback" not in log.read_text()

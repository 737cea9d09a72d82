"""Generated requests against both real servers: nothing a client sends may produce a 5xx, a crash or a hang.

Bodies are built by hypothesis from the request's own vocabulary (roles, content parts, tools with hostile
names and schemas, tool_choice, response_format, stop, limits) plus raw bytes. Each server is a real
process on loopback; after every request it must still answer /health.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import Server

HOSTILE = st.text(st.characters(min_codepoint=0, max_codepoint=0x10FFFF, exclude_categories=()), max_size=12)
TEXT = st.one_of(st.text(max_size=40), HOSTILE)  # now and then lone surrogates, controls, quotes
NAMES = st.one_of(st.from_regex(r"[a-zA-Z0-9_-]{1,12}", fullmatch=True), TEXT)
SCHEMA_KEYS = ["type", "properties", "required", "enum", "items", "$ref", "pattern", "anyOf", "const", "minimum"]
TYPES = st.sampled_from(["object", "string", "integer", "number", "boolean", "array", "null", "banana"])
LEAF = st.one_of(TYPES, TEXT, st.integers(), st.floats(allow_nan=False), st.booleans(), st.none(), st.just([]))
SCHEMAS = st.recursive(
    LEAF,
    lambda inner: st.one_of(
        st.dictionaries(st.one_of(st.sampled_from(SCHEMA_KEYS), TEXT), inner, max_size=4), st.lists(inner, max_size=3)
    ),
    max_leaves=12,
)
PARAMETERS = st.one_of(
    st.fixed_dictionaries({"type": st.just("object"), "properties": st.dictionaries(NAMES, SCHEMAS, max_size=3)}),
    st.dictionaries(st.sampled_from(SCHEMA_KEYS), SCHEMAS, max_size=3),
)
TOOLS = st.lists(
    st.fixed_dictionaries(
        {"type": st.just("function"), "function": st.fixed_dictionaries({"name": NAMES, "parameters": PARAMETERS})}
    ),
    max_size=3,
)
CONTENT = st.one_of(TEXT, st.lists(st.fixed_dictionaries({"type": st.sampled_from(["text", "image"]), "text": TEXT})))
MESSAGE = st.fixed_dictionaries(
    {"role": st.sampled_from(["system", "developer", "user", "assistant", "tool", "wizard"]), "content": CONTENT},
    optional={"tool_call_id": TEXT, "tool_calls": st.just([])},
)
CHOICE = st.one_of(
    st.sampled_from(["auto", "none", "required", "sometimes"]),
    st.fixed_dictionaries({"type": st.just("function"), "function": st.fixed_dictionaries({"name": NAMES})}),
)
FORMAT = st.one_of(
    st.fixed_dictionaries({"type": st.sampled_from(["text", "json_object", "xml"])}),
    st.fixed_dictionaries(
        {
            "type": st.just("json_schema"),
            "json_schema": st.fixed_dictionaries({"name": TEXT, "schema": PARAMETERS}),
        }
    ),
)


def body(model: str) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {
            "model": st.one_of(st.just(model), TEXT),
            "messages": st.lists(MESSAGE, max_size=3),
            "max_tokens": st.integers(-2, 4),  # always bounded: a fuzz case must not ramble to the context's end
        },
        optional={
            "tools": TOOLS,
            "tool_choice": CHOICE,
            "response_format": FORMAT,
            "stop": st.one_of(TEXT, st.lists(TEXT, max_size=20)),
            "n": st.integers(-1, 3),
            "logprobs": st.booleans(),
            "top_logprobs": st.integers(-1, 30),
            "temperature": st.one_of(st.floats(-1, 3), st.text(max_size=3)),
            "stream": st.booleans(),
            "parallel_tool_calls": st.booleans(),
            "grammar": st.one_of(TEXT, st.just("root ::= [a-z]+")),
        },
    )


def encode(value: Any) -> bytes:
    return json.dumps(value).encode()  # ensure_ascii: lone surrogates travel as \ud800 escapes, as clients send them


def check(server: Server, http: httpx.Client, payload: bytes) -> None:
    response = http.post(f"{server.base_url}/chat/completions", content=payload, timeout=120)
    assert response.status_code < 500, response.text[:500]
    if response.status_code >= 400:
        assert set(response.json()["error"]) >= {"message", "type"}
    assert server.process is not None and server.process.poll() is None, "the server died"
    assert http.get(f"{server.url}/health", timeout=10).status_code == 200


def fuzz(server: Server, model: str, examples: int) -> None:
    with httpx.Client() as http:

        @settings(max_examples=examples, deadline=None, suppress_health_check=list(HealthCheck), database=None)
        @given(st.one_of(body(model).map(encode), st.binary(max_size=200)))
        def one(payload: bytes) -> None:
            check(server, http, payload)

        one()


@pytest.fixture(scope="module")
def llama() -> Iterator[Server]:
    server = Server("serve.llama", "--model", "smollm2-135m-instruct", "--ctx", "1024", "--parallel", "2", "--quiet")
    yield server
    server.stop()


def test_the_scripted_server_takes_anything(scripted: Server) -> None:
    fuzz(scripted, "solve", examples=200)


def test_the_llama_server_takes_anything(llama: Server) -> None:
    fuzz(llama, "smollm2-135m-instruct", examples=80)


def test_a_quoted_name_or_an_empty_enum_with_a_forced_call_is_a_400_not_a_segfault(llama: Server) -> None:
    base: Any = {"model": "smollm2-135m-instruct", "messages": [{"role": "user", "content": "go"}], "max_tokens": 4}
    schemas = [
        {"type": "object", "properties": {'a"b': {"type": "string"}}, "required": ['a"b']},
        {"type": "object", "properties": {"mode": {"enum": []}}, "required": ["mode"]},
        {"type": "object", "properties": {"mode": {"enum": ['x"y']}}, "required": ["mode"]},
    ]
    with httpx.Client() as http:
        for schema in schemas:
            tools = [{"type": "function", "function": {"name": "f", "parameters": schema}}]
            response = http.post(
                f"{llama.base_url}/chat/completions", json={**base, "tools": tools, "tool_choice": "required"}
            )
            assert response.status_code in (200, 400), response.text
        quoted = [{"type": "function", "function": {"name": 'f"', "parameters": {"type": "object"}}}]
        assert http.post(f"{llama.base_url}/chat/completions", json={**base, "tools": quoted}).status_code == 400
    assert llama.process is not None and llama.process.poll() is None

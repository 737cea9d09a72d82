"""Generated requests against both real servers: nothing a client sends may produce a 5xx, a crash or a hang.

Bodies are built by hypothesis from the request's own vocabulary (roles, content parts, tools with hostile
names and schemas, tool_choice, response_format, stop, limits) plus raw bytes. Each server is a real
process on loopback; after every request it must still answer /health.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from models.registry import SMOLLM2
from tests.conftest import AppServer, Server, llama_threads
from tests.serve.schemas import nested_schema, ref_chain

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


def check(server: AppServer | Server, http: httpx.Client, payload: bytes) -> None:
    response = http.post(f"{server.base_url}/chat/completions", content=payload, timeout=120)
    assert response.status_code < 500, response.text[:500]
    if response.status_code >= 400:
        assert set(response.json()["error"]) >= {"message", "type"}
    assert server.running, "the server died"
    assert http.get(f"{server.url}/health", timeout=10).status_code == 200


def fuzz(server: AppServer | Server, model: str, examples: int) -> None:
    with httpx.Client() as http:

        @settings(max_examples=examples, deadline=None, suppress_health_check=list(HealthCheck), database=None)
        @given(st.one_of(body(model).map(encode), st.binary(max_size=200)))
        def one(payload: bytes) -> None:
            check(server, http, payload)

        one()


def test_the_scripted_server_takes_anything(scripted: AppServer) -> None:
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
    assert llama.running


# --- grammars, schemas, seeds and sampling at their edges --------------------------------------------------
def gbnf_chain(rules: int) -> str:
    return "root ::= r0\n" + "".join(f'r{i} ::= "a" r{i + 1}\n' for i in range(rules)) + f'r{rules} ::= "b"\n'


def gbnf_cycle(rules: int) -> str:
    return "root ::= r0\n" + "".join(f'r{i} ::= "a" r{i + 1}\n' for i in range(rules)) + f'r{rules} ::= "b" | r0\n'


def gbnf_alternatives(rules: int) -> str:
    return "root ::= r0\n" + "".join(f'r{i} ::= "a" | r{i + 1}\n' for i in range(rules)) + f'r{rules} ::= "b"\n'


def gbnf_nested(levels: int) -> str:
    return "root ::= " + '("a" | ' * levels + '"b"' + ")" * levels + "\n"


def gbnf_nested_chain(rules: int, levels: int) -> str:
    body = "".join(f'r{i} ::= "a" ' + '("b" ' * levels + f"r{i + 1}" + ")" * levels + "\n" for i in range(rules))
    return f'root ::= r0\n{body}r{rules} ::= "z"\n'


RULES = st.one_of(st.integers(1, 1024), st.integers(1025, 6000))  # within the rule bound, and past it
GRAMMARS = st.one_of(  # up to and past the 100,000-character field limit
    RULES.map(gbnf_chain),
    RULES.map(gbnf_cycle),
    RULES.map(gbnf_alternatives),
    st.one_of(st.integers(1, 100), st.integers(1, 12000)).map(gbnf_nested),
    st.tuples(st.integers(1, 1100), st.integers(1, 12)).map(lambda p: gbnf_nested_chain(*p)),
)


SCHEMAS_AT_EDGES = st.one_of(  # up to and past the 64,000-byte schema limit and the depth limit
    st.tuples(
        st.one_of(st.integers(1, 300), st.integers(1, 2500)), st.sampled_from(["ref", "object", "array", "any"])
    ).map(lambda p: ref_chain(*p)),
    st.integers(1, 40).map(nested_schema),
)
FORCED = st.sampled_from(["auto", "required", "named"])
CONSTRAINTS: dict[str, st.SearchStrategy[dict[str, Any]]] = {
    "response_format": SCHEMAS_AT_EDGES.map(
        lambda s: {"response_format": {"type": "json_schema", "json_schema": {"name": "s", "schema": s}}}
    ),
    "tools": st.tuples(SCHEMAS_AT_EDGES, FORCED).map(
        lambda p: {
            "tools": [{"type": "function", "function": {"name": "f", "parameters": p[0]}}],
            "tool_choice": {"type": "function", "function": {"name": "f"}} if p[1] == "named" else p[1],
        }
    ),
    "grammar": GRAMMARS.map(lambda g: {"grammar": g}),
    "none": st.just({}),
}
EDGE_INTEGERS = st.one_of(st.sampled_from([-1, 0, 1, 2**31, 2**63 - 1, 2**63, 2**64, -2, -(2**63)]), st.integers())
SAMPLING = st.fixed_dictionaries(  # mostly values a server must take, now and then one it must refuse
    {},
    optional={
        "seed": EDGE_INTEGERS,
        "temperature": st.sampled_from([0, -0.0, 1e-300, 0.5, 1, 2, 2.0000001]),
        "top_p": st.sampled_from([1, 1e-300, 0.5, 1.0000001]),
        "top_logprobs": st.sampled_from([0, 5, 20, 21]),
        "logprobs": st.booleans(),
        "stop": st.sampled_from([["a"], "\n", [""] * 16, ["x"] * 17]),
        "n": st.sampled_from([1, 2]),
        "max_completion_tokens": st.sampled_from([1, 5, 0]),
    },
)
SHORT = st.sampled_from([6, 1, 3, 0])  # max_tokens; 2**63 comes only with greedy decoding, below


@st.composite
def edge_bodies(draw: st.DrawFn) -> dict[str, Any]:
    body: dict[str, Any] = {"model": "smollm2-135m-instruct", "messages": [{"role": "user", "content": "Say hi."}]}
    body |= draw(CONSTRAINTS[draw(st.sampled_from(sorted(CONSTRAINTS)))]) | draw(SAMPLING)
    huge = draw(st.booleans()) and not body.get("temperature")
    body["max_tokens"] = draw(st.sampled_from([2**31, 2**63 - 1, 2**63])) if huge else draw(SHORT)
    body["ignore_eos"] = draw(st.booleans()) and not huge
    if body.get("top_logprobs"):
        body["logprobs"] = True
    return body


def greedy(server: Server, http: httpx.Client) -> dict[str, Any]:
    body = {"model": "smollm2-135m-instruct", "messages": QUESTION_FOR_REPLAY, "max_tokens": 24, "logprobs": True}
    response = http.post(f"{server.base_url}/chat/completions", json=body, timeout=120)
    assert response.status_code == 200, response.text
    choice = response.json()["choices"][0]
    return {"message": choice["message"], "logprobs": choice["logprobs"]}


QUESTION_FOR_REPLAY = [{"role": "user", "content": "Name three colours."}]


@pytest.fixture(scope="module")
def short_window() -> Iterator[Server]:
    """A server whose conversations hold 256 tokens: a reply allowed 2**63 tokens under a grammar with no end
    runs to the end of the window, which takes a 1,024-token window half a minute on one thread."""
    server = Server("serve.llama", "--model", SMOLLM2.name, "--threads", llama_threads(), "--ctx", "256",
                    "--parallel", "2", "--quiet")  # fmt: skip
    yield server
    server.stop()


@pytest.mark.slow
def test_grammars_schemas_seeds_and_sampling_at_their_edges_leave_the_server_as_it_was(short_window: Server) -> None:
    with httpx.Client() as http:
        fresh = greedy(short_window, http)
        failed_before = http.get(f"{short_window.url}/healthz").json()["failed_requests"]

        @settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck), database=None)
        @given(edge_bodies())
        def one(body: dict[str, Any]) -> None:
            check(short_window, http, json.dumps(body).encode())

        one()
        assert greedy(short_window, http) == fresh
        assert http.get(f"{short_window.url}/healthz").json()["failed_requests"] == failed_before


def test_a_grammar_compiles_while_the_server_answers_others(llama: Server) -> None:
    """Compiling happens off the event loop: /health answers while a large grammar is being compiled."""
    with httpx.Client() as http:
        body = {"model": "smollm2-135m-instruct", "messages": [{"role": "user", "content": "go"}], "max_tokens": 2}
        body["grammar"] = gbnf_chain(1000)  # converting it alone takes about a second
        with ThreadPoolExecutor(1) as pool:
            pending = pool.submit(http.post, f"{llama.base_url}/chat/completions", json=body, timeout=120)
            answered_meanwhile = 0
            while not pending.done():
                answered_meanwhile += http.get(f"{llama.url}/health", timeout=120).status_code == 200
                time.sleep(0.02)
            assert pending.result().status_code == 200
    assert answered_meanwhile >= 3


def test_a_negative_seed_is_a_400_or_a_random_seed_and_never_wedges_a_slot(llama: Server) -> None:
    base: Any = {"model": "smollm2-135m-instruct", "messages": QUESTION_FOR_REPLAY, "max_tokens": 4}
    with httpx.Client(timeout=60) as http:
        fresh = greedy(llama, http)
        for _ in range(5):  # more than --parallel
            refused = http.post(f"{llama.base_url}/chat/completions", json={**base, "seed": -(10**30)})
            assert refused.status_code == 400 and refused.json()["error"]["param"] == "seed"
            random = http.post(f"{llama.base_url}/chat/completions", json={**base, "seed": -1, "temperature": 1})
            assert random.status_code == 200
        assert greedy(llama, http) == fresh
        assert http.get(f"{llama.url}/health").json() == {"status": "ok"}

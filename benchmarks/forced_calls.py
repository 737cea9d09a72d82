"""Forced calls: with tool_choice `required` or a named function, how often the reply is a call that parses,
validates against the schema the client sent, and fits max_tokens; ours beside llama-server (`--jinja`).

The schemas are generated from a fixed seed (strict ones with `additionalProperties: false`, and ones
silent about other keys, as raw openai, litellm and langchain users send them), so every peer gets the
same requests. A measurement, not a timing: it is in `make bench` because it needs the peer.
"""

from __future__ import annotations

import json
import os
import random
from contextlib import ExitStack
from typing import Any

import httpx
import jsonschema

from benchmarks.serving import LlamaServer, Peer
from evals.servers import ServerProcess
from models.registry import QWEN_CODER_05, QWEN_CODER_15, SMOLLM2, model_spec
from models.weights import locate

SCHEMAS, SEED = 30, 20261201
VALUES: list[dict[str, Any]] = [
    {"type": "string"},
    {"type": "integer"},
    {"type": "number"},
    {"type": "boolean"},
    {"type": "array", "items": {"type": "string"}},
    {"type": "object", "properties": {"n": {"type": "integer"}}},
    {"enum": ["alpha", "beta gamma"]},
]
WORDS = ["path", "query", "limit", "mode", "target", "depth", "tags", "note", "flag", "size"]
QUESTION = [{"role": "user", "content": "Look at the project and do what is needed."}]
BARE = {"type": "object", "properties": {}}


def schemas(seed: int = SEED) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    made = []
    for index in range(SCHEMAS):
        names = rng.sample(WORDS, rng.randint(0, 4))
        schema: dict[str, Any] = {"type": "object", "properties": {n: rng.choice(VALUES) for n in names}}
        schema["required"] = [n for n in names if rng.random() < 0.5]
        if index % 2:
            schema["additionalProperties"] = False
        made.append(schema)
    return made


def tool(name: str, description: str, parameters: dict[str, Any]) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "description": description, "parameters": parameters}}


def requests() -> list[tuple[dict[str, Any], dict[str, Any], int]]:
    """(body, schema, max_tokens) for every schema, once required and once named."""
    made = []
    for index, schema in enumerate(schemas()):
        tools = [tool("act", "Act on the project.", schema), tool("list_files", "List the files.", BARE)]
        max_tokens = (64, 96, 160)[index % 3]
        for choice in ("required", {"type": "function", "function": {"name": "act"}}):
            body = {"messages": QUESTION, "tools": tools, "tool_choice": choice, "max_tokens": max_tokens}
            made.append((body, schema, max_tokens))
    return made


def valid_call(reply: dict[str, Any], schema: dict[str, Any], max_tokens: int, named: bool) -> bool:
    choice = reply["choices"][0]
    calls = choice["message"].get("tool_calls") or []
    if not calls or reply["usage"]["completion_tokens"] > max_tokens:
        return False
    for call in calls:
        name = call["function"]["name"]
        if name not in ("act", "list_files") or (named and name != "act"):
            return False
        try:
            arguments = json.loads(call["function"]["arguments"])
            jsonschema.validate(arguments, schema if name == "act" else BARE)
        except (ValueError, jsonschema.ValidationError):
            return False
    return True


def rate(peer: Peer) -> tuple[int, int]:
    good = total = 0
    with httpx.Client(timeout=600) as http:
        for body, schema, max_tokens in requests():
            response = http.post(f"{peer.base_url}/chat/completions", json={"model": peer.model, **body})
            total += 1
            good += response.status_code == 200 and valid_call(
                response.json(), schema, max_tokens, isinstance(body["tool_choice"], dict)
            )
    return good, total


def main(models: list[str] | None = None) -> list[str]:
    names = models or [SMOLLM2.name, QWEN_CODER_05.name, QWEN_CODER_15.name]
    lines = [f"forced calls: {SCHEMAS} generated schemas x (required, named); a call that parses, validates, fits"]
    binary = os.environ.get("LLAMA_SERVER")
    for name in names:
        gguf = locate(model_spec(name))
        with ExitStack() as stack:
            ours = stack.enter_context(ServerProcess("serve.llama", "--model", name, "--quiet"))
            sides = [Peer("ours", ours.base_url, name)]
            if binary:
                sides.append(stack.enter_context(LlamaServer(binary, gguf)))
            cells = []
            for peer in sides:
                good, total = rate(peer)
                cells.append(f"{peer.name} {good}/{total} ({good / total:.0%})")
        lines.append(f"  {name:<28} " + "   ".join(cells))
    if not binary:
        lines.append("  (set LLAMA_SERVER=/path/to/llama-server to measure llama-server beside ours)")
    return lines

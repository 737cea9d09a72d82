"""Checks on a request that pydantic's shapes cannot express, made before anything runs.

Tool names follow OpenAI's rule; tool schemas (and a json_schema response format) must be JSON Schema,
within limits on depth and size, with only local `$ref`s. Each failure is a 400 naming the tool and the problem.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Iterator, Mapping
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from serve.errors import InvalidRequest
from wire.types import TOOL_NAME, ChatCompletionRequest, choice_mode, choice_names

MAX_TOOLS = 128
MAX_SCHEMA_DEPTH = 32
MAX_SCHEMA_BYTES = 64_000
MAX_REQUEST_SCHEMA_BYTES = 512_000  # all of a request's schemas together: each costs checking and compiling
MAX_BODY_DEPTH = 128


def depth(value: object, limit: int) -> int:
    """The nesting depth of a JSON value, counted without recursion (stops counting past `limit`)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        deepest = max(deepest, level)
        if deepest > limit:
            return deepest
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else ()
        stack.extend((child, level + 1) for child in children)
    return deepest


def refs(value: object) -> Iterator[str]:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if isinstance(item.get("$ref"), str):
                yield item["$ref"]
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def resolved(schema: Mapping[str, Any], ref: str) -> object:
    """What a local `$ref` (`#/$defs/a`, JSON Pointer escapes included) points at; None when nothing is there."""
    node: object = schema
    for part in ref.removeprefix("#").split("/")[1:]:
        key = part.replace("~1", "/").replace("~0", "~")
        if isinstance(node, Mapping):
            node = node.get(key)
        elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
            node = node[int(key)]
        else:
            return None
    return node


def endless(schema: Mapping[str, Any], ref: str) -> bool:
    """Whether following `ref` leads only to more references, back to one already followed: no value can be
    written for such a schema (a grammar for it never ends, or never begins)."""
    seen: set[str] = set()
    while ref not in seen:
        seen.add(ref)
        node = resolved(schema, ref)
        if not isinstance(node, Mapping) or not isinstance(node.get("$ref"), str):
            return False
        others = set(node) - {"$ref", "description", "title", "$comment"}
        if others:
            return False  # the reference sits beside constraints of its own; a value may still be possible
        ref = node["$ref"]
    return True


MAX_CHECK_STEPS = 200_000


class Ends:
    """Which parts of a schema some value of finite size fits, found as a grammar's productive symbols are: a
    reference is productive once its target is, iterated to a fixpoint, so the work is bounded by the number
    of references times the schema's size (and by `MAX_CHECK_STEPS`), never exponential in how they nest.

    What a node demands must itself be able to end: a required property, a non-empty array's items, every
    `allOf` member, one `anyOf`/`oneOf` member, its reference. A node of another kind is taken to end.
    """

    def __init__(self, schema: Mapping[str, Any], where: str, param: str) -> None:
        self.schema, self.where, self.param, self.steps = schema, where, param, 0
        self.productive: set[str] = set()

    def fits(self, node: object) -> bool:
        self.steps += 1
        if self.steps > MAX_CHECK_STEPS:
            raise InvalidRequest(f"{self.where}: the schema's references are too many to check", param=self.param)
        if node is False:
            return False
        if not isinstance(node, Mapping):
            return True
        ref = node.get("$ref")
        demanded: list[object] = []
        if isinstance(node.get("allOf"), list):
            demanded.extend(node["allOf"])
        properties: Mapping[str, object] = node["properties"] if isinstance(node.get("properties"), Mapping) else {}
        required: list[object] = node["required"] if isinstance(node.get("required"), list) else []
        fallback = node.get("additionalProperties", True)
        demanded.extend(properties.get(name, fallback) for name in required if isinstance(name, str))
        minimum = node.get("minItems", 0)
        if isinstance(minimum, int) and minimum > 0:
            demanded.append(node.get("items", True))
        choices = [node[key] for key in ("anyOf", "oneOf") if isinstance(node.get(key), list) and node[key]]
        return (
            (not isinstance(ref, str) or ref in self.productive)
            and all(self.fits(part) for part in demanded)
            and all(any(self.fits(option) for option in options) for options in choices)
        )

    def __call__(self, references: set[str]) -> bool:
        """Whether a value of finite size fits the whole schema. A reference is looked at again only when one
        its target names has just become productive."""
        targets = {ref: resolved(self.schema, ref) for ref in references}
        waiting: dict[str, set[str]] = {ref: set() for ref in references}
        for ref, target in targets.items():
            for named in set(refs(target)) & references:
                waiting[named].add(ref)
        pending = sorted(references)
        while pending:
            ref = pending.pop()
            if ref not in self.productive and self.fits(targets[ref]):
                self.productive.add(ref)
                pending.extend(waiting[ref] - self.productive)
        return self.fits(self.schema)


def check_references(schema: Mapping[str, Any], references: set[str], where: str, param: str) -> None:
    for ref in sorted(references):
        if not ref.startswith("#"):
            raise InvalidRequest(
                f"{where}: $ref {ref!r} is not local; only '#/...' references are allowed", param=param
            )
        if resolved(schema, ref) is None:
            raise InvalidRequest(f"{where}: $ref {ref!r} points at nothing in the schema", param=param)
        if endless(schema, ref):
            raise InvalidRequest(f"{where}: $ref {ref!r} refers to itself without end", param=param)


class SchemaChecks:
    """The schema check, remembering the schemas that passed: an agent sends the same tools on every turn, and
    checking a schema against JSON Schema's meta-schema takes milliseconds (most of a scripted reply's time).

    A schema is usable for validation and for a grammar when it is JSON Schema, bounded, with local references
    only. The memory holds the text of the last `size` schemas that passed; a failure is never remembered.
    """

    def __init__(self, size: int = 256) -> None:
        self.size = size
        self.passed: OrderedDict[str, None] = OrderedDict()
        self.lock = threading.Lock()  # requests are checked on worker threads

    def __call__(self, schema: Mapping[str, Any], where: str, param: str) -> None:
        if depth(schema, MAX_SCHEMA_DEPTH) > MAX_SCHEMA_DEPTH:
            raise InvalidRequest(f"{where}: the schema is nested deeper than {MAX_SCHEMA_DEPTH} levels", param=param)
        text = json.dumps(schema)
        if len(text) > MAX_SCHEMA_BYTES:
            raise InvalidRequest(f"{where}: the schema is larger than {MAX_SCHEMA_BYTES:,} bytes", param=param)
        with self.lock:
            if text in self.passed:
                self.passed.move_to_end(text)
                return
        references = set(refs(schema))
        check_references(schema, references, where, param)
        if not Ends(schema, where, param)(references):
            raise InvalidRequest(f"{where}: no value of finite size fits the schema (it requires itself)", param=param)
        try:
            Draft202012Validator.check_schema(dict(schema))
        except SchemaError as exc:
            raise InvalidRequest(f"{where}: not a valid JSON Schema: {exc.message}", param=param) from exc
        except RecursionError as exc:
            raise InvalidRequest(f"{where}: the schema refers to itself without end", param=param) from exc
        with self.lock:
            self.passed[text] = None
            if len(self.passed) > self.size:
                self.passed.popitem(last=False)


def check_tools(request: ChatCompletionRequest, check_schema: SchemaChecks) -> None:
    tools = request.tools or []
    if len(tools) > MAX_TOOLS:
        raise InvalidRequest(f"at most {MAX_TOOLS} tools may be offered", param="tools")
    seen: set[str] = set()
    for index, tool in enumerate(tools):
        name = tool["function"]["name"]
        param = f"tools[{index}].function"
        if not TOOL_NAME.match(name):
            raise InvalidRequest(
                f"tools[{index}]: invalid function name {name!r}: use 1-64 letters, digits, '_' or '-'",
                param=f"{param}.name",
            )
        if name in seen:
            raise InvalidRequest(f"tools[{index}]: the function name {name!r} is used twice", param=f"{param}.name")
        seen.add(name)
        parameters = tool["function"].get("parameters")
        if parameters is not None:
            if parameters.get("type", "object") != "object":
                raise InvalidRequest(f"tool {name!r}: parameters must describe an object", param=f"{param}.parameters")
            check_schema(parameters, f"tool {name!r}", f"{param}.parameters")


def check_tool_choice(request: ChatCompletionRequest) -> None:
    choice = request.tool_choice
    for name in choice_names(choice):
        if name not in request.tool_names():
            raise InvalidRequest(f"tool_choice names {name!r}, which is not among the tools", param="tool_choice")
    if choice_mode(choice) == "required" and not request.tools:
        raise InvalidRequest("tool_choice asks for a tool call, but no tools are offered", param="tool_choice")


def check_tool_parameters(request: ChatCompletionRequest, check_schema: SchemaChecks) -> None:
    for name, schema in (request.tool_parameters or {}).items():
        param = f"tool_parameters.{name}" if TOOL_NAME.match(name) else "tool_parameters"
        if name not in request.tool_names():
            raise InvalidRequest(f"tool_parameters names {name!r}, which is not among the tools", param=param)
        if schema.get("type", "object") != "object":
            raise InvalidRequest(f"tool_parameters for {name!r} must describe an object", param=param)
        check_schema(schema, f"tool_parameters for {name!r}", param)


def check_distinct_calls(request: ChatCompletionRequest) -> None:
    for name in request.distinct_calls or []:
        if name not in request.tool_names():
            raise InvalidRequest(f"distinct_calls names {name!r}, which is not among the tools", param="distinct_calls")


def check_response_format(request: ChatCompletionRequest, check_schema: SchemaChecks) -> None:
    form = request.response_format
    if form is None or form.type != "json_schema":
        return
    if form.json_schema is None or "schema" not in form.json_schema:
        raise InvalidRequest("response_format json_schema needs a json_schema.schema", param="response_format")
    check_schema(form.json_schema["schema"], "response_format", "response_format.json_schema.schema")


def schemas_of(request: ChatCompletionRequest) -> list[object]:
    """Every JSON schema a request holds: its tools' parameters, its `tool_parameters`, its response format's."""
    found: list[object] = [t["function"].get("parameters") for t in request.tools or []]
    found += list((request.tool_parameters or {}).values())
    if request.response_format is not None and request.response_format.json_schema is not None:
        found.append(request.response_format.json_schema.get("schema"))
    return [schema for schema in found if schema is not None]


def check_schema_total(request: ChatCompletionRequest) -> None:
    """A cheap bound before any schema is checked or compiled (each costs milliseconds to seconds)."""
    total = 0
    for schema in schemas_of(request):
        total += len(json.dumps(schema))
        if total > MAX_REQUEST_SCHEMA_BYTES:
            raise InvalidRequest(
                f"the request's schemas (tools, tool_parameters, response_format) are over "
                f"{MAX_REQUEST_SCHEMA_BYTES:,} bytes together, this server's limit",
                param="tools" if request.tools else None,
            )


def has_schemas(request: ChatCompletionRequest) -> bool:
    return bool(request.tools or request.tool_parameters or request.response_format)


def check_request(request: ChatCompletionRequest, check_schema: SchemaChecks) -> None:
    """Everything both servers refuse the same way. (Schema checks are CPU work: a server runs this off its
    event loop for a request that holds schemas.)"""
    if request.n not in (None, 1):
        raise InvalidRequest("n must be 1: this server returns one choice per request", param="n")
    check_schema_total(request)
    check_tools(request, check_schema)
    check_tool_choice(request)
    check_tool_parameters(request, check_schema)
    check_distinct_calls(request)
    check_response_format(request, check_schema)

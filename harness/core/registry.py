"""The tool registry: names checked, schemas checked, arguments validated before any tool runs."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from harness.core.protocols import Tool
from harness.errors import RegistryError
from harness.prompts import ERROR, unknown_tool
from wire.text import scrubbed
from wire.types import TOOL_NAME, ToolCall, ToolDefinition

NO_ARGUMENTS: dict[str, Any] = {"type": "object", "properties": {}, "additionalProperties": False}


def approval_needed(tool: Tool, args: dict[str, Any]) -> bool:
    rule = tool.needs_approval
    return rule(args) if callable(rule) else rule


@dataclass(frozen=True)
class Invalid:
    """Why a call's arguments cannot be used; the message is written for the model."""

    message: str


class Registry:
    """The tools a run may call, by name."""

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        self._validators: dict[str, Draft202012Validator] = {}
        for tool in tools:
            self.add(tool)

    def add(self, tool: Tool) -> None:
        if not TOOL_NAME.match(tool.name):
            raise RegistryError(f"invalid tool name {tool.name!r}: use 1-64 letters, digits, '_' or '-'")
        if tool.name in self._tools:
            raise RegistryError(f"duplicate tool name {tool.name!r}")
        try:
            Draft202012Validator.check_schema(dict(tool.parameters))
        except SchemaError as exc:
            raise RegistryError(f"tool {tool.name!r} has an invalid parameters schema: {exc.message}") from exc
        self._tools[tool.name] = tool
        self._validators[tool.name] = Draft202012Validator(dict(tool.parameters))

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)

    def names(self) -> list[str]:
        return list(self._tools)

    def definitions(self) -> list[ToolDefinition]:
        return [
            {
                "type": "function",
                "function": {"name": t.name, "description": t.description, "parameters": dict(t.parameters)},
            }
            for t in self
        ]

    def screen(self, call: ToolCall) -> str | dict[str, Any]:
        """A call's validated arguments, or the error its slot gets instead (an unknown tool, bad arguments)."""
        name = call["function"]["name"]
        tool = self.get(name)
        if tool is None:
            return unknown_tool(name, self.names())
        args = self.arguments(tool, call["function"]["arguments"])
        return f"{ERROR}{args.message}" if isinstance(args, Invalid) else args

    def arguments(self, tool: Tool, raw: str) -> dict[str, Any] | Invalid:
        """Parse and validate a call's arguments string against the tool's JSON Schema."""
        try:
            args = scrubbed(json.loads(raw)) if raw.strip() else {}
        except json.JSONDecodeError as exc:
            return Invalid(f"the arguments of {tool.name} are not valid JSON ({exc.msg}); send a JSON object")
        except RecursionError:
            return Invalid(f"the arguments of {tool.name} are nested too deeply; send a flat JSON object")
        if not isinstance(args, dict):
            return Invalid(f"the arguments of {tool.name} must be a JSON object")
        errors = sorted(self._validators[tool.name].iter_errors(args), key=lambda e: list(e.path))
        if errors:
            where = "/".join(str(p) for p in errors[0].path) or "arguments"
            return Invalid(f"invalid arguments for {tool.name}: {where}: {errors[0].message}")
        return args

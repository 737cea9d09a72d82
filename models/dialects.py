"""The Hermes tool-call dialect Qwen speaks: tools in a <tools> block, calls in <tool_call> JSON blocks.

For a template that renders tools itself (Qwen's), messages are only reshaped (arguments as JSON objects,
never double-encoded strings). For a template without tool support (SmolLM2's), the same Hermes text is
written by us: the tools go into the system message, past calls into the assistant's text, results into
a user turn of <tool_response> blocks, exactly as Qwen's template would render them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

OPEN, CLOSE = "<tool_call>", "</tool_call>"
BLOCK = re.compile(re.escape(OPEN) + r"(.*?)" + re.escape(CLOSE), re.DOTALL)
DEFAULT_SYSTEM = "You are a helpful assistant."
PREAMBLE = (
    "\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
    "You are provided with function signatures within <tools></tools> XML tags:\n<tools>"
)
INSTRUCTIONS = (
    "\n</tools>\n\nFor each function call, return a json object with function name and arguments within "
    "<tool_call></tool_call> XML tags:\n"
    '<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>'
)


@dataclass(frozen=True)
class ParsedCall:
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class Parsed:
    content: str | None
    calls: list[ParsedCall] = field(default_factory=list)
    malformed: int = 0


def tools_block(tools: Sequence[Mapping[str, Any]]) -> str:
    return PREAMBLE + "".join("\n" + json.dumps(tool, ensure_ascii=False) for tool in tools) + INSTRUCTIONS


def call_text(name: str, arguments: object) -> str:
    return f'{OPEN}\n{{"name": "{name}", "arguments": {json.dumps(arguments, ensure_ascii=False)}}}\n{CLOSE}'


def arguments_object(arguments: str) -> object:
    """Past arguments as the JSON object they encode, so a template's `tojson` does not encode them twice."""
    try:
        return json.loads(arguments) if arguments.strip() else {}
    except json.JSONDecodeError:
        return arguments


def native_messages(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Messages for a template that renders tools and tool calls itself."""
    shaped = []
    for message in messages:
        item = {**message, "content": message.get("content") or ""}
        if message.get("tool_calls"):
            item["tool_calls"] = [
                {
                    **call,
                    "function": {
                        "name": call["function"]["name"],
                        "arguments": arguments_object(call["function"]["arguments"]),
                    },
                }
                for call in message["tool_calls"]
            ]
        shaped.append(item)
    return shaped


def written_messages(messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Messages for a template with no tool support: the Hermes text written into plain turns."""
    out: list[dict[str, Any]] = []
    for message in messages:
        role, content = message["role"], message.get("content") or ""
        if role == "assistant" and message.get("tool_calls"):
            calls = [
                call_text(c["function"]["name"], arguments_object(c["function"]["arguments"]))
                for c in message["tool_calls"]
            ]
            out.append({"role": "assistant", "content": "\n".join(([content] if content else []) + calls)})
        elif role == "tool":
            response = f"<tool_response>\n{content}\n</tool_response>"
            if out and out[-1].get("tool_results"):
                out[-1]["content"] += "\n" + response
            else:
                out.append({"role": "user", "content": response, "tool_results": True})
        else:
            out.append({"role": role, "content": content})
    if tools:
        if out and out[0]["role"] == "system":
            out[0]["content"] += tools_block(tools)
        else:
            out.insert(0, {"role": "system", "content": DEFAULT_SYSTEM + tools_block(tools)})
    return [{k: v for k, v in m.items() if k != "tool_results"} for m in out]


def parse_block(body: str) -> ParsedCall | None:
    try:
        value = json.loads(body)
    except json.JSONDecodeError:
        return None
    if not isinstance(value, dict) or not isinstance(value.get("name"), str):
        return None
    arguments = value.get("arguments", {})
    if isinstance(arguments, str):  # some models write the arguments as a JSON string
        try:
            arguments = json.loads(arguments)
        except json.JSONDecodeError:
            return None
    return ParsedCall(value["name"], arguments) if isinstance(arguments, dict) else None


def parse(text: str) -> Parsed:
    """Well-formed blocks become calls; a malformed or unclosed block stays in the content and is counted."""
    calls, kept, malformed, last = [], [], 0, 0
    for match in BLOCK.finditer(text):
        call = parse_block(match.group(1).strip())
        kept.append(text[last : match.start()] if call else text[last : match.end()])
        malformed += call is None
        calls += [call] if call else []
        last = match.end()
    tail = text[last:]
    malformed += OPEN in tail
    content = ("".join(kept) + tail).strip()
    return Parsed(content or None, calls, malformed)

"""The Hermes tool-call dialect the Qwen family speaks, with every variant the family really writes.

Rendering: for a template that renders tools itself (Qwen's), messages are only reshaped (arguments as
JSON objects, never double-encoded strings). For a template without tool support (SmolLM2's), the same
Hermes text is written by us: tools in the system message, past calls as <tool_call> blocks, results as
<tool_response> blocks, exactly as Qwen's template would render them.

Parsing: a reply is a tool call if it is (a) one or more <tool_call> blocks (text around them stays
content), (b) one or more bare {"name": ..., "arguments": ...} objects making up the whole reply,
(c) such objects, or a list of them, inside a ```json fence (text before the fence stays content), or
(d) any of these with doubled braces ({{"name": ...}}). Only names of the tools offered count; anything
else stays text, so a model that answers a JSON question with JSON is not turned into a call.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from wire.types import decoded_arguments

OPEN, CLOSE = "<tool_call>", "</tool_call>"
BLOCK = re.compile(re.escape(OPEN) + r"(.*?)" + re.escape(CLOSE), re.DOTALL)
FENCE = re.compile(r"^(?P<before>.*?)```(?:json|JSON)?[ \t]*\n?(?P<body>.*?)```\s*$", re.DOTALL)
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
# How a call can begin, with whitespace removed: at the reply's start, or (fenced) after free text.
BODY_OPENINGS = tuple(f'{bracket}{{{brace}"name":' for bracket in ("", "[") for brace in ("", "{"))
FENCED_OPENINGS = tuple(f"{fence}{body}" for fence in ("```", "```json", "```JSON") for body in BODY_OPENINGS)
ANCHORED_OPENINGS = BODY_OPENINGS + FENCED_OPENINGS
Form = Literal["no", "maybe", "anchored", "tagged", "fenced"]


@dataclass(frozen=True)
class Opening:
    """Whether the reply written so far is a call, and where the text that must be held back begins."""

    form: Form
    at: int


@dataclass(frozen=True)
class ParsedCall:
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class Parsed:
    content: str | None
    calls: list[ParsedCall] = field(default_factory=list)
    malformed: int = 0


# --- rendering ---------------------------------------------------------------------------------------------
def tools_block(tools: Sequence[Mapping[str, Any]]) -> str:
    return PREAMBLE + "".join("\n" + json.dumps(tool, ensure_ascii=False) for tool in tools) + INSTRUCTIONS


def call_text(name: str, arguments: object) -> str:
    return f'{OPEN}\n{{"name": "{name}", "arguments": {json.dumps(arguments, ensure_ascii=False)}}}\n{CLOSE}'


def arguments_object(arguments: str) -> object:
    """Past arguments as the JSON object they encode, so a template's `tojson` does not encode them twice."""
    return decoded_arguments(arguments)


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


# --- recognising a call as it is written ------------------------------------------------------------------
def openings(names: Collection[str] | None, prefixes: tuple[str, ...]) -> tuple[str, ...]:
    """The openings with the tool's name written out: the name is the model's to choose, so a call begins
    only once it has named an offered tool (a JSON answer with a "name" key stays an answer)."""
    if names is None:
        return prefixes
    return tuple(f'{prefix}"{name}"' for prefix in prefixes for name in names)


def opening(text: str, names: Collection[str] | None = None) -> Opening:
    """`anchored`: the reply begins like a call to one of `names`; `tagged`: it opened a <tool_call> block;
    `fenced`: after some text it opened a ```json fence holding a call; `maybe`: from `at` on it could still
    become one (streaming holds that back); `no`: it is text."""
    if OPEN in text:
        return Opening("tagged", text.index(OPEN))
    anchored, fenced = openings(names, ANCHORED_OPENINGS), openings(names, FENCED_OPENINGS)
    squeezed = re.sub(r"\s+", "", text)
    if squeezed.startswith(anchored):
        return Opening("anchored", 0)
    if any(prefix.startswith(squeezed) for prefix in anchored):
        return Opening("maybe", 0)
    fence = text.rfind("```")
    if fence > 0:
        tail = re.sub(r"\s+", "", text[fence:])
        if tail.startswith(fenced):
            return Opening("fenced", fence)
        if any(prefix.startswith(tail) for prefix in fenced):
            return Opening("maybe", fence)
    held = max(partial_suffix(text, OPEN), partial_suffix(text, "```"))
    return Opening("maybe", len(text) - held) if held else Opening("no", len(text))


def partial_suffix(text: str, word: str) -> int:
    """The length of the longest suffix of `text` that is a proper prefix of `word`."""
    for size in range(min(len(word) - 1, len(text)), 0, -1):
        if word.startswith(text[-size:]):
            return size
    return 0


# --- parsing ---------------------------------------------------------------------------------------------
def call_of(value: object, offered: Collection[str] | None) -> ParsedCall | None:
    """A {"name", "arguments"} object naming an offered tool (arguments may be a JSON string, or `parameters`)."""
    if not isinstance(value, dict) or not isinstance(value.get("name"), str):
        return None
    if offered is not None and value["name"] not in offered:
        return None
    arguments = value.get("arguments", value.get("parameters", {}))
    if isinstance(arguments, str):  # some models write the arguments as a JSON string
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except json.JSONDecodeError:
            return None
    return ParsedCall(value["name"], arguments) if isinstance(arguments, dict) else None


def json_values(text: str, partial: bool = False) -> list[object] | None:
    """Every JSON value in `text`, separated only by whitespace or commas; None if anything else is there.
    With `partial` (a reply cut at max_tokens), the values before an unfinished last one."""
    decoder, index = json.JSONDecoder(), 0
    values: list[object] = []
    while True:
        while index < len(text) and (text[index].isspace() or text[index] == ","):
            index += 1
        if index == len(text):
            return values
        try:
            value, index = decoder.raw_decode(text, index)
        except json.JSONDecodeError:
            if partial and text[index] == "[":  # an unfinished list: the whole values it holds so far
                return values + (json_values(text[index + 1 :], partial) or [])
            return values if partial and values else None
        values.append(value)


def calls_in(body: str, offered: Collection[str] | None, partial: bool = False) -> list[ParsedCall] | None:
    """The calls a body holds (objects or lists of objects, doubled braces undone); None unless it is only calls."""
    for candidate in (body, undoubled(body)):
        values = json_values(candidate.strip(), partial)
        if not values:
            continue
        flat = [item for value in values for item in (value if isinstance(value, list) else [value])]
        calls = [call_of(item, offered) for item in flat]
        if flat and all(calls):
            return [call for call in calls if call is not None]
    return None


def undoubled(text: str) -> str:
    """`{{"name": ...}}` as some models write it, template-escaped, back to plain JSON."""
    return text.replace("{{", "{").replace("}}", "}") if "{{" in text else text


def parse_tagged(text: str, offered: Collection[str] | None) -> Parsed:
    calls, kept, malformed, last = [], [], 0, 0
    for match in BLOCK.finditer(text):
        found = calls_in(match.group(1), offered)
        kept.append(text[last : match.start()] if found else text[last : match.end()])
        malformed += found is None
        calls += found or []
        last = match.end()
    tail = text[last:]
    malformed += OPEN in tail
    content = ("".join(kept) + tail).strip()
    return Parsed(content or None, calls, malformed)


def parse(text: str, offered: Collection[str] | None = None, partial: bool = False) -> Parsed:
    """Calls and content of a reply. `offered` is the tool names of the request (None: any name counts).
    `partial`: the reply was cut at max_tokens, so an unfinished last call is dropped and the whole ones kept."""
    if OPEN in text:
        return parse_tagged(text, offered)
    stripped = text.strip()
    if stripped.count("```") % 2 and stripped.endswith("```"):  # a closing fence that was never opened
        stripped = stripped.removesuffix("```").rstrip()
    calls = calls_in(stripped, offered, partial)
    if calls:
        return Parsed(None, calls)
    fenced = FENCE.match(stripped if not partial or stripped.count("```") % 2 == 0 else stripped + "```")
    if fenced and (calls := calls_in(fenced["body"], offered, partial)):
        return Parsed(fenced["before"].strip() or None, calls)
    looks_like_call = opening(stripped, offered).form in ("anchored", "fenced")
    return Parsed(stripped or None, [], int(looks_like_call))

"""GBNF grammars that make every emitted tool call parse and name a real tool.

The call object ({"name": ..., "arguments": ...}) is built from the tools' JSON Schemas with llama.cpp's
own schema converter; we wrap it in the dialect's <tool_call> tags. `after_open` constrains the rest of a
reply once the model has opened a block by itself (tool_choice auto, as llama-server's lazy grammar
does); `forced` constrains it from the first token (tool_choice required, or a named function). As in
llama-server, a reply holds one call unless the request sets parallel_tool_calls.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from llama_cpp.llama_grammar import SchemaConverter

from models.dialects import CLOSE, OPEN

EMPTY_OBJECT: Mapping[str, Any] = {"type": "object", "properties": {}}
BLOCK = f"{json.dumps(OPEN)} ws call ws {json.dumps(CLOSE)}"


def call_rules(tools: Sequence[Mapping[str, Any]]) -> str:
    """Rules whose `call` rule matches {"name": <one of the tools>, "arguments": <valid for that tool>}."""
    alternatives = [
        {
            "type": "object",
            "properties": {
                "name": {"const": t["function"]["name"]},
                "arguments": t["function"].get("parameters") or EMPTY_OBJECT,
            },
            "required": ["name", "arguments"],
            "additionalProperties": False,
        }
        for t in tools
    ]
    schema = alternatives[0] if len(alternatives) == 1 else {"oneOf": alternatives}
    converter = SchemaConverter(
        prop_order={"name": 0, "arguments": 1}, allow_fetch=False, dotall=False, raw_pattern=False
    )
    converter.visit(converter.resolve_refs(schema, "tools"), "call")
    return str(converter.format_grammar())


def after_open(tools: Sequence[Mapping[str, Any]], parallel: bool = False) -> str:
    """The rest of a reply once OPEN is out: this call and its CLOSE, then (if parallel) more blocks, then the end."""
    more = f" (ws {BLOCK})*" if parallel else ""
    return f"root ::= ws call ws {json.dumps(CLOSE)}{more}\nws ::= [ \\t\\n]{{0,4}}\n{call_rules(tools)}"


def forced(tools: Sequence[Mapping[str, Any]], parallel: bool = False) -> str:
    """A whole reply that is one tool call (or, if parallel, one or more)."""
    more = f" (ws {BLOCK})*" if parallel else ""
    return f"root ::= {BLOCK}{more}\nws ::= [ \\t\\n]{{0,4}}\n{call_rules(tools)}"

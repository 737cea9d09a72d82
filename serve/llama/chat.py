"""From an OpenAI chat request to a prompt and generation settings for the llama backend.

Tools are rendered by the model's own template (or as the Hermes text it would write, for a template
without tools). `tool_choice`: `auto` watches for a call and constrains it once opened; `required` or a
named function constrains from the first token; `none` keeps the tools in the prompt (same context, same
cached prefix) but parses no call and ends the reply at a <tool_call> block the model starts anyway.
`response_format` and llama-server's `grammar` field constrain the reply from the first token.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from models.dialects import OPEN, native_messages, written_messages
from models.errors import TemplateError
from models.template import ChatTemplate
from serve.errors import InvalidRequest
from serve.llama.constraints import Grammars, json_document, json_reply
from serve.llama.decoding import Settings
from wire.types import RANDOM_SEED, ChatCompletionRequest, ToolDefinition


@dataclass(frozen=True)
class Plan:
    shown: list[ToolDefinition]  # what the prompt shows the model
    settings: Settings


def document_schema(request: ChatCompletionRequest) -> dict[str, Any] | None:
    form = request.response_format
    if form is None or form.type == "text":
        return None
    if form.type == "json_object":
        return {"type": "object"}
    assert form.json_schema is not None  # checked by the serving core
    return dict(form.json_schema["schema"])


def plan(request: ChatCompletionRequest, grammars: Grammars, max_tokens: int, jump_forward: bool) -> Plan:
    tools, choice = list(request.tools or []), request.tool_choice or "auto"
    document = document_schema(request)
    base = Settings(
        max_tokens=max_tokens,
        temperature=request.temperature if request.temperature is not None else 0.0,
        top_p=request.top_p if request.top_p is not None else 1.0,
        seed=None if request.seed == RANDOM_SEED else request.seed or 0,
        stop=tuple(request.stop_strings()),
        logprobs=bool(request.logprobs),
        top_logprobs=request.top_logprobs or 0,
        jump_forward=jump_forward,
        ignore_eos=bool(request.ignore_eos),
    )
    forced = grammars.gbnf(request.grammar) if request.grammar else None
    if document is not None:
        forced = grammars.checked_grammar(json_reply(document), "response_format", "response_format")
    if not tools or choice == "none":
        stop = (OPEN,) if tools else ()
        return Plan(tools, replace(base, stop=base.stop + stop, forced=forced))
    named = [t for t in tools if isinstance(choice, dict) and t["function"]["name"] == choice["function"]["name"]]
    calls = grammars.tool_grammar(named or tools, bool(request.parallel_tool_calls))
    offered = tuple(t["function"]["name"] for t in named or tools)
    if document is not None:
        forced = grammars.checked_grammar(
            calls.with_document(json_document(document)), "response_format", "response_format"
        )
        return Plan(tools, replace(base, forced=forced, offered=offered))
    if choice == "auto":
        return Plan(tools, replace(base, tools=calls, offered=offered, forced=forced))
    return Plan(tools, replace(base, forced=calls.lark("required"), offered=offered))


def prompt_text(template: ChatTemplate, request: ChatCompletionRequest, shown: list[ToolDefinition]) -> str:
    messages: list[Any] = list(request.messages)
    try:
        if template.supports_tools and request.tool_rendering != "hermes":
            return template.render(native_messages(messages), shown or None)
        return template.render(written_messages(messages, shown))
    except TemplateError as exc:
        raise InvalidRequest(
            f"the model's chat template cannot render these messages: {exc}", param="messages"
        ) from exc

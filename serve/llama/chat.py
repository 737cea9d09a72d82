"""From an OpenAI chat request to a prompt, a tool-call plan and sampling; from a generation to a reply."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from models.dialects import OPEN, Parsed, native_messages, parse, written_messages
from models.errors import TemplateError
from models.template import ChatTemplate
from serve.errors import InvalidRequest
from serve.llama import grammar
from serve.llama.engine import Generation, Sampling, ToolGrammar
from wire.types import AssistantMessage, ChatCompletionRequest, FinishReason, Timings, ToolCall, ToolDefinition


@dataclass(frozen=True)
class ToolPlan:
    rendered: list[ToolDefinition]  # what the prompt shows the model
    grammar: ToolGrammar
    parse_calls: bool
    stop: tuple[str, ...] = ()


class Grammars:
    """GBNF per tool set, built once: converting schemas takes milliseconds a turn would otherwise pay."""

    def __init__(self, limit: int = 64) -> None:
        self.built: dict[tuple[str, bool, str], str] = {}
        self.limit = limit

    def get(self, kind: str, tools: list[ToolDefinition], parallel: bool) -> str:
        key = (kind, parallel, json.dumps(tools, sort_keys=True))
        if key not in self.built:
            if len(self.built) >= self.limit:
                self.built.pop(next(iter(self.built)))
            build = grammar.forced if kind == "forced" else grammar.after_open
            self.built[key] = build(tools, parallel)
        return self.built[key]


def tool_plan(request: ChatCompletionRequest, grammars: Grammars) -> ToolPlan:
    tools, choice, parallel = (
        list(request.tools or []),
        request.tool_choice or "auto",
        bool(request.parallel_tool_calls),
    )
    if not tools:
        return ToolPlan([], ToolGrammar(), parse_calls=False)
    if choice == "none":  # not shown, and a block the model starts anyway ends the reply
        return ToolPlan([], ToolGrammar(), parse_calls=False, stop=(OPEN,))
    if choice == "auto":
        return ToolPlan(tools, ToolGrammar(after_open=grammars.get("after_open", tools, parallel)), parse_calls=True)
    if choice == "required":
        return ToolPlan(tools, ToolGrammar(forced=grammars.get("forced", tools, parallel)), parse_calls=True)
    named = [t for t in tools if t["function"]["name"] == choice["function"]["name"]]
    if not named:
        raise InvalidRequest(
            f"tool_choice names {choice['function']['name']!r}, which is not among the tools", param="tool_choice"
        )
    return ToolPlan(tools, ToolGrammar(forced=grammars.get("forced", named, parallel)), parse_calls=True)


def prompt_text(template: ChatTemplate, request: ChatCompletionRequest, plan: ToolPlan) -> str:
    messages: list[Any] = list(request.messages)
    try:
        if template.supports_tools:
            return template.render(native_messages(messages), plan.rendered or None)
        return template.render(written_messages(messages, plan.rendered))
    except TemplateError as exc:
        raise InvalidRequest(
            f"the model's chat template cannot render these messages: {exc}", param="messages"
        ) from exc


def sampling(request: ChatCompletionRequest, plan: ToolPlan) -> Sampling:
    return Sampling(
        max_tokens=request.completion_limit(),
        temperature=request.temperature if request.temperature is not None else 0.0,
        top_p=request.top_p if request.top_p is not None else 1.0,
        seed=request.seed if request.seed is not None else 0,
        stop=tuple(request.stop_strings()) + plan.stop,
    )


def call_id(prompt: list[int], index: int) -> str:
    """Deterministic (same request, same reply) and unique across a conversation's turns (each prompt differs)."""
    digest = hashlib.sha256(f"{index}:{','.join(map(str, prompt))}".encode()).hexdigest()
    return f"call_{digest[:24]}"


def reply(generation: Generation, prompt: list[int], plan: ToolPlan) -> tuple[AssistantMessage, FinishReason, Parsed]:
    parsed = parse(generation.text) if plan.parse_calls else Parsed(generation.text.strip() or None)
    calls: list[ToolCall] = [
        {
            "id": call_id(prompt, i),
            "type": "function",
            "function": {"name": c.name, "arguments": json.dumps(c.arguments, ensure_ascii=False)},
        }
        for i, c in enumerate(parsed.calls)
    ]
    message: AssistantMessage = {"role": "assistant", "content": parsed.content}
    if calls:
        message["tool_calls"] = calls
    finish: FinishReason = "tool_calls" if calls else "length" if generation.finish == "length" else "stop"
    return message, finish, parsed


def timings(generation: Generation) -> Timings:
    def rate(n: int, ms: float) -> float:
        return round(n / ms * 1000, 3) if ms > 0 else 0.0

    return Timings(
        cache_n=generation.cache_n,
        prompt_n=generation.prompt_n,
        prompt_ms=round(generation.prompt_ms, 3),
        prompt_per_second=rate(generation.prompt_n, generation.prompt_ms),
        predicted_n=generation.predicted_n,
        predicted_ms=round(generation.predicted_ms, 3),
        predicted_per_second=rate(generation.predicted_n, generation.predicted_ms),
    )

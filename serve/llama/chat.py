"""From an OpenAI chat request to a prompt and generation settings for the llama backend.

Tools are rendered by the model's own template (or as the Hermes text it would write, for a template
without tools). `tool_choice`: `auto` watches for a call and constrains it once opened; `required` or a
named function constrains from the first token; `allowed_tools` does either, to calls of the tools it
lists, while every tool stays in the prompt; `none` keeps the tools in the prompt (same context, same
cached prefix) but parses no call and ends the reply at a <tool_call> block the model starts anyway.
`response_format` and llama-server's `grammar` field constrain the reply from the first token. This
server's `tool_parameters` field narrows what a call's arguments may be without changing the prompt, and
its `distinct_calls` field ends a reply at its first call that repeats one of the same reply.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from models.dialects import OPEN, native_messages, written_messages
from models.errors import TemplateError
from models.template import ChatTemplate
from serve.errors import InvalidRequest
from serve.llama.constraints import Grammars, json_document, json_reply
from serve.llama.decoding import Settings, forced_call_floor
from wire.types import RANDOM_SEED, ChatCompletionRequest, ToolDefinition, choice_allows, choice_mode


def document_schema(request: ChatCompletionRequest) -> dict[str, Any] | None:
    form = request.response_format
    if form is None or form.type == "text":
        return None
    if form.type == "json_object":
        return {"type": "object"}
    assert form.json_schema is not None  # checked by the serving core
    return dict(form.json_schema["schema"])


def constrains_a_call(request: ChatCompletionRequest) -> bool:
    """Whether the reply is a call from its first token (tool_choice required or named, or tools beside a
    response_format): such a reply is bounded to end within its max_tokens."""
    mode = choice_mode(request.tool_choice)
    return bool(request.tools) and mode != "none" and (mode != "auto" or document_schema(request) is not None)


def plan(request: ChatCompletionRequest, grammars: Grammars, max_tokens: int, jump_forward: bool) -> Settings:
    """The generation settings of a request whose reply may take `max_tokens`: a forced call's free-form values
    are bounded so that the call ends within them."""
    tools = list(request.tools or [])
    choice, allowed = choice_allows(request.tool_choice, request.tool_names())
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
        distinct=frozenset(request.distinct_calls or ()),
    )
    forced = grammars.gbnf(request.grammar) if request.grammar else None
    if document is not None:
        forced = grammars.checked_grammar(json_reply(document), "response_format", "response_format")
    if not tools or choice == "none":
        stop = (OPEN,) if tools else ()
        return replace(base, stop=base.stop + stop, forced=forced)
    callable_tools = [t for t in tools if t["function"]["name"] in allowed]  # all of them stay in the prompt
    budget = max_tokens if constrains_a_call(request) else None  # a forced call must end in time
    decoded = as_decoded(callable_tools, request.tool_parameters or {})
    calls = grammars.tool_grammar(decoded, bool(request.parallel_tool_calls), budget)
    if budget is not None:
        base = replace(base, call_tokens=grammars.call_tokens(decoded))
        if max_tokens < (floor := forced_call_floor(base.call_tokens)):
            raise InvalidRequest(
                f"max_tokens {max_tokens} is too small for a call to the tools offered: the reply must be a call, "
                f"and the shortest one needs about {base.call_tokens} tokens; give max_tokens at least {floor}",
                param="max_tokens",
            )
    offered = tuple(allowed)
    if document is not None:
        forced = grammars.checked_grammar(
            calls.with_document(json_document(document)), "response_format", "response_format"
        )
        return replace(base, forced=forced, offered=offered)
    if choice == "auto":
        return replace(base, tools=calls, offered=offered, forced=forced)
    return replace(base, forced=calls.lark("required"), offered=offered)


def as_decoded(tools: Sequence[ToolDefinition], parameters: dict[str, dict[str, Any]]) -> list[ToolDefinition]:
    """The tools as their calls are decoded: with the request's `tool_parameters` in place of their own."""
    return [
        {**t, "function": {**t["function"], "parameters": parameters[t["function"]["name"]]}}
        if t["function"]["name"] in parameters
        else t
        for t in tools
    ]


def prompt_parts(
    template: ChatTemplate, request: ChatCompletionRequest, shown: list[ToolDefinition], specials: Sequence[str]
) -> list[tuple[str, bool]]:
    """The prompt as text parts, each with whether special-token text in it may become a special token.

    Only the chat template's own markup may: whatever a client wrote (message contents, tool arguments,
    tool definitions) that spells a special token (`<|im_end|>` in a file, say) is set aside before the
    template runs and tokenized back as plain text, so no message can open a turn of its own.
    """
    literals: list[str] = []
    pattern = re.compile("|".join([*map(re.escape, specials), f"[{MARK_OPEN}{MARK_CLOSE}]"]))

    def aside(value: Any) -> Any:
        if isinstance(value, str):
            return pattern.sub(lambda found: mark(literals, found.group(0)), value)
        if isinstance(value, dict):
            return {aside(k): aside(v) for k, v in value.items()}
        if isinstance(value, list):
            return [aside(v) for v in value]
        return value

    messages: list[Any] = aside(list(request.messages))
    tools: list[Any] = aside(list(shown))
    try:
        if template.supports_tools and request.tool_rendering != "hermes":
            text = template.render(native_messages(messages), tools or None)
        else:
            text = template.render(written_messages(messages, tools))
    except TemplateError as exc:
        raise InvalidRequest(
            f"the model's chat template cannot render these messages: {exc}", param="messages"
        ) from exc
    pieces = MARKED.split(text)  # text, index, text, index, ... text
    return [(literals[int(p)], False) if odd else (p, True) for odd, p in ((i % 2, p) for i, p in enumerate(pieces))]


MARK_OPEN, MARK_CLOSE = "\ue000", "\ue001"  # private-use characters; a client's own are set aside too
MARKED = re.compile(f"{MARK_OPEN}(\\d+){MARK_CLOSE}")


def mark(literals: list[str], text: str) -> str:
    literals.append(text)
    return f"{MARK_OPEN}{len(literals) - 1}{MARK_CLOSE}"

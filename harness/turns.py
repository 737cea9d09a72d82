"""How the next request is asked: what is sent, whether it is an answer turn, and in which form.

An answer turn asks the model to answer instead of calling tools. It comes on the last turn `max_turns`
allows (answer_at_cap), or once the model has repeated calls it already has results for (repeat_guard).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any, Literal, TypeAlias

from harness.config import Controls
from harness.context import select
from harness.prompts import answer_now
from harness.protocols import ModelRequest, ToolChoice
from harness.state import RunState
from wire.types import Message, ToolDefinition

AnswerTurn: TypeAlias = Literal["cap", "repeats"]
# the reply may not open with JSON, a tag, a list or a fence: it has to be words (GBNF, as llama-server reads it)
PROSE_GRAMMAR = "root ::= [ \\t\\n]* [^{<\\[` \\t\\n] [^\\x00]*"


def answer_turn(state: RunState, controls: Controls) -> AnswerTurn | None:
    cap = state.limits.max_turns
    if controls.answer_at_cap and cap is not None and cap > 1 and state.turns == cap - 1:
        return "cap"
    if controls.repeat_guard and state.repeats >= controls.repeats_before_answer:
        return "repeats"
    return None


def restatement(state: RunState) -> Message:
    return {"role": "user", "content": answer_now(state.question)}


def request_for(
    state: RunState,
    definitions: Sequence[ToolDefinition],
    controls: Controls,
    max_tokens: int | None,
    count: Callable[[Message], int],
) -> tuple[ModelRequest, int]:
    """The request for the next turn, and how many old messages a context budget dropped from it."""
    messages, dropped = select(state.messages, state.limits.context_tokens, count)
    extra: dict[str, Any] = {}
    if controls.rendering == "words":
        messages = in_words(messages)
    elif controls.rendering == "hermes":
        extra["tool_rendering"] = "hermes"
    tools: list[ToolDefinition] = list(definitions)
    choice: ToolChoice | None = None
    if answer_turn(state, controls) is not None:
        if controls.answer_mode == "restated":
            tools = []
        else:
            choice = "none"
            if controls.answer_mode == "prose":
                extra["grammar"] = PROSE_GRAMMAR
    parallel = controls.parallel_calls if tools and choice is None else None
    return ModelRequest(messages, tools, max_tokens, choice, parallel, extra), dropped


def in_words(messages: Sequence[Message]) -> list[Message]:
    """Past calls and results as plain sentences: the model reads what it asked for and what came back."""
    written: list[Message] = []
    for message in messages:
        if message["role"] == "assistant" and message.get("tool_calls"):
            said = [message.get("content") or ""] + [
                f"I called {c['function']['name']} with {json.dumps(args_of(c['function']['arguments']))}."
                for c in message.get("tool_calls", [])
            ]
            written.append({"role": "assistant", "content": " ".join(s for s in said if s)})
        elif message["role"] == "tool":
            result = f"The result of {message.get('name', 'the tool')} was:\n{message['content']}"
            if written and written[-1]["role"] == "user" and written[-1]["content"].startswith("The result of"):
                written[-1] = {"role": "user", "content": written[-1]["content"] + "\n\n" + result}
            else:
                written.append({"role": "user", "content": result})
        else:
            written.append(message)
    return written


def args_of(arguments: str) -> object:
    try:
        return json.loads(arguments or "{}")
    except json.JSONDecodeError:
        return arguments

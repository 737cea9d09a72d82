"""How the next request is asked: what is sent, whether it is an answer turn, and in which form.

An answer turn asks the model to answer instead of calling tools. It comes on the last turn `max_turns`
allows (answer_at_cap), once the model has repeated calls it already has results for (repeat_guard), or
after the model's own answer when answer_from_results wants it asked again as a digest.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, Literal, TypeAlias

from harness.config import Controls
from harness.context import ContextTooSmall, select
from harness.prompts import answer_now, check_answer, empty_reply, plain_answer, reminder
from harness.protocols import ModelReply, ModelRequest, ToolChoice
from harness.state import RunState
from wire.digest import Finding, write
from wire.types import AssistantMessage, Message, ToolDefinition

AnswerTurn: TypeAlias = Literal["cap", "repeats", "digest"]
# the reply has to open with a word (a letter, a digit or a quote), not JSON, a tag, a list or a fence (GBNF)
PROSE_GRAMMAR = 'root ::= [ \\t\\n]* [A-Za-z0-9"\u00c0-\uffff] [^\\x00]*'


def answer_turn(state: RunState, controls: Controls) -> AnswerTurn | None:
    if state.digest == "due":
        return "digest"
    cap = state.limits.max_turns
    if controls.answer_at_cap and cap is not None and cap > 1 and state.turns == cap - 1:
        return "cap"
    if controls.repeat_guard and state.repeats >= controls.repeats_before_answer:
        return "repeats"
    return None


def asks_digest(kind: AnswerTurn | None, controls: Controls) -> bool:
    return kind == "digest" or (kind is not None and controls.answer_mode == "digest")


def words_only(reply: ModelReply) -> ModelReply:
    """A digest's reply without calls: none were offered, and the model saw none of the run's call ids, so a
    call it makes anyway could reuse one; its words are the answer."""
    if not reply.message.get("tool_calls"):
        return reply
    message: AssistantMessage = {"role": "assistant", "content": reply.message.get("content") or ""}
    return replace(reply, message=message, finish_reason="stop")


def restatement(state: RunState, controls: Controls, kind: AnswerTurn | None) -> Message | None:
    """The question asked again in words, when this answer turn is asked that way and it is not asked yet."""
    if kind is None or asks_digest(kind, controls) or controls.answer_mode != "restated":
        return None
    ask: Message = {"role": "user", "content": answer_now(state.question)}
    return None if state.messages[-1] == ask else ask


def findings(messages: Sequence[Message]) -> list[Finding]:
    """Each distinct call the run made, with its result, in the order the results came."""
    calls = {c["id"]: c["function"] for m in messages if m["role"] == "assistant" for c in m.get("tool_calls", [])}
    found: dict[str, Finding] = {}
    for message in messages:
        if message["role"] != "tool" or (call := calls.get(message["tool_call_id"])) is None:
            continue
        args = args_of(call["arguments"])
        finding = Finding(call["name"], args if isinstance(args, dict) else call["arguments"], str(message["content"]))
        found.setdefault(finding.call, finding)
    return list(found.values())


def digest_messages(state: RunState, count: Callable[[Message], int]) -> list[Message]:
    """A digest answer turn's conversation: the run's system messages, then the question beside the results.
    Under a context budget the oldest results go first."""
    head = [m for m in state.messages if m["role"] == "system"]
    found, budget = findings(state.messages), state.limits.context_tokens
    while True:
        ask: Message = {"role": "user", "content": write(state.question, found)}
        used = sum(count(m) for m in [*head, ask])
        if budget is None or used <= budget:
            return [*head, ask]
        if not found:
            raise ContextTooSmall(f"the question and system prompt need {used} tokens; the context budget is {budget}")
        found = found[1:]


def request_for(
    state: RunState,
    definitions: Sequence[ToolDefinition],
    controls: Controls,
    max_tokens: int | None,
    count: Callable[[Message], int],
) -> tuple[ModelRequest, int]:
    """The request for the next turn, and how many old messages a context budget dropped from it."""
    kind = answer_turn(state, controls)
    if asks_digest(kind, controls):
        return ModelRequest(digest_messages(state, count), [], max_tokens, None, None, {"grammar": PROSE_GRAMMAR}), 0
    messages, dropped = select(state.messages, state.limits.context_tokens, count)
    if controls.remind_question and messages and messages[-1]["role"] == "tool":
        messages = [*messages, {"role": "user", "content": reminder(state.question)}]
    extra: dict[str, Any] = {}
    if controls.rendering == "words":
        messages = in_words(messages)
    elif controls.rendering == "hermes":
        extra["tool_rendering"] = "hermes"
    tools: list[ToolDefinition] = list(definitions)
    choice: ToolChoice | None = None
    if kind is not None:
        if controls.answer_mode == "restated":
            tools = []
        else:
            choice = "none"
            if controls.answer_mode == "prose":
                extra["grammar"] = PROSE_GRAMMAR
    elif tools:
        choice = call_wanted(state, controls, tools)
    parallel = controls.parallel_calls if tools and choice != "none" else None
    return ModelRequest(messages, tools, max_tokens, choice, parallel, extra), dropped


def call_wanted(state: RunState, controls: Controls, tools: Sequence[ToolDefinition]) -> ToolChoice | None:
    """Whether the next turn must call a tool: nothing looked at yet (look_turns), a tool announced in words
    instead of called (act_on_intent: that tool), or every result of the last batch an error (call_after_error)."""
    last, names = state.messages[-1], [t["function"]["name"] for t in tools]
    looked = sum(1 for m in state.messages if m["role"] == "assistant" and m.get("tool_calls"))
    if looked < controls.look_turns:
        bare = [t["function"]["name"] for t in tools if not t["function"].get("parameters", {}).get("required")]
        if looked == 0 and len(bare) == 1:
            return {"type": "function", "function": {"name": bare[0]}}
        return "required"
    if controls.empty_mode == "call" and last["role"] == "assistant" and not (last.get("content") or "").strip():
        return "required"
    if controls.act_on_intent and last["role"] == "assistant" and not last.get("tool_calls"):
        named = named_tool(last.get("content") or "", names)
        if named is not None:
            return {"type": "function", "function": {"name": named}}
    results = latest_results(state.messages)
    if controls.call_after_error and results and all(r.startswith("Error") for r in results):
        return "required"
    return None


def named_tool(text: str, names: Sequence[str]) -> str | None:
    """The offered tool a reply names first (`list_files`, list_files(...)), if it names one."""
    found = [(m.start(), name) for name in names if (m := re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text))]
    return min(found)[1] if found else None


def latest_results(messages: Sequence[Message]) -> list[str]:
    """The tool results since the last assistant message."""
    results: list[str] = []
    for message in reversed(messages):
        if message["role"] != "tool":
            break
        results.append(str(message["content"]))
    return results


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


Retry: TypeAlias = Literal["empty", "intent", "tool_talk", "unchecked", "digest"]


def not_an_answer(
    state: RunState, controls: Controls, message: Message, names: Sequence[str], kind: AnswerTurn | None
) -> Retry | None:
    """Why a reply without calls is not yet the answer: it is empty; it names a tool it did not call (an
    intent on a free turn, tool talk on an answer turn); it is the model's first answer and verify_answer
    wants it checked; or it was not given in a digest and answer_from_results wants it asked as one."""
    content = str(message.get("content") or "")
    if not content.strip() and state.empty_replies < controls.empty_retries:
        return "empty"
    names_a_tool = named_tool(content, names) is not None and state.nudges < controls.nudges
    if names_a_tool and (controls.act_on_intent if kind is None else controls.tool_talk):
        return "intent" if kind is None else "tool_talk"
    if controls.verify_answer and kind is None and not state.checked:
        return "unchecked"
    wants_digest = controls.answer_from_results and state.digest == "none" and not asks_digest(kind, controls)
    return "digest" if wants_digest and any(m["role"] == "tool" for m in state.messages) else None


def ask_again(state: RunState, controls: Controls, retry: Retry) -> Message | None:
    """Count the retry; the words to add to the transcript for it, if any (an intent is asked by tool_choice)."""
    if retry == "empty":
        state.empty_replies += 1
        if controls.empty_mode == "call" and state.empty_replies == 1:  # "call" looks once, then asks
            return None
        return {"role": "user", "content": empty_reply(state.question)}
    if retry == "digest":
        state.digest = "due"
        return None
    if retry == "unchecked":
        state.checked = True
        return {"role": "user", "content": check_answer(state.question)}
    state.nudges += 1
    return {"role": "user", "content": plain_answer(state.question)} if retry == "tool_talk" else None

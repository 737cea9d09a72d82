"""digest_answers: an answer turn is asked as a digest, the question beside what the tools returned."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import ClassVar

from harness.context import ContextTooSmall
from harness.controls.base import Hooks, RunContext, Turn
from harness.protocols import ModelReply, ModelRequest
from harness.state import RunState
from wire.digest import Finding, write
from wire.types import AssistantMessage, Message, decoded_arguments

# the reply has to open with a word (a letter, a digit or a quote), not JSON, a tag, a list or a fence (GBNF)
PROSE_GRAMMAR = 'root ::= [ \\t\\n]* [A-Za-z0-9"\u00c0-\uffff] [^\\x00]*'


@dataclass(frozen=True)
class DigestAnswers(Hooks):
    """An answer turn (one a control marked: the model is done looking) is asked as a fresh conversation:
    the run's system messages and one user message holding the question beside each distinct call and its
    result (`wire.digest`), no tools, and a grammar that makes the reply open with a word. A small model that
    has looked in the right place often answers by echoing the last result or by describing its tools; with
    no call syntax to imitate and none of its own replies to copy, it states what the results say. Calls in
    the reply are dropped: none were offered, and the model saw none of the run's call ids."""

    name: ClassVar[str] = "digest_answers"

    def before_request(self, run: RunContext, turn: Turn) -> None:
        if turn.answer is None:
            return
        messages = digest_messages(run.state, run.count)
        grammar = {"grammar": PROSE_GRAMMAR}
        turn.request = ModelRequest(messages, [], turn.request.max_tokens, None, None, grammar)

    def on_reply(self, run: RunContext, turn: Turn, reply: ModelReply) -> ModelReply:
        return words_only(reply) if turn.answer is not None else reply


def words_only(reply: ModelReply) -> ModelReply:
    if not reply.message.get("tool_calls"):
        return reply
    message: AssistantMessage = {"role": "assistant", "content": reply.message.get("content") or ""}
    return replace(reply, message=message, finish_reason="stop")


def findings(messages: Sequence[Message]) -> list[Finding]:
    """Each distinct call the run made, with its result, in the order the results came."""
    calls = {c["id"]: c["function"] for m in messages if m["role"] == "assistant" for c in m.get("tool_calls", [])}
    found: dict[str, Finding] = {}
    for message in messages:
        if message["role"] != "tool" or (call := calls.get(message["tool_call_id"])) is None:
            continue
        args = decoded_arguments(call["arguments"])
        finding = Finding(call["name"], args if isinstance(args, dict) else call["arguments"], str(message["content"]))
        found.setdefault(finding.call, finding)
    return list(found.values())


def digest_messages(state: RunState, count: Callable[[Message], int]) -> list[Message]:
    """The run's system messages, then the question beside the results. Under a context budget the oldest
    results go first."""
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

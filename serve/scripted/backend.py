"""The scripted provider as a Backend: the reply is a pure function of the request, counted with o200k_base.

Stateless, so any process gives the same reply to the same request. `tool_choice` and `stop` are honoured
on the scenario's reply; `response_format` only by a scenario that supports it; token log-probabilities
do not exist here and are refused.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import AsyncGenerator, Mapping
from dataclasses import dataclass, field

from serve.core.backend import Event, Finished, Prepared, TextOut, Token
from serve.errors import InvalidRequest, ScriptExhausted
from serve.scripted.scenarios import scenarios
from serve.scripted.script import Reply, Scenario, Transcript
from wire.tokens import TokenCounter
from wire.types import (
    AssistantMessage,
    ChatCompletionRequest,
    FinishReason,
    ModelCard,
    ToolCall,
    Usage,
    choice_allows,
    usage_of,
)

LATENCY_HEADER = "X-Scripted-Latency-Ms"
MAX_LATENCY_MS = 600_000
TEXT_CHUNK = 16


@dataclass
class ScriptedJob(Prepared):
    """The scenario's reply, worked out before the first byte, and how long to wait before sending it."""

    message: AssistantMessage = field(default_factory=lambda: AssistantMessage(role="assistant"))
    finish: FinishReason = "stop"
    usage: Usage = field(default_factory=lambda: usage_of(0, 0))
    delay: float = 0.0


def honour_tool_choice(scenario: Scenario, transcript: Transcript, request: ChatCompletionRequest) -> Reply:
    """The scenario's reply, within what tool_choice allows (a script that cannot comply says so with a 400):
    calls of tools the choice does not allow are left out, as a grammar would keep a model from them."""
    reply = scenario.reply(transcript)
    mode, allowed = choice_allows(request.tool_choice, request.tool_names()) if request.tools else ("none", [])
    if mode == "none":
        return reply if not reply.calls else Reply(content=scenario.answer_now(transcript))
    if mode == "auto" and not reply.calls:
        return reply
    kept = tuple(c for c in reply.calls if c.name in allowed)
    if not kept and scenario.forced_call is not None:
        reply = scenario.forced_call(transcript, allowed[0] if len(allowed) == 1 else None)
        kept = tuple(c for c in reply.calls if c.name in allowed)
    if not kept:
        made = f"calls {', '.join(c.name for c in reply.calls)}" if reply.calls else "answers in text"
        raise ScriptExhausted(
            f"scenario {scenario.name!r} {made} at turn {transcript.turn}; it cannot honour tool_choice "
            f"{json.dumps(request.tool_choice)}",
            param="tool_choice",
        )
    return reply if kept == reply.calls else Reply(reply.content, kept)


def cut_at_stop(content: str | None, stops: list[str]) -> tuple[str | None, bool]:
    if content is None:
        return None, False
    cuts = [content.index(s) for s in stops if s in content]
    return (content[: min(cuts)], True) if cuts else (content, False)


def to_message(
    reply: Reply, counter: TokenCounter, stops: list[str], limit: int | None
) -> tuple[AssistantMessage, FinishReason]:
    """The wire message for a reply: stop strings and `max_tokens` cut the text as a model would be cut."""
    calls: list[ToolCall] = [
        {
            "id": c.id,
            "type": "function",
            "function": {"name": c.name, "arguments": json.dumps(dict(c.arguments), separators=(",", ":"))},
        }
        for c in reply.calls
    ]
    content, stopped = cut_at_stop(reply.content, stops)
    finish: FinishReason = "tool_calls" if calls else "stop"
    if content is not None and limit is not None and not calls:
        tokens = counter.encoding.encode(content, disallowed_special=())
        if len(tokens) > limit:
            content, finish = counter.encoding.decode(tokens[:limit]), "length"
    message: AssistantMessage = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = calls
    return message, finish if not stopped or calls else "stop"


class ScriptedBackend:
    def __init__(self, latency_ms: int = 0, counter: TokenCounter | None = None) -> None:
        self.counter = counter or TokenCounter()
        self.table = scenarios()
        self.latency_ms = latency_ms
        self.in_flight = 0

    def model_cards(self) -> list[ModelCard]:
        return [ModelCard(id=s.name, owned_by="scripted", description=s.description) for s in self.table.values()]

    def health(self) -> dict[str, object]:
        return {"status": "ok", "scenarios": len(self.table), "latency_ms": self.latency_ms}

    def fault(self) -> str | None:
        return None

    def queue_depth(self) -> int:
        return 0  # nothing waits for anything: every request is answered at once (after its latency)

    def delay_ms(self, headers: Mapping[str, str]) -> int:
        raw = headers.get(LATENCY_HEADER)
        if raw is None:
            return self.latency_ms
        try:
            value = int(raw)
        except ValueError:
            raise InvalidRequest(
                f"{LATENCY_HEADER} must be a whole number of milliseconds", param=LATENCY_HEADER
            ) from None
        if not 0 <= value <= MAX_LATENCY_MS:
            raise InvalidRequest(f"{LATENCY_HEADER} must be between 0 and {MAX_LATENCY_MS}", param=LATENCY_HEADER)
        return value

    async def prepare(self, request: ChatCompletionRequest, headers: Mapping[str, str]) -> ScriptedJob:
        scenario = self.table[request.model]
        delay = self.delay_ms(headers)
        if request.logprobs or request.top_logprobs:
            raise InvalidRequest(
                "the scripted provider has no token probabilities; leave logprobs unset", param="logprobs"
            )
        if request.grammar is not None:
            raise InvalidRequest(
                "the scripted provider cannot hold a reply to a grammar; leave it unset", param="grammar"
            )
        transcript = Transcript(request.model, request.messages, request.response_format)
        if request.response_format is not None and request.response_format.type != "text" and not scenario.structured:
            raise InvalidRequest(
                f"scenario {scenario.name!r} does not produce {request.response_format.type} replies; "
                "the `structured` scenario does",
                param="response_format",
            )
        reply = honour_tool_choice(scenario, transcript, request)
        message, finish = to_message(reply, self.counter, request.stop_strings(), request.completion_limit())
        usage = usage_of(self.counter.prompt(request.messages, request.tools or []), self.counter.completion(message))
        return ScriptedJob(request, usage.prompt_tokens, request_id(request), message, finish, usage, delay)

    async def run(self, job: ScriptedJob) -> AsyncGenerator[Event, None]:
        message, finish, usage, delay = job.message, job.finish, job.usage, job.delay
        if delay:
            await asyncio.sleep(delay / 1000)
        content = message.get("content") or ""
        for start in range(0, len(content), TEXT_CHUNK):
            yield TextOut(content[start : start + TEXT_CHUNK])
        yield Finished(message, finish, usage)

    def tokenize(self, text: str, special: bool) -> list[Token]:
        encoding = self.counter.encoding
        ids = encoding.encode(text, allowed_special="all" if special else set(), disallowed_special=())
        return [Token(i, encoding.decode_single_token_bytes(i).decode("utf-8", errors="replace")) for i in ids]

    def detokenize(self, tokens: list[int]) -> str:
        valid = [t for t in tokens if 0 <= t < self.counter.encoding.n_vocab]
        if len(valid) != len(tokens):
            raise InvalidRequest(f"token ids must be between 0 and {self.counter.encoding.n_vocab - 1}", param="tokens")
        try:
            return self.counter.encoding.decode(valid)
        except KeyError as exc:
            raise InvalidRequest(f"token {exc} does not exist in o200k_base", param="tokens") from exc


def request_id(request: ChatCompletionRequest) -> str:
    """Same request, same id: the provider keeps no state, not even a counter."""
    return "chatcmpl-" + hashlib.sha256(request.model_dump_json().encode()).hexdigest()[:24]

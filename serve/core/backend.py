"""The seam between the serving core and a model: a Backend prepares a request, then yields its reply as events."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from wire.types import AssistantMessage, ChatCompletionRequest, FinishReason, ModelCard, Timings, TokenLogprob, Usage


@dataclass(frozen=True)
class TextOut:
    """A piece of the reply's text, safe to show (never part of a tool call or of a possible stop string)."""

    text: str
    logprobs: list[TokenLogprob] | None = None


@dataclass(frozen=True)
class Finished:
    """The end of a reply: the whole message (content and tool calls), why it ended, and what it cost."""

    message: AssistantMessage
    finish_reason: FinishReason
    usage: Usage
    timings: Timings | None = None
    logprobs: list[TokenLogprob] | None = None


Event = TextOut | Finished


@dataclass(frozen=True)
class Token:
    id: int
    piece: str


@dataclass
class Prepared:
    """A validated request, ready to run, and its prompt size for the overflow check. Each backend's own
    prepared request subclasses it with what it needs to run (a prompt and its settings, a scripted reply)."""

    request: ChatCompletionRequest
    prompt_tokens: int
    id: str | None = None  # the completion id, when the backend derives it (same request, same id)


JobT = TypeVar("JobT", bound=Prepared)


class Backend(Protocol[JobT]):
    """What a server needs from a model: prepare checks everything before the first byte, run yields events.

    Closing the iterator `run` returns (the client left, or the server is stopping) must stop the work.
    """

    def model_cards(self) -> list[ModelCard]: ...

    def health(self) -> dict[str, Any]: ...

    def fault(self) -> str | None:
        """Why the backend cannot serve right now (the server's /health answers 503 with it), or None."""
        ...

    def queue_depth(self) -> int: ...

    async def prepare(self, request: ChatCompletionRequest, headers: Mapping[str, str]) -> JobT: ...

    def run(self, job: JobT) -> AsyncGenerator[Event, None]: ...

    def tokenize(self, text: str, special: bool) -> list[Token]: ...

    def detokenize(self, tokens: list[int]) -> str: ...

"""What the control tests share: a model that replies from a list and keeps each request, and probe reads."""

from __future__ import annotations

from harness.app.client import FunctionModel
from harness.core.protocols import ModelReply, ModelRequest
from tests.harness.helpers import calls
from wire.types import AssistantMessage, ModelCard, usage_of

QUESTION = "Which probe value is right?"


def answering(*replies: AssistantMessage | str, rate: float = 0.25) -> tuple[FunctionModel, list[ModelRequest]]:
    """A model that replies from a fixed list and keeps every request it was sent; it counts `rate` prompt
    tokens per character of content."""
    seen: list[ModelRequest] = []

    def reply(request: ModelRequest) -> ModelReply:
        seen.append(request)
        out = replies[len(seen) - 1]
        message: AssistantMessage = {"role": "assistant", "content": out} if isinstance(out, str) else out
        prompt = int(sum(len(str(m.get("content") or "")) for m in request.messages) * rate)
        return ModelReply(message, usage_of(prompt, 2), "tool_calls" if message.get("tool_calls") else "stop")

    return FunctionModel(reply), seen


BATCHES = iter(range(1_000_000))


def reads(*values: int) -> AssistantMessage:
    """One reply reading these probe values, its call ids new in the test session."""
    batch = next(BATCHES)
    return calls(*((f"b{batch}-{i}", "probe", {"x": v}) for i, v in enumerate(values)))


def qwen(**meta: object) -> ModelCard:
    """A card as a server sends it, read as the client reads one."""
    card = ModelCard.read({"id": "qwen", "meta": meta})
    assert card is not None
    return card

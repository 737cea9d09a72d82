"""fit_context: a request that would overflow the model's context window has its longest results cut."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import ClassVar

from harness.controls.base import Hooks, RunContext, Turn
from harness.controls.digest import CONTEXT_MARGIN, digit_tokens, trimmed
from harness.protocols import ModelReply
from wire.types import Message

MIN_LINES = 8  # a result is not cut below this many lines


def cost(run: RunContext, message: Message) -> int:
    return run.count(message) + digit_tokens(message)


def cut(message: Message, lines: int) -> Message:
    """A tool result cut to about `lines` lines; any other message as it is."""
    if message["role"] != "tool":
        return message
    return {**message, "content": trimmed(str(message["content"]), lines)}


@dataclass
class Calibration:
    estimated: int = 0  # the harness's count of the last request it sent
    counted: int = 0  # the server's count of the same request (its usage.prompt_tokens)


CALIBRATED_MARGIN = 0.95  # the harness's count scaled to the server's; what is new since may count otherwise


@dataclass(frozen=True)
class FitContext(Hooks):
    """A turn whose request would not fit the model's context window (`context` tokens, learned from the
    server, less the reply's max_tokens) is sent with its longest tool results cut to their head and tail
    (a line says how many were left out), longest first, until it fits; the run's transcript keeps them
    whole. A model that has read more than its window holds goes on looking instead of failing on the
    server's 400. The harness's token count is scaled to the server's: each reply says how many tokens its
    request took, and the next request is counted at the same rate (the first, with a wide margin: digits
    and markup count differently in each tokenizer). Inert when the request fits or the window is unknown;
    an answer turn asked as a digest fits itself."""

    name: ClassVar[str] = "fit_context"
    context: int = 0

    def before_request(self, run: RunContext, turn: Turn) -> None:
        if not self.context or turn.answer is not None:
            return
        request = turn.request
        memory = self.recall(run, Calibration)
        room = self.context - (request.max_tokens or 0)
        scale, budget = 1.0, int(room * CONTEXT_MARGIN)
        if memory.estimated and memory.counted:
            scale, budget = memory.counted / memory.estimated, int(room * CALIBRATED_MARGIN)
        definitions: Message = {"role": "system", "content": json.dumps(list(request.tools))}
        messages = list(request.messages)
        costs = [cost(run, m) for m in [*messages, definitions]]
        lengths = [len(str(m.get("content") or "").splitlines()) if m["role"] == "tool" else 0 for m in messages]
        while sum(costs) * scale > budget:
            longest = max(range(len(messages)), key=lambda i: lengths[i], default=None)
            if longest is None or lengths[longest] <= MIN_LINES:
                break  # nothing left to cut: the server says what does not fit
            messages[longest] = cut(messages[longest], lengths[longest] * 2 // 3)
            costs[longest] = cost(run, messages[longest])
            lengths[longest] = len(str(messages[longest].get("content") or "").splitlines())
        if messages != list(request.messages):
            turn.request = replace(request, messages=messages)
        self.keep(run, Calibration(estimated=sum(costs)))

    def on_reply(self, run: RunContext, turn: Turn, reply: ModelReply) -> ModelReply:
        memory = self.recall(run, Calibration)
        if self.context and turn.answer is None and reply.usage is not None and reply.usage.prompt_tokens:
            self.keep(run, replace(memory, counted=reply.usage.prompt_tokens))
        return reply

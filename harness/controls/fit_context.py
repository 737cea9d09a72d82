"""fit_context: a request that would overflow the model's context window has its longest results cut."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import ClassVar

from harness.controls.base import Hooks
from harness.controls.budget import CONTEXT_MARGIN, digit_tokens, room, shorter, trimmed
from harness.core.protocols import ModelReply
from harness.core.turn import RunContext, Turn
from wire.types import Message


def cost(run: RunContext, message: Message) -> int:
    return run.count(message) + digit_tokens(message)


def cut(message: Message, lines: int) -> Message:
    """A tool result cut to about `lines` lines; any other message as it is."""
    if message["role"] != "tool":
        return message
    return {**message, "content": trimmed(str(message["content"]), lines)}


def line_count(message: Message) -> int:
    return len(str(message.get("content") or "").splitlines()) if message["role"] == "tool" else 0


@dataclass
class Calibration:
    estimated: int = 0  # the harness's count of the last request it sent
    counted: int = 0  # the server's count of the same request (its usage.prompt_tokens)
    cuts: dict[str, int] = field(default_factory=dict)  # tool_call_id -> the lines its result was cut to


CALIBRATED_MARGIN = 0.95  # the harness's count scaled to the server's; what is new since may count otherwise
HEADROOM = 0.8  # a cut leaves this share of the budget used, so the turns after it fit without another


@dataclass(frozen=True)
class FitContext(Hooks):
    """A turn whose request would not fit the model's context window (`context` tokens, learned from the
    server, less the reply's max_tokens) is sent with its longest tool results cut to their head and tail
    (a line says how many were left out), longest first, until it fits; the run's transcript keeps them
    whole. A model that has read more than its window holds goes on looking instead of failing on the
    server's 400. The harness's token count is scaled to the server's: each reply says how many tokens its
    request took, and the next request is counted at the same rate (the first, with a wide margin: digits
    and markup count differently in each tokenizer). Inert when the request fits or the window is unknown;
    an answer turn asked as a digest fits itself.

    Cuts are kept: a result cut once is sent cut the same way at every later turn, and a cut goes on to
    HEADROOM of the budget. A server's prompt cache reuses the conversation up to its first changed token,
    so a cut that moved from turn to turn would make it read everything after an early result again at
    every turn; kept cuts change the prompt once, and the turns after add to it."""

    name: ClassVar[str] = "fit_context"
    context: int = 0

    def before_send(self, run: RunContext, turn: Turn) -> None:
        if not self.context or turn.answer is not None:
            return
        request = turn.request
        memory = self.recall(run, Calibration)
        prompt = room(self.context, request.max_tokens)
        scale, budget = 1.0, int(prompt * CONTEXT_MARGIN)
        if memory.estimated and memory.counted:
            scale, budget = memory.counted / memory.estimated, int(prompt * CALIBRATED_MARGIN)
        definitions: Message = {"role": "system", "content": json.dumps(list(request.tools))}
        sent, cuts = list(request.messages), dict(memory.cuts)
        ids = [str(m.get("tool_call_id")) for m in sent]
        lengths = [cuts[i] if i in cuts else line_count(m) for m, i in zip(sent, ids, strict=True)]  # a cut is shorter
        messages = [cut(m, cuts[i]) if i in cuts else m for m, i in zip(sent, ids, strict=True)]
        costs = [cost(run, m) for m in [*messages, definitions]]
        goal = budget if sum(costs) * scale <= budget else int(budget * HEADROOM)
        while sum(costs) * scale > goal:
            longest = max(range(len(messages)), key=lambda i: lengths[i], default=None)
            step = shorter(lengths[longest]) if longest is not None else None
            if longest is None or step is None:
                break  # nothing left to cut: the server says what does not fit
            lengths[longest] = cuts[ids[longest]] = step
            messages[longest] = cut(sent[longest], lengths[longest])  # from the whole result: the same cut each turn
            costs[longest] = cost(run, messages[longest])
        if messages != sent:
            turn.request = replace(request, messages=messages)
        self.keep(run, Calibration(estimated=sum(costs), cuts=cuts))

    def on_reply(self, run: RunContext, turn: Turn, reply: ModelReply) -> ModelReply:
        memory = self.recall(run, Calibration)
        if self.context and turn.answer is None and reply.usage is not None and reply.usage.prompt_tokens:
            self.keep(run, replace(memory, counted=reply.usage.prompt_tokens))
        return reply

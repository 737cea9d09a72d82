"""fit_context: a request that would overflow the model's context window has its longest results cut."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import ClassVar

from harness.controls.base import Hooks, RunContext, Turn
from harness.controls.digest import CONTEXT_MARGIN, digit_tokens, trimmed
from wire.types import Message, ToolMessage

MIN_LINES = 8  # a result is not cut below this many lines


@dataclass(frozen=True)
class FitContext(Hooks):
    """A turn whose request would not fit the model's context window (`context` tokens, learned from the
    server, less the reply's max_tokens) is sent with its longest tool results cut to their head and tail
    (a line says how many were left out), longest first, until it fits; the run's transcript keeps them
    whole. A model that has read more than its window holds goes on looking instead of failing on the
    server's 400. Inert when the request fits or the window is unknown; an answer turn asked as a digest
    fits itself."""

    name: ClassVar[str] = "fit_context"
    context: int = 0

    def before_request(self, run: RunContext, turn: Turn) -> None:
        if not self.context or turn.answer is not None:
            return
        request = turn.request
        budget = int((self.context - (request.max_tokens or 0)) * CONTEXT_MARGIN)
        definitions: Message = {"role": "system", "content": json.dumps(list(request.tools))}
        messages = list(request.messages)

        def used() -> int:
            return sum(run.count(m) + digit_tokens(m) for m in [*messages, definitions])

        cut = False
        while used() > budget:
            lengths = [len(str(m.get("content") or "").splitlines()) if m["role"] == "tool" else 0 for m in messages]
            longest = max(range(len(messages)), key=lambda i: lengths[i], default=None)
            if longest is None or lengths[longest] <= MIN_LINES:
                break  # nothing left to cut: the server says what does not fit
            message = messages[longest]
            if message["role"] == "tool":
                shorter: ToolMessage = {
                    **message,
                    "content": trimmed(str(message["content"]), lengths[longest] * 2 // 3),
                }
                messages[longest] = shorter
            cut = True
        if cut:
            turn.request = replace(request, messages=messages)

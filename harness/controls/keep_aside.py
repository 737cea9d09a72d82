"""keep_aside: the tools a turn sets aside are kept from its reply, on a server that can keep them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from harness.controls.base import Hooks
from harness.core.turn import RunContext, Turn


@dataclass(frozen=True)
class KeepAside(Hooks):
    """A tool set aside for a turn (a listing already made, a reader with nothing left to read) stays in the
    prompt, so the prompt a server cached holds; only a forced call naming one tool would keep the model from
    calling it. On a server that takes OpenAI's `allowed_tools` (its card says so), a turn that must call
    lists the tools left, so a set-aside one cannot be called. A turn that may answer instead is left as it
    was: a small model kept from a tool it wrote a call to writes the call out as its answer; a call it
    repeats is refused, and asked again it is asked for the answer. Not in a profile: kept from listing
    again, a small model loses a second, sorted listing whose first line would have named what it wants."""

    name: ClassVar[str] = "keep_aside"
    allowed_tools: bool = False  # the server keeps a reply to the tools allowed_tools lists

    def before_request(self, run: RunContext, turn: Turn) -> None:
        turn.keeps_aside = self.allowed_tools

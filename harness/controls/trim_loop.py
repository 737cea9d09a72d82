"""trim_loop: an answer cut at max_tokens because it went round in a loop keeps what it said before the loop."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, replace
from typing import ClassVar

from harness.controls.base import Hooks
from harness.core.protocols import ModelReply
from harness.core.turn import RunContext, Turn

MARKER = re.compile(r"^\s*(?:\d+[.)]|[-*+])\s+")  # a list item's number or bullet: `12. x` repeats `3. x`
MOST_UNIT = 4  # characters of a unit that repeats at the very end (`]`, `}]`)
LEAST_REPEATS = 8
LEAST_LOOP_LINES = 3


@dataclass(frozen=True)
class TrimLoop(Hooks):
    """A reply without calls cut at max_tokens whose end repeats itself (the same lines again and again, a list
    renumbering items it already gave, or one character or a few over and over) loses that end: a small
    model at greedy decoding that starts to repeat itself does so until its tokens run out, and its answer
    is what it said before, followed by a page of noise. A reply that ended on its own, or whose end says
    something new, is left as it is."""

    name: ClassVar[str] = "trim_loop"

    def on_reply(self, run: RunContext, turn: Turn, reply: ModelReply) -> ModelReply:
        text = reply.message.get("content")
        if reply.finish_reason != "length" or reply.message.get("tool_calls") or not isinstance(text, str):
            return reply
        trimmed = before_loop(text)
        return reply if trimmed == text else replace(reply, message={**reply.message, "content": trimmed})


def before_loop(text: str) -> str:
    """The text without its looping end: a unit of a few characters repeated at the very end, then the lines
    before the last (which the cut left unfinished) that each say, numbering and bullets aside, what a line
    before them said."""
    text = text[: len(text) - repeated_end(text)].rstrip()
    lines = text.split("\n")[:-1]
    said = Counter(said_by(line) for line in lines)
    start = len(lines)
    while start > 0:
        line = said_by(lines[start - 1])
        said[line] -= 1
        if line and said[line] <= 0:
            break
        start -= 1
    if sum(1 for line in lines[start:] if said_by(line)) < LEAST_LOOP_LINES:
        return text
    return "\n".join(lines[:start]).rstrip()


def said_by(line: str) -> str:
    return MARKER.sub("", line).strip()


def repeated_end(text: str) -> int:
    """How many characters at the end of the text are one short unit repeated LEAST_REPEATS times or more."""
    for size in range(1, MOST_UNIT + 1):
        unit, end = text[-size:], len(text)
        while unit.strip() and end >= size and text[end - size : end] == unit:
            end -= size
        if (len(text) - end) // size >= LEAST_REPEATS:
            return len(text) - end
    return 0

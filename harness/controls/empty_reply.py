"""empty_reply: a reply with neither words nor a call (or only words of the instructions) is not the answer."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import Any, ClassVar

from harness.controls.base import Hooks, has_results
from harness.core.protocols import ModelReply, Tool
from harness.core.results import ToolResult
from harness.core.turn import NotYet, RunContext, Turn
from harness.prompts import empty_reply
from wire.types import Message, ToolCall


@dataclass
class Retries:
    retries: int = 0
    changed: bool = False  # a tool that changes something ran without an error


@dataclass(frozen=True)
class EmptyReply(Hooks):
    """A reply with neither words nor a call is asked again, at most `retries` times a run: first as the answer
    turn when the run has tool results (a small model that has what it needs often ends with nothing to
    say), else by requiring a call (it has not looked yet); then in words, with the question, unless the run
    may change files and has changed nothing, when it is the answer turn again (the turn that offers the
    tools that change files beside what was read: a model that read the file it was asked to change often
    ends with nothing, and asked in words, writes the changed file as its answer). A reply whose
    words are a piece of the run's instructions (a sentence of the system prompt, copied, maybe with a word
    changed) says nothing either: a small model unsure what to say recites what it was told."""

    name: ClassVar[str] = "empty_reply"
    retries: int = 2

    def on_answer(self, run: RunContext, turn: Turn, reply: ModelReply) -> NotYet | None:
        with self.remember(run, Retries) as memory:
            if said(run.state.messages, reply.message) or memory.retries >= self.retries:
                return None
            memory.retries += 1
        if memory.retries == 1 or (not memory.changed and any(not tool.read_only for tool in run.tools)):
            return NotYet("empty")
        return NotYet("empty", {"role": "user", "content": empty_reply(run.state.question)})

    def after_call(
        self, run: RunContext, call: ToolCall, tool: Tool, args: dict[str, Any], result: ToolResult, ok: bool
    ) -> None:
        if ok and not tool.read_only:
            with self.remember(run, Retries) as memory:
                memory.changed = True

    def decide(self, run: RunContext, turn: Turn) -> str | None:
        if after_empty(run) and turn.request.tools and has_results(run.state):
            return "empty reply"
        return None

    def before_request(self, run: RunContext, turn: Turn) -> None:
        if after_empty(run):
            turn.require()


def after_empty(run: RunContext) -> bool:
    """Whether the run's last message is a reply with neither words nor a call (see `said`)."""
    last = run.state.messages[-1]
    return last["role"] == "assistant" and not last.get("tool_calls") and not said(run.state.messages, last)


RECITED = 0.8  # of a reply's words, in runs of two or more copied in order from a system message


def said(messages: list[Message], reply: Message) -> str:
    """What a reply says: its words, or nothing when they are only a piece of a system message, copied as it
    is or with a word changed here and there ("which files say" for "which file says")."""
    text = " ".join(str(reply.get("content") or "").split())
    words = re.findall(r"\w+", text.lower())
    instructions = [re.findall(r"\w+", str(m.get("content") or "").lower()) for m in messages if m["role"] == "system"]
    recited = len(words) >= 4 and any(copied(words, told) >= RECITED * len(words) for told in instructions)
    return "" if recited else text


def copied(words: list[str], told: list[str]) -> int:
    """How many of `words` are in runs of two or more that `told` holds in the same order."""
    blocks = difflib.SequenceMatcher(None, words, told, autojunk=False).get_matching_blocks()
    return sum(block.size for block in blocks if block.size >= 2)

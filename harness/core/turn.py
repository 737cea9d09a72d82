"""A turn as the controls see it: what they may read of the run (`RunContext`), the turn being asked
(`Turn`), an answer that is not one yet (`NotYet`), and the hook points a control acts at (`Control`).

These are the loop's own seams, so they live in `core`; a control (`harness.controls`) implements `Control`,
and reaches the folder only through the run's index (`FolderIndex`, which `harness.index` implements).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

from harness.core.protocols import ModelReply, ModelRequest, Tool
from harness.core.registry import Registry
from harness.core.results import ToolResult
from harness.core.state import RunState
from wire.types import (
    TOOL_EXTENSIONS,
    AssistantMessage,
    Message,
    ToolCall,
    ToolChoice,
    allowing,
    choice_allows,
    choice_mode,
    choice_names,
)


class FileFacts(Protocol):
    """A file of the folder as the index holds it."""

    @property
    def path(self) -> str: ...

    @property
    def size(self) -> int: ...

    @property
    def modified(self) -> float: ...


class NamedPaths(Protocol):
    """What a text names of the folder by path."""

    @property
    def files(self) -> list[str]: ...

    @property
    def folders(self) -> list[str]: ...

    def holds(self, path: str) -> bool: ...


class FolderIndex(Protocol):
    """What a control may know of the folder: the one capability through which it sees it (harness.index)."""

    @property
    def root(self) -> Path: ...

    def files(self) -> Sequence[FileFacts]: ...

    def named(self, text: str) -> NamedPaths: ...

    def files_for(self, text: str, limit: int = 10) -> list[tuple[str, float]]: ...

    def words_here(self, text: str) -> list[str]: ...

    def defined_names(self) -> set[str]: ...

    def weights(self, text: str) -> dict[str, float]: ...

    def relevance(self, text: str, weights: dict[str, float]) -> float: ...


@dataclass(frozen=True)
class RunContext:
    """What a control may read of the run: its state (every control's memory in it), the tools, a token counter,
    and the index of the workspace, through which a control sees the folder (None for a run with no folder)."""

    state: RunState
    tools: Registry
    count: Callable[[Message], int]
    index: FolderIndex | None = None


@dataclass
class Turn:
    """The turn being asked: its request, why it is the answer turn (None while it may call tools), and the
    tools set aside for it (see `set_aside`)."""

    request: ModelRequest
    answer: str | None = None
    aside: set[str] = field(default_factory=set)
    keeps_aside: bool = False  # the server keeps a reply from the tools set aside, when asked (allowed_tools)
    finishing: list[str] = field(default_factory=list)  # on the answer turn, the tools it may still call

    def answer_now(self, why: str, finishing: Sequence[str] = ()) -> None:
        """Make this the answer turn, the one way there is: the model is done looking. No looking call may be
        made; of the `finishing` tools (the tools that change files, while the run has changed nothing: a
        task whose result is a change is finished by that change, not by words about it) the model may call
        one or answer, and with none no call may be made (tool_choice none). No field that names a tool is
        sent. The definitions stay, so the prompt is the one the turns before read and a server's cache
        keeps it; a reason already given stays."""
        if self.answer is not None:
            return
        request = self.request
        offered = [d["function"]["name"] for d in request.tools]
        self.finishing = [name for name in offered if name in finishing]
        self.aside |= set(offered) - set(self.finishing)
        extra = {key: value for key, value in request.extra.items() if key not in TOOL_EXTENSIONS}
        choice: ToolChoice | None = ("auto" if self.finishing else "none") if request.tools else None
        self.request = replace(request, tool_choice=choice, parallel_tool_calls=None, extra=extra)
        self.answer = why

    def require(self, name: str | None = None) -> None:
        """This turn must call a tool (`name`: that one). Several controls' requirements combine the same
        whichever asks first: a named tool over any tool, and of two named tools the first the request
        offers."""
        current = self.request.tool_choice
        if name is None:
            if choice_mode(current) == "auto" and not choice_names(current):
                self.request = replace(self.request, tool_choice="required")
            return
        named = choice_names(current) if choice_mode(current) == "required" else []
        if len(named) == 1:
            order = [d["function"]["name"] for d in self.request.tools]
            name = min((named[0], name), key=lambda n: order.index(n) if n in order else len(order))
        self.request = replace(self.request, tool_choice={"type": "function", "function": {"name": name}})

    def narrow(self, schemas: Mapping[str, Mapping[str, Any]]) -> None:
        """Keep each named tool's arguments to a schema, sent as `tool_parameters` (a server that takes it
        decodes the call's arguments by it). A tool narrowed twice keeps what both allow (`both`), the same
        whichever control narrowed it first."""
        if not schemas:
            return
        narrowed = dict(self.request.extra.get("tool_parameters") or {})
        for tool, schema in schemas.items():
            narrowed[tool] = both(narrowed[tool], schema) if tool in narrowed else schema
        self.request = replace(self.request, extra={**self.request.extra, "tool_parameters": narrowed})

    def set_aside(self, names: set[str]) -> None:
        """These tools are not to be called this turn. Their definitions stay in the request: chat templates
        write the tools near the top of the prompt, and a tool list that changed from turn to turn would
        make the server read the whole conversation again at every turn. A forced call is kept to the tools
        left (`settle`), named when one is left, or listed on a server that `keeps_aside`; when none is left
        the turn has nothing more to look at (`nothing_left`)."""
        self.aside |= names

    def left(self) -> list[str]:
        """The names of the tools the request offers that are not set aside, in the request's order."""
        return [d["function"]["name"] for d in self.request.tools if d["function"]["name"] not in self.aside]

    def nothing_left(self) -> bool:
        """Whether the request offers tools and every one of them is set aside."""
        names = {d["function"]["name"] for d in self.request.tools}
        return bool(names) and names <= self.aside

    def settle(self) -> ModelRequest:
        """The request as sent: a forced choice kept to the tools not set aside, and named when one is left; on
        a server that keeps a reply from them, a forced choice (and the answer turn's choice of its finishing
        tools) lists those left (allowed_tools). Elsewhere a choice that may answer instead is left as it was:
        a small model that writes a call to a tool it may not call writes it as text, and that text would be
        its answer (a call the answer turn did not offer is dropped when it comes back)."""
        left = self.left()
        if left and self.aside:
            choice = kept_to(self.request.tool_choice, left)
            mode = choice_mode(choice)
            if self.keeps_aside and mode != "none" and not choice_names(choice) and (mode == "required" or self.answer):
                choice = allowing(mode, left)  # a forced call, or the answer turn's finishing tools
            self.request = replace(self.request, tool_choice=choice)
        return self.request


@dataclass(frozen=True)
class NotYet:
    """A reply without calls that is not the answer yet: why (recorded in the trace), and the words, if any,
    added to the transcript before the next turn."""

    reason: str
    ask: Message | None = None


class Control(Protocol):
    """One concern of the harness for a model, acting at some of the named points of a turn."""

    @property
    def name(self) -> str: ...

    def decide(self, run: RunContext, turn: Turn) -> str | None: ...

    def before_request(self, run: RunContext, turn: Turn) -> None: ...

    def before_send(self, run: RunContext, turn: Turn) -> None: ...

    def on_reply(self, run: RunContext, turn: Turn, reply: ModelReply) -> ModelReply: ...

    def on_answer(self, run: RunContext, turn: Turn, reply: ModelReply) -> NotYet | None: ...

    def before_call(
        self, run: RunContext, call: ToolCall, tool: Tool, args: dict[str, Any]
    ) -> str | ToolResult | None: ...

    def after_call(
        self, run: RunContext, call: ToolCall, tool: Tool, args: dict[str, Any], result: ToolResult, ok: bool
    ) -> None: ...


def calls_kept(reply: ModelReply, keep: Collection[str]) -> ModelReply:
    """The reply without its calls to tools other than `keep` (an answer turn's calls to what it did not offer)."""
    calls = reply.message.get("tool_calls") or []
    kept = [c for c in calls if c["function"]["name"] in keep]
    if len(kept) == len(calls):
        return reply
    message: AssistantMessage = {"role": "assistant", "content": reply.message.get("content") or ""}
    if kept:
        message["tool_calls"] = kept
    return replace(reply, message=message, finish_reason="tool_calls" if kept else "stop")


def both(a: Mapping[str, Any], b: Mapping[str, Any]) -> Mapping[str, Any]:
    """What two object schemas for one tool's arguments both allow: of a closed schema only its properties, of
    a property listed by both the values both list (in the order of the shorter list; where none is in both,
    the shorter list), every property either requires. The same either way round."""
    if a == b:
        return a
    a_props, b_props = dict(a.get("properties") or {}), dict(b.get("properties") or {})
    a_closed, b_closed = a.get("additionalProperties") is False, b.get("additionalProperties") is False
    keys = set(a_props) | set(b_props)
    if a_closed:
        keys &= set(a_props)
    if b_closed:
        keys &= set(b_props)
    properties = {}
    for key in sorted(keys):
        pa, pb = a_props.get(key), b_props.get(key)
        properties[key] = pa if pb is None else pb if pa is None else both_values(pa, pb)
    required = sorted((set(a.get("required") or ()) | set(b.get("required") or ())) & keys)
    merged: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        merged["required"] = required
    if a_closed or b_closed:
        merged["additionalProperties"] = False
    return merged


def both_values(a: Mapping[str, Any], b: Mapping[str, Any]) -> Mapping[str, Any]:
    """What two schemas of one property both allow, as far as lists of values go (`enum`); where they differ in
    anything else, the one that sorts first as JSON, so that the result does not depend on which came first."""
    merged: dict[str, Any] = {}
    for key in sorted(set(a) | set(b)):
        if key not in b or key not in a:
            merged[key] = a[key] if key in a else b[key]
        elif key == "enum":
            shorter, longer = sorted((list(a[key]), list(b[key])), key=lambda v: (len(v), json.dumps(v)))
            merged[key] = [value for value in shorter if value in longer] or shorter
        else:
            merged[key] = min(a[key], b[key], key=lambda value: json.dumps(value, sort_keys=True))
    return merged


def kept_to(choice: ToolChoice | None, left: list[str]) -> ToolChoice | None:
    """A tool_choice that calls only the tools left: a forced call names the tool when one is left; a choice
    that names tools names only those left (any of them, when it named none that is)."""
    mode, allowed = choice_allows(choice, left)
    if mode == "none":
        return choice
    if mode == "required" and len(allowed or left) == 1:
        return {"type": "function", "function": {"name": (allowed or left)[0]}}
    if not choice_names(choice):
        return choice
    if isinstance(choice, dict) and choice["type"] == "allowed_tools":
        return allowing(mode, allowed or left)
    return "required"  # the tool it named is set aside

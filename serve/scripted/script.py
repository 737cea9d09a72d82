"""What a scenario sees (the transcript) and what it returns (a reply): plain data, no I/O."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from serve.errors import ScriptExhausted
from wire import digest
from wire.types import decoded_arguments


@dataclass(frozen=True)
class Call:
    id: str
    name: str
    arguments: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Reply:
    content: str | None = None
    calls: tuple[Call, ...] = ()


@dataclass(frozen=True)
class ToolResult:
    call_id: str
    name: str
    arguments: Mapping[str, Any]
    content: str


@dataclass(frozen=True)
class Transcript:
    """The request's messages, read the way every scenario reads them."""

    model: str
    messages: Sequence[Mapping[str, Any]]
    response_format: Any = None  # the request's response_format, for a scenario that produces structured replies

    @property
    def turn(self) -> int:
        """How many assistant turns the request already contains: the index of the reply asked for."""
        return sum(1 for message in self.messages if message["role"] == "assistant")

    @property
    def question(self) -> str:
        first = next((str(m["content"]) for m in self.messages if m["role"] == "user"), "")
        read = digest.read(first)
        return first if read is None else read[0]

    @property
    def tool_text(self) -> str:
        return "\n".join(str(m["content"]) for m in self.messages if m["role"] == "tool")

    def results(self) -> list[ToolResult]:
        """Every tool result, paired with the call it answers; a digest's results count as the tool's own."""
        calls: dict[str, tuple[str, Mapping[str, Any]]] = {}
        results = []
        for message in self.messages:
            if message["role"] == "user" and (read := digest.read(str(message["content"]))) is not None:
                for index, found in enumerate(read[1]):
                    arguments = found.arguments if not isinstance(found.arguments, str) else {}
                    results.append(ToolResult(f"digest_{index}", found.name, arguments, found.result))
            for call in message.get("tool_calls") or []:
                calls[call["id"]] = (call["function"]["name"], parse_arguments(call["function"]["arguments"]))
            if message["role"] == "tool" and message["tool_call_id"] in calls:
                name, arguments = calls[message["tool_call_id"]]
                results.append(ToolResult(message["tool_call_id"], name, arguments, str(message["content"])))
        return results

    def result_of(self, call_id: str) -> str | None:
        return next((r.content for r in self.results() if r.call_id == call_id), None)

    def exhausted(self) -> ScriptExhausted:
        return ScriptExhausted(f"scenario {self.model!r} has no reply for turn {self.turn}: its script has run out")


def parse_arguments(arguments: str) -> Mapping[str, Any]:
    parsed = decoded_arguments(arguments)
    return parsed if isinstance(parsed, dict) else {}


def text(content: str) -> Reply:
    return Reply(content=content)


def asks(*calls: Call) -> Reply:
    return Reply(calls=calls)


def call(call_id: str, name: str, **arguments: Any) -> Call:
    return Call(call_id, name, arguments)


@dataclass(frozen=True)
class Scenario:
    """A scripted model. `answer_now` is its reply when tools are refused (tool_choice none); `structured`
    says it can produce a response_format reply."""

    name: str
    description: str
    reply: Callable[[Transcript], Reply]
    answer_now: Callable[[Transcript], str] = lambda t: "I cannot answer without calling a tool first."
    forced_call: Callable[[Transcript, str | None], Reply] | None = None  # a call (to the named tool, if named)
    # when tool_choice requires one that its reply does not make
    structured: bool = False

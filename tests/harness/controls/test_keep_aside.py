"""keep_aside: on a server that takes allowed_tools, a tool set aside cannot be called, whether the turn must
call or may; elsewhere the request is what it was, and a forced call is still kept to the tools left."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import ClassVar

import pytest

from harness.controls import Hooks
from harness.controls.keep_aside import KeepAside
from harness.controls.profiles import facts_of
from harness.core.loop import run
from harness.core.options import RunOptions
from harness.core.protocols import ModelRequest
from harness.core.registry import Registry
from harness.core.state import new_run
from harness.core.turn import RunContext, Turn, kept_to
from tests.harness.controls.support import QUESTION, answering, qwen, reads
from tests.harness.helpers import Recorder
from wire.types import ToolChoice, allowing

NAMED: ToolChoice = {"type": "function", "function": {"name": "probe"}}


@dataclass(frozen=True)
class SetsAside(Hooks):
    """Sets `other` aside at every turn and asks for the choice given."""

    name: ClassVar[str] = "sets_aside"
    choice: ToolChoice | None = None

    def before_request(self, run: RunContext, turn: Turn) -> None:
        turn.request = replace(turn.request, tool_choice=self.choice)
        turn.set_aside({"other"})


async def first_request(choice: ToolChoice | None, *controls: Hooks) -> ModelRequest:
    model, seen = answering(reads(1), "It is 7.")
    tools = Registry([Recorder(), Recorder(name="other"), Recorder(name="third")])
    await run(new_run(QUESTION), tools, RunOptions(model, controls=[SetsAside(choice), *controls]))
    return seen[0]


async def test_a_tool_set_aside_is_left_out_of_the_tools_a_forced_reply_may_call() -> None:
    sent = await first_request("required", KeepAside(allowed_tools=True))
    assert sent.tool_choice == allowing("required", ["probe", "third"])
    assert [d["function"]["name"] for d in sent.tools] == ["probe", "other", "third"]  # the prompt keeps them all


@pytest.mark.parametrize("choice", [None, "auto"])
async def test_a_turn_that_may_answer_instead_is_left_as_it_was(choice: ToolChoice | None) -> None:
    """Kept from a tool it writes a call to, a small model writes the call as text, its answer."""
    assert (await first_request(choice, KeepAside(allowed_tools=True))).tool_choice == choice


@pytest.mark.parametrize("choice", [None, "required", NAMED, "none"])
async def test_a_server_that_does_not_say_it_keeps_them_gets_the_request_it_got(choice: ToolChoice | None) -> None:
    sent = await first_request(choice, KeepAside())
    assert sent.tool_choice == choice
    assert (await first_request(choice)).tool_choice == choice


async def test_a_named_call_and_an_answer_turn_are_left_as_they_are() -> None:
    assert (await first_request(NAMED, KeepAside(allowed_tools=True))).tool_choice == NAMED
    assert (await first_request("none", KeepAside(allowed_tools=True))).tool_choice == "none"


def test_a_choice_is_kept_to_the_tools_left() -> None:
    other: ToolChoice = {"type": "function", "function": {"name": "other"}}
    assert kept_to("required", ["probe"]) == NAMED  # one left: named
    assert kept_to(other, ["probe", "third"]) == "required"  # the named tool is set aside: any left
    assert kept_to(other, ["probe"]) == NAMED
    assert kept_to(allowing("auto", ["other", "third"]), ["probe", "third"]) == allowing("auto", ["third"])
    assert kept_to(allowing("required", ["other", "third"]), ["probe", "third"]) == {
        "type": "function",
        "function": {"name": "third"},
    }
    assert kept_to(allowing("auto", ["other"]), ["probe", "third"]) == allowing("auto", ["probe", "third"])
    assert kept_to(None, ["probe", "third"]) is None and kept_to("none", ["probe"]) == "none"


def test_the_server_says_whether_it_keeps_them() -> None:
    assert facts_of(qwen(extensions=["allowed_tools"])) == {"allowed_tools": True}
    assert facts_of(qwen(extensions=["tool_parameters"])) == {"tool_parameters": True}

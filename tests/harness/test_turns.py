"""When a reply counts as the answer, and how the next turn is asked: the small-model controls one by one."""

from __future__ import annotations

from dataclasses import replace

from harness.client import FunctionModel
from harness.limits import Limits
from harness.loop import run
from harness.options import RunOptions
from harness.protocols import ModelReply
from harness.state import new_run
from harness.tools.base import Registry
from harness.trace import MemoryTrace
from tests.harness.helpers import PLAIN, Recorder, calls, script
from wire.types import AssistantMessage, Message, ToolDefinition, usage_of

QUESTION = "Which probe value is right?"


def answering(*replies: AssistantMessage | str) -> tuple[FunctionModel, list[list[Message]]]:
    """A model that replies from a fixed list and keeps every transcript it was shown."""
    seen: list[list[Message]] = []

    def reply(messages: list[Message], tools: list[ToolDefinition]) -> ModelReply:
        seen.append(list(messages))
        out = replies[len(seen) - 1]
        message: AssistantMessage = {"role": "assistant", "content": out} if isinstance(out, str) else out
        return ModelReply(message, usage_of(10, 2), "tool_calls" if message.get("tool_calls") else "stop")

    return FunctionModel(reply), seen


async def test_verify_answer_asks_once_to_check_the_first_answer_and_keeps_the_second() -> None:
    probe = Recorder(output="value 7")
    model, seen = answering(calls(("c1", "probe", {"x": 1})), "It is 3.", calls(("c2", "probe", {"x": 2})), "It is 7.")
    trace = MemoryTrace()
    options = RunOptions(model=model, controls=replace(PLAIN, verify_answer=True), trace=trace)
    result = await run(new_run(QUESTION, limits=Limits(max_turns=8)), Registry([probe]), options)
    assert (result.status, result.answer, result.turns) == ("completed", "It is 7.", 4)
    check = seen[2][-1]
    assert check["role"] == "user" and QUESTION in str(check["content"]) and "call a tool" in str(check["content"])
    assert [e["why"] for e in trace.events if e["type"] == "not_an_answer"] == ["unchecked"]
    assert probe.runs == [{"x": 1}, {"x": 2}]  # the check let the model look further


async def test_without_verify_answer_the_first_answer_stands() -> None:
    model = script(calls(("c1", "probe", {"x": 1})), "It is 3.")
    result = await run(new_run(QUESTION), Registry([Recorder()]), RunOptions(model=model, controls=PLAIN))
    assert (result.status, result.answer, result.turns) == ("completed", "It is 3.", 2)


async def test_verify_answer_survives_a_resume_and_never_asks_twice() -> None:
    options = RunOptions(model=script("It is 3.", "It is 3, checked."), controls=replace(PLAIN, verify_answer=True))
    first = await run(new_run(QUESTION, limits=Limits(max_turns=1)), Registry([Recorder()]), options)
    assert first.status == "max_turns_exceeded" and first.checked
    again = await run(replace(first, limits=Limits(max_turns=3)), Registry([Recorder()]), options)
    assert (again.status, again.answer, again.turns) == ("completed", "It is 3, checked.", 2)


async def test_an_answer_turn_is_not_checked_again() -> None:
    """An answer the harness asked for (here after a repeated call) is taken as it comes."""
    model, seen = answering(calls(("c1", "probe", {"x": 1})), calls(("c2", "probe", {"x": 1})), "It is 3.")
    controls = replace(PLAIN, verify_answer=True, repeat_guard=True, repeats_before_answer=1)
    result = await run(new_run(QUESTION), Registry([Recorder()]), RunOptions(model=model, controls=controls))
    assert (result.status, result.answer, result.turns) == ("completed", "It is 3.", 3)
    assert "Not run again" in str(seen[2][-1]["content"])


async def test_tool_talk_on_an_answer_turn_is_asked_again_in_words() -> None:
    """Asked to answer, a small model often explains how to call a tool instead; that is not the answer."""
    replies = (calls(("c1", "probe", {"x": 1})), calls(("c2", "probe", {"x": 1})), "Call `probe` with x=1.", "It is 3.")
    model, seen = answering(*replies)
    controls = replace(PLAIN, tool_talk=True, repeat_guard=True, repeats_before_answer=1)
    result = await run(new_run(QUESTION), Registry([Recorder()]), RunOptions(model=model, controls=controls))
    assert (result.status, result.answer, result.turns) == ("completed", "It is 3.", 4)
    reask = seen[3][-1]
    assert reask["role"] == "user" and QUESTION in str(reask["content"]) and "do not describe" in str(reask["content"])

    model, _ = answering(*replies)
    controls = replace(controls, tool_talk=False)
    result = await run(new_run(QUESTION), Registry([Recorder()]), RunOptions(model=model, controls=controls))
    assert (result.status, result.answer, result.turns) == ("completed", "Call `probe` with x=1.", 3)

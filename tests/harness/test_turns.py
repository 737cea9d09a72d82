"""When a reply counts as the answer, and how the next turn is asked: the small-model controls one by one."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from harness.client import FunctionModel
from harness.context import ContextTooSmall
from harness.limits import Limits
from harness.loop import run
from harness.options import RunOptions
from harness.protocols import ModelReply
from harness.state import new_run
from harness.store import FileStore
from harness.tools.base import Registry
from harness.trace import MemoryTrace
from harness.turns import PROSE_GRAMMAR, request_for
from tests.harness.helpers import PLAIN, Recorder, calls, script
from wire.digest import Finding, read
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
    controls = replace(PLAIN, verify_answer=True, repeat_guard=True, repeats_before_answer=1, answer_mode="prose")
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


DIGEST = replace(PLAIN, answer_from_results=True)


async def test_answer_from_results_asks_the_answer_again_beside_the_results_alone() -> None:
    """A small model's first answer often echoes the last result; the digest's reply is the answer instead."""
    probe = Recorder(output="value 7")
    model, seen = answering(calls(("c1", "probe", {"x": 1})), "value 7", "It is 7.")
    trace = MemoryTrace()
    options = RunOptions(model=model, controls=DIGEST, trace=trace)
    state = new_run(QUESTION, system="Answer from the files.")
    result = await run(state, Registry([probe]), options)
    assert (result.status, result.answer, result.turns, result.digest) == ("completed", "It is 7.", 3, "done")
    system, digest = seen[2]
    assert system == {"role": "system", "content": "Answer from the files."}
    assert read(str(digest["content"])) == (QUESTION, [Finding("probe", {"x": 1}, "value 7")])
    assert [e["why"] for e in trace.events if e["type"] == "not_an_answer"] == ["digest"]
    assert [e["answer_turn"] for e in trace.events if e["type"] == "turn"] == [None, None, "digest"]


async def test_a_digest_offers_no_tools_and_asks_for_prose() -> None:
    state = new_run(QUESTION)
    state.messages += [calls(("c1", "probe", {"x": 1})), {"role": "tool", "tool_call_id": "c1", "content": "value 7"}]
    state.digest = "due"
    request, dropped = request_for(state, Registry([Recorder()]).definitions(), DIGEST, 64, lambda _: 0)
    assert (request.tools, request.tool_choice, request.parallel_tool_calls, dropped) == ([], None, None, 0)
    assert request.extra == {"grammar": PROSE_GRAMMAR} and request.max_tokens == 64


async def test_without_tool_results_an_answer_is_not_asked_again() -> None:
    result = await run(new_run(QUESTION), Registry([Recorder()]), RunOptions(model=script("It is 3."), controls=DIGEST))
    assert (result.status, result.answer, result.turns, result.digest) == ("completed", "It is 3.", 1, "none")


async def test_a_digest_holds_each_distinct_call_once_and_is_asked_once() -> None:
    """A repeated call is refused and leads to an answer turn, asked as the digest; its reply is the answer."""
    probe = Recorder(output="value 7")
    replies = (calls(("c1", "probe", {"x": 1})), calls(("c2", "probe", {"x": 1}), ("c3", "probe", {"x": 2})), "7")
    model, seen = answering(*replies)
    controls = replace(DIGEST, repeat_guard=True, answer_mode="digest")
    result = await run(new_run(QUESTION), Registry([probe]), RunOptions(model=model, controls=controls))
    assert (result.status, result.answer, result.turns) == ("completed", "7", 3)
    assert probe.runs == [{"x": 1}, {"x": 2}]
    [digest] = seen[2]
    assert read(str(digest["content"])) == (
        QUESTION,
        [Finding("probe", {"x": 1}, "value 7"), Finding("probe", {"x": 2}, "value 7")],
    )


async def test_a_digest_due_when_the_run_stopped_is_asked_after_a_resume(tmp_path: Path) -> None:
    store = FileStore(tmp_path)
    model, seen = answering(calls(("c1", "probe", {"x": 1})), "value 7", "It is 7.")
    options = RunOptions(model=model, controls=DIGEST, store=store)
    first = await run(new_run(QUESTION, limits=Limits(max_turns=2)), Registry([Recorder()]), options)
    assert (first.status, first.digest) == ("max_turns_exceeded", "due")
    saved = store.load(first.run_id)
    assert saved.digest == "due"
    again = await run(replace(saved, limits=Limits(max_turns=4)), Registry([Recorder()]), options)
    assert (again.status, again.answer, again.turns) == ("completed", "It is 7.", 3)
    assert len(seen) == 3 and read(str(seen[2][-1]["content"])) is not None


def test_under_a_context_budget_a_digest_keeps_the_newest_results() -> None:
    state = new_run(QUESTION, limits=Limits(context_tokens=40))
    for index in range(3):
        call_id = f"c{index}"
        state.messages += [
            calls((call_id, "probe", {"x": index})),
            {"role": "tool", "tool_call_id": call_id, "content": f"result {index} " + "word " * 10},
        ]
    state.digest = "due"
    request, _ = request_for(state, [], DIGEST, None, lambda m: len(str(m["content"]).split()))
    kept = read(str(request.messages[-1]["content"]))
    assert kept is not None and [f.arguments for f in kept[1]] == [{"x": 2}]

    with pytest.raises(ContextTooSmall):
        request_for(replace(state, limits=Limits(context_tokens=5)), [], DIGEST, None, lambda m: 10)


async def test_calls_in_a_digest_reply_are_never_run() -> None:
    """No tools are offered with a digest; a server that returns a call anyway (here reusing an earlier id) gets
    its words taken as the answer, and nothing runs."""
    probe = Recorder(output="value 7")
    sneaky: AssistantMessage = {**calls(("c1", "probe", {"x": 9})), "content": "It is 7."}
    model, _ = answering(calls(("c1", "probe", {"x": 1})), "value 7", sneaky)
    result = await run(new_run(QUESTION), Registry([probe]), RunOptions(model=model, controls=DIGEST))
    assert (result.status, result.answer, probe.runs) == ("completed", "It is 7.", [{"x": 1}])
    assert sum(1 for m in result.messages if m["role"] == "tool") == 1

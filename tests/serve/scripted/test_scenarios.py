"""scenarios: each scripted model a pure function of the transcript, its replies read off what the tools said."""

from __future__ import annotations

import json
from typing import Any

import pytest

from serve.errors import ScriptExhausted
from serve.scripted.scenarios import SCENARIOS, scenarios
from serve.scripted.script import Call, Reply, Transcript


def replayed(name: str, question: str, *results: str) -> list[Reply]:
    """The scenario's replies, turn by turn, each tool result given in order; the same transcript twice
    must give the same reply (a pure function)."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": question}]
    pending = list(results)
    replies: list[Reply] = []
    scenario = scenarios()[name]
    while True:
        reply = scenario.reply(Transcript(name, list(messages)))
        assert scenario.reply(Transcript(name, list(messages))) == reply
        replies.append(reply)
        if not reply.calls:
            return replies
        messages.append({"role": "assistant", "content": None, "tool_calls": [wire(c) for c in reply.calls]})
        for c in reply.calls:
            messages.append({"role": "tool", "tool_call_id": c.id, "content": pending.pop(0)})


def wire(c: Call) -> dict[str, Any]:
    return {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": json.dumps(c.arguments)}}


def names(replies: list[Reply]) -> list[str]:
    return [c.name for r in replies for c in r.calls]


def test_every_scenario_is_found_by_its_name_once() -> None:
    assert len(scenarios()) == len(SCENARIOS) and all(scenarios()[s.name] is s for s in SCENARIOS)


@pytest.mark.parametrize(
    ("log", "answer"),
    [
        ("INFO ok\nERROR worker 7 timed out\n", "errors.log mentions a timeout: ERROR worker 7 timed out"),
        ("INFO ok\n", "errors.log mentions a timeout: no line about a timeout"),
    ],
)
def test_plan_answers_with_the_line_the_read_returned(log: str, answer: str) -> None:
    replies = replayed("plan", "What about the timeout?", "errors.log\n", log)
    assert names(replies) == ["list_files", "read_file"] and replies[-1].content == answer


@pytest.mark.parametrize(
    ("slot", "ends"),
    [
        ("Deleted access.log.", "Deleted access.log to free space."),
        ("Not run: the person declined this call.", "I did not delete anything: you declined the deletion."),
        ("Error: no such file: access.log", "I could not delete access.log. Error: no such file: access.log"),
    ],
)
def test_destructive_says_what_the_delete_slot_said(slot: str, ends: str) -> None:
    replies = replayed("destructive", "Tidy up.", "access.log\n", slot)
    assert names(replies) == ["list_files", "delete_file"] and replies[-1].content == ends


def test_recover_lists_only_when_an_error_tells_it_to() -> None:
    told = replayed("recover", "q", "Error: no such file: timeout.log. Call list_files to see what exists.", "x", "y")
    assert names(told) == ["read_file", "list_files", "read_file"]
    assert told[-1].content == "errors.log mentions a timeout."
    untold = replayed("recover", "q", "Error: permission denied")
    assert untold[-1].content == "I could not read the file, so I do not know."


def test_runaway_never_answers_and_a_script_that_ran_out_says_so() -> None:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "q"}]
    for turn in range(5):
        reply = scenarios()["runaway"].reply(Transcript("runaway", messages))
        assert [c.name for c in reply.calls] == ["list_files"] and reply.calls[0].id == f"c{turn + 1}"
        messages += [{"role": "assistant", "content": "", "tool_calls": [wire(reply.calls[0])]}]
    done = [*messages[:1], {"role": "assistant", "content": "a"}, {"role": "assistant", "content": "b"}]
    with pytest.raises(ScriptExhausted, match="scenario 'single_read' has no reply for turn 2"):
        scenarios()["single_read"].reply(Transcript("single_read", done))


def test_the_repeating_scenarios_repeat_one_call_under_new_ids() -> None:
    for name, tool in (("repeat", "read_file"), ("repeat_write", "delete_file")):
        calls = [c for r in replayed(name, "q", "one", "two") for c in r.calls]
        assert [c.name for c in calls] == [tool, tool] and calls[0].arguments == calls[1].arguments
        assert calls[0].id != calls[1].id

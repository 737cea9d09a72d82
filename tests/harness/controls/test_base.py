"""The hook points: a control of one's own is one object in the list."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import ClassVar

from harness.app.trace import MemoryTrace
from harness.controls import Hooks
from harness.core.loop import run
from harness.core.options import RunOptions
from harness.core.protocols import ModelReply
from harness.core.registry import Registry
from harness.core.state import new_run
from harness.core.turn import NotYet, RunContext, Turn
from harness.fs.workspace import Workspace
from harness.tools.writes import AppendFile
from tests.harness.controls.support import QUESTION, answering, reads
from tests.harness.helpers import Recorder, calls


async def test_a_control_of_ones_own_is_one_object_in_the_list() -> None:
    """Adding a control is one object: here, one that will not take an answer before any tool has run."""

    @dataclass(frozen=True)
    class LooksBeforeAnswering(Hooks):
        name: ClassVar[str] = "looks_before_answering"

        def on_answer(self, run: RunContext, turn: Turn, reply: ModelReply) -> NotYet | None:
            looked = any(m["role"] == "tool" for m in run.state.messages)
            return None if looked else NotYet("nothing looked at", {"role": "user", "content": "Look first."})

    model, seen = answering("It is 3.", reads(1), "It is 7.")
    result = await run(new_run(QUESTION), Registry([Recorder()]), RunOptions(model, controls=[LooksBeforeAnswering()]))
    assert (result.answer, result.turns) == ("It is 7.", 3) and seen[1].messages[-1]["content"] == "Look first."


@dataclass(frozen=True)
class Deciding(Hooks):
    """Decides the answer turn at the turn numbers given, and notes which phases it was asked in."""

    name: ClassVar[str] = "deciding"
    at: tuple[int, ...] = ()
    asked: list[tuple[int, str]] = field(default_factory=list)

    name_: str = "deciding"

    def decide(self, run: RunContext, turn: Turn) -> str | None:
        self.asked.append((run.state.turns, "decide"))
        return f"{self.name_} says so" if run.state.turns in self.at else None

    def before_request(self, run: RunContext, turn: Turn) -> None:
        self.asked.append((run.state.turns, "before_request"))
        turn.request = replace(
            turn.request, tool_choice="required", parallel_tool_calls=True, extra={"distinct_calls": ["probe"]}
        )

    def before_send(self, run: RunContext, turn: Turn) -> None:
        self.asked.append((run.state.turns, "before_send"))


async def test_any_reason_given_makes_the_answer_turn_and_the_call_shapers_are_not_asked() -> None:
    first, second = Deciding(at=(1,)), Deciding(at=(1,), name_="other")
    model, seen = answering(reads(1), "It is 7.")
    trace = MemoryTrace()
    options = RunOptions(model, controls=[first, second], trace=trace)
    result = await run(new_run(QUESTION), Registry([Recorder()]), options)
    assert result.answer == "It is 7."
    assert first.asked == [(0, "decide"), (0, "before_request"), (0, "before_send"), (1, "decide"), (1, "before_send")]
    assert second.asked == first.asked  # every control is asked, whichever says so
    answer_turn = seen[1]
    assert answer_turn.tool_choice == "none" and [d["function"]["name"] for d in answer_turn.tools] == ["probe"]
    assert answer_turn.parallel_tool_calls is None and "distinct_calls" not in answer_turn.extra
    assert seen[0].tool_choice == "required"  # the turn before could call, and was shaped
    answer_turns = [e["answer_turn"] for e in trace.events if e["type"] == "turn"]
    assert answer_turns == [None, "deciding says so; other says so"]  # every reason, in one order


async def test_a_turn_whose_every_tool_is_set_aside_is_the_answer_turn() -> None:
    @dataclass(frozen=True)
    class SetsAsideAfterOne(Hooks):
        name: ClassVar[str] = "sets_aside"

        def before_request(self, run: RunContext, turn: Turn) -> None:
            if run.state.turns:
                turn.set_aside({"probe"})

    model, seen = answering(reads(1), "It is 7.")
    trace = MemoryTrace()
    result = await run(
        new_run(QUESTION), Registry([Recorder()]), RunOptions(model, controls=[SetsAsideAfterOne()], trace=trace)
    )
    assert result.answer == "It is 7." and seen[0].tool_choice is None and seen[1].tool_choice == "none"
    assert [e["answer_turn"] for e in trace.events if e["type"] == "turn"] == [None, "nothing left to look at"]


async def test_the_answer_turn_may_still_make_the_change_asked_for_until_one_is_made(workspace: Path) -> None:
    """The answer turn is done looking: a looking call is not offered (and one made anyway is dropped), while
    the tools that change files stay callable until the run has changed a file."""
    probe = Recorder()
    tools = Registry([probe, AppendFile(Workspace(workspace), needs_approval=False)])
    looks_again = calls(("c9", "probe", {"x": 1}))
    looks_again["content"] = "Done."
    model, seen = answering(reads(1), looks_again)
    result = await run(new_run(QUESTION), tools, RunOptions(model, controls=[Deciding(at=(1,))]))
    assert seen[1].tool_choice == "auto" and result.answer == "Done." and len(probe.runs) == 1
    append = calls(("c1", "append_file", {"path": "notes.txt", "content": "x\n"}))
    model, seen = answering(append, "Added.")
    result = await run(new_run(QUESTION), tools, RunOptions(model, controls=[Deciding(at=(1,))]))
    assert seen[1].tool_choice == "none" and result.answer == "Added."  # changed: nothing left to call

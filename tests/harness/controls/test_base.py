"""The hook points: a control of one's own is one object in the list."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from harness.controls import Hooks, NotYet, RunContext, Turn
from harness.core.loop import run
from harness.core.options import RunOptions
from harness.core.protocols import ModelReply
from harness.core.state import new_run
from harness.tools.base import Registry
from tests.harness.controls.support import QUESTION, answering, reads
from tests.harness.helpers import Recorder


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

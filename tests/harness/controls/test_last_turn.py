"""last_turn: the last turn the cap allows asks for the answer."""

from __future__ import annotations

from harness.controls.digest import DigestAnswers
from harness.controls.last_turn import LastTurn
from harness.core.limits import Limits
from harness.core.loop import run
from harness.core.options import RunOptions
from harness.core.registry import Registry
from harness.core.state import new_run
from tests.harness.controls.support import QUESTION, answering, reads
from tests.harness.helpers import Recorder
from wire.digest import read


async def test_the_last_turn_the_cap_allows_asks_for_the_answer_from_what_was_found() -> None:
    probe = Recorder(output="value 7")
    model, seen = answering(reads(1), reads(2), "It is 7.")
    options = RunOptions(model=model, controls=[LastTurn(), DigestAnswers()])
    result = await run(new_run(QUESTION, limits=Limits(max_turns=3)), Registry([probe]), options)
    assert (result.status, result.answer, result.turns) == ("completed", "It is 7.", 3)
    assert seen[1].tools and seen[2].tools == [] and read(str(seen[2].messages[-1]["content"])) is not None
    never_looked, _ = answering(reads(1))
    ended = await run(
        new_run(QUESTION, limits=Limits(max_turns=1)),
        Registry([probe]),
        RunOptions(never_looked, controls=[LastTurn()]),
    )
    assert ended.status == "max_turns_exceeded"  # nothing found yet: nothing to answer from

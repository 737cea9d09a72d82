"""trim_loop: an answer cut at max_tokens because it went round in a loop keeps what it said before the loop."""

from __future__ import annotations

from harness.app.client import FunctionModel
from harness.controls.trim_loop import TrimLoop, before_loop
from harness.core.loop import run
from harness.core.options import RunOptions
from harness.core.protocols import ModelReply, ModelRequest
from harness.core.registry import Registry
from harness.core.state import new_run
from wire.types import usage_of

LISTED = "The folder holds these programs:\n\n1. `a/a.py`\n2. `b/b.py`\n3. `c/setup.py`\n4. `d/d.py`"
LOOPED = LISTED + "\n5. `c/setup.py`\n6. `a/a.py`\n7. `c/setup.py`\n8. `a/a.py`\n9. `c/setup.py`\n1" + "]" * 30


def replying(text: str, finish: str) -> FunctionModel:
    def reply(request: ModelRequest) -> ModelReply:
        return ModelReply({"role": "assistant", "content": text}, usage_of(10, 1024), finish)

    return FunctionModel(reply)


async def test_an_answer_cut_at_max_tokens_loses_the_loop_it_ended_in() -> None:
    result = await run(
        new_run("Which programs?"), Registry([]), RunOptions(replying(LOOPED, "length"), controls=[TrimLoop()])
    )
    assert result.status == "completed" and result.reason == "the model answered (cut at max_tokens)"
    assert result.messages[-1]["content"] == LISTED


async def test_an_answer_that_ended_on_its_own_is_left_as_it_is() -> None:
    result = await run(
        new_run("Which programs?"), Registry([]), RunOptions(replying(LOOPED, "stop"), controls=[TrimLoop()])
    )
    assert result.messages[-1]["content"] == LOOPED


def test_a_long_answer_that_says_something_new_to_its_cut_keeps_it_all() -> None:
    plain = "\n".join(f"{n}. step {n} of the guide" for n in range(1, 40)) + "\n40. step"
    assert before_loop(plain) == plain
    # a line said twice, or two, is not a loop; three lines said again at the end are
    twice = "- a\n- b\n- a\n- b\n- c"
    assert before_loop(twice) == twice
    assert before_loop("- a\n- b\n- a\n- b\n- a\n- b") == "- a\n- b"


def test_a_short_unit_repeated_at_the_very_end_goes_and_a_short_run_stays() -> None:
    assert before_loop("It is in `utils.py`." + "}]" * 12) == "It is in `utils.py`."
    assert before_loop("Nested: [[1]]]") == "Nested: [[1]]]"
    assert before_loop("x = 1" + " " * 50) == "x = 1"

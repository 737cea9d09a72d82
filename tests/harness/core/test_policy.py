"""The tool-error policy: how a failing tool reaches the model (words, silence, a custom text) or ends the run."""

from __future__ import annotations

from pathlib import Path

from harness.core.loop import run
from harness.core.options import RunOptions
from harness.core.policy import ToolErrorPolicy
from harness.core.registry import Registry
from harness.core.state import pending
from harness.errors import PermanentToolError, ToolError
from tests.harness.core.support import files, state
from tests.harness.helpers import PLAIN, Recorder, calls, script, scripted, tool_messages
from wire.types import AssistantMessage


def recovering(turn: int, text: str) -> AssistantMessage | str:
    """Reads a file that is not there; once told to list files, lists them, reads the right one and answers."""
    if turn == 0:
        return calls(("c1", "read_file", {"path": "timeout.log"}))
    if "Call list_files" not in text:
        return "I could not read the file, so I do not know."
    after: list[AssistantMessage | str] = [
        calls(("c2", "list_files", {})), calls(("c3", "read_file", {"path": "errors.log"})), "errors.log."
    ]  # fmt: skip
    return after[turn - 1]


RECOVER = scripted(recovering)


async def test_tool_error_as_text_lets_the_model_recover(workspace: Path) -> None:
    result = await run(state(), files(workspace), RunOptions(model=RECOVER))
    first = tool_messages(result.messages)[0]["content"]
    assert first == "Error: no such file: timeout.log. Call list_files to see what exists."
    assert result.status == "completed" and result.answer == "errors.log." and result.turns == 4


async def test_silent_errors_leave_the_model_guessing(workspace: Path) -> None:
    options = RunOptions(model=RECOVER, errors=ToolErrorPolicy(mode="silent"))
    result = await run(state(), files(workspace), options)
    assert tool_messages(result.messages)[0]["content"] == "Error: something went wrong."
    assert result.answer == "I could not read the file, so I do not know." and result.turns == 2


async def test_custom_error_text_function(workspace: Path) -> None:
    options = RunOptions(model=RECOVER, errors=ToolErrorPolicy(describe=lambda e: f"oops ({type(e).__name__})"))
    result = await run(state(), files(workspace), options)
    assert tool_messages(result.messages)[0]["content"] == "oops (ToolError)"


async def test_fatal_errors_fail_the_run(workspace: Path) -> None:
    result = await run(state(), files(workspace), RunOptions(model=RECOVER, errors=ToolErrorPolicy(mode="fatal")))
    assert result.status == "failed" and "no such file: timeout.log" in (result.reason or "")
    assert pending(result.messages) == []  # the failure is in the transcript too


async def test_permanent_error_stops_instead_of_retrying_to_the_cap() -> None:
    probe = Recorder(fail=PermanentToolError("permission denied: secret.txt"))
    forever = scripted(lambda turn, _: calls((f"c{turn}", "probe", {})))
    stopped = await run(state(max_turns=12), Registry([probe]), RunOptions(model=forever, controls=PLAIN))
    assert (
        stopped.status == "failed"
        and "retrying cannot help" in (stopped.reason or "")
        and stopped.error_source == "tool"
    )
    assert len(probe.runs) == 1 and stopped.turns == 1
    probe.runs.clear()
    options = RunOptions(model=forever, errors=ToolErrorPolicy(stop_on_permanent=False), controls=PLAIN)
    retried = await run(state(max_turns=12), Registry([probe]), options)
    assert retried.status == "max_turns_exceeded" and len(probe.runs) == 12


async def test_tool_errors_raised_as_plain_exceptions_reach_the_model_as_words() -> None:
    probe = Recorder(fail=ValueError("bad thing"))
    result = await run(state(), Registry([probe]), RunOptions(model=script(calls(("c1", "probe", {})), "ok")))
    assert tool_messages(result.messages)[0]["content"] == "Error: bad thing" and result.status == "completed"
    probe.fail = ToolError("expected")
    again = await run(state(), Registry([probe]), RunOptions(model=script(calls(("c1", "probe", {})), "ok")))
    assert tool_messages(again.messages)[0]["content"] == "Error: expected" and again.status == "completed"

"""What a scenario reads: the turn it is asked for, the question (a digest's own), and each tool result paired
with the call it answers, a digest's results counted as the tools' own."""

from __future__ import annotations

from typing import Any

from serve.errors import ScriptExhausted
from serve.scripted.script import ToolResult, Transcript
from wire.digest import Finding, write

CALL: Any = {"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": '{"path": "a.log"}'}}
BROKEN: Any = {"id": "c2", "type": "function", "function": {"name": "search", "arguments": "{not json"}}


def test_the_turn_question_and_results_of_a_plain_transcript() -> None:
    transcript = Transcript("m", [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "What does a.log say?"},
        {"role": "assistant", "content": None, "tool_calls": [CALL, BROKEN]},
        {"role": "tool", "tool_call_id": "c1", "content": "ERROR x"},
        {"role": "tool", "tool_call_id": "c2", "content": "Error: bad arguments"},
        {"role": "tool", "tool_call_id": "ghost", "content": "answers no call"},
    ])  # fmt: skip
    assert transcript.turn == 1 and transcript.question == "What does a.log say?"
    assert transcript.results() == [
        ToolResult("c1", "read_file", {"path": "a.log"}, "ERROR x"),
        ToolResult("c2", "search", {}, "Error: bad arguments"),  # arguments that are not JSON read as none
    ]
    assert transcript.result_of("c1") == "ERROR x" and transcript.result_of("ghost") is None


def test_a_digest_gives_its_question_and_its_results_as_the_tools_own() -> None:
    found = [Finding("list_files", {}, "a.log (7 bytes)"), Finding("read_file", "a.log", "ERROR x")]
    asked = write("Which file is largest?", found, ["a.log: ERROR x"])
    transcript = Transcript("m", [{"role": "system", "content": "s"}, {"role": "user", "content": asked}])
    assert transcript.turn == 0 and transcript.question == "Which file is largest?"
    assert transcript.results() == [
        ToolResult("digest_0", "list_files", {}, "a.log (7 bytes)"),
        ToolResult("digest_1", "read_file", {}, "ERROR x"),  # arguments sent as text are not an object
    ]


def test_a_script_that_has_run_out_says_which_scenario_and_turn() -> None:
    transcript = Transcript("travel", [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}])
    error = transcript.exhausted()
    assert isinstance(error, ScriptExhausted) and "'travel' has no reply for turn 1" in str(error)

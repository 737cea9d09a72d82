"""grounded: before a run ends with an answer, its files, numbers, quotes and whether it answers at all are
checked against what the tools returned, the same way in any language; an answer resting on nothing is asked
again once, with the lines of the results that bear most on the question."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.controls.grounded import Grounded, check
from harness.core.loop import run
from harness.core.options import RunOptions
from harness.core.registry import Registry
from harness.core.state import new_run
from harness.core.turn import RunContext
from harness.fs.workspace import Workspace
from harness.index.index import WorkspaceIndex
from harness.tools.catalogue import reading_tools
from tests.harness.controls.support import answering
from tests.harness.helpers import calls


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "api.log").write_text("INFO up\nERROR request 7 timed out after 30 s\n")
    (tmp_path / "logs" / "db.log").write_text("INFO pool ready\n")
    (tmp_path / "notes.txt").write_text("Rotate the logs weekly.\n")
    return tmp_path


async def answered(folder: Path, question: str, *answers: str) -> tuple[str | None, list[str]]:
    space = Workspace(folder)
    index = WorkspaceIndex(space)
    model, _ = answering(calls(("r", "read_file", {"path": "logs/api.log"})), *answers)
    options = RunOptions(model, controls=[Grounded()], index=index)
    state = await run(new_run(question), Registry(reading_tools(space, index=index)), options)
    asks = [str(m["content"]) for m in state.messages[2:] if m["role"] == "user"]
    return state.answer, asks


@pytest.mark.parametrize(
    "answer",
    [
        "logs/api.log: request 7 timed out after 30 s.",
        "请求 7 在 30 秒后超时（logs/api.log）。",
        "В logs/api.log запрос 7 прервался через 30 с.",
    ],
)
async def test_an_answer_from_what_the_tools_returned_ends_the_run(folder: Path, answer: str) -> None:
    assert await answered(folder, "Which request timed out?", answer) == (answer, [])


@pytest.mark.parametrize(
    ("answer", "said"),
    [
        ("logs/db.log says request 7 timed out.", "files logs/db.log (in no result)"),
        ("Request 12 timed out after 45 s.", "numbers 12, 45"),
        ("请求 12 在 45 秒后超时。", "numbers 12, 45"),
        ('It says "the disk is almost full today".', "quoted text 'the disk is almost full today'"),
        ('Call read_file with {"name": "read_file"} to see.', "tools read_file"),
    ],
)
async def test_an_answer_that_rests_on_nothing_is_asked_again_once_with_the_evidence(
    folder: Path, answer: str, said: str
) -> None:
    final, asks = await answered(folder, "Which request timed out?", answer, "Still " + answer)
    assert final == "Still " + answer  # asked once: the second answer stands, whatever it says
    assert len(asks) == 1 and said in asks[0]
    assert "ERROR request 7 timed out after 30 s" in asks[0]  # the line that bears most on the question


def test_numbers_of_a_list_and_numbers_the_question_gives_are_no_claims(folder: Path) -> None:
    space = Workspace(folder)
    state = new_run("Set the port to 17259.")
    state.messages.append({"role": "tool", "tool_call_id": "x", "content": "port = 1869"})
    context = RunContext(state, Registry(reading_tools(space)), lambda m: 1, WorkspaceIndex(space))
    assert not check("1. Set port from 1869 to 17259.\n2. Done.", context)
    assert check("Set port from 1,869 to 17259 and 8080.", context).numbers == ("8080",)

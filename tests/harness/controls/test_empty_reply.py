"""empty_reply: a reply with neither words nor a call is asked again."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.app.trace import MemoryTrace
from harness.controls.digest import DigestAnswers
from harness.controls.empty_reply import EmptyReply, said
from harness.core.loop import run
from harness.core.options import RunOptions
from harness.core.registry import Registry
from harness.core.state import new_run
from harness.fs.workspace import Workspace
from harness.tools.files import ReadFile
from harness.tools.writes import AppendFile
from tests.harness.controls.support import QUESTION, answering, reads
from tests.harness.helpers import Recorder, calls
from wire.digest import read
from wire.types import Message


async def test_an_empty_reply_requires_a_call_then_is_asked_again_in_words() -> None:
    model, seen = answering("", reads(1), "", "It is 7.")
    trace = MemoryTrace()
    controls = [EmptyReply(retries=2)]
    result = await run(
        new_run(QUESTION), Registry([Recorder()]), RunOptions(model=model, controls=controls, trace=trace)
    )
    assert (result.status, result.answer, result.turns) == ("completed", "It is 7.", 4)
    assert seen[1].tool_choice == "required"
    assert seen[3].messages[-1]["role"] == "user" and QUESTION in str(seen[3].messages[-1]["content"])
    assert [e["why"] for e in trace.events if e["type"] == "not_an_answer"] == ["empty", "empty"]


async def test_an_empty_reply_after_looking_brings_the_answer_turn() -> None:
    model, seen = answering(reads(1), "", "It is 7.")
    trace = MemoryTrace()
    options = RunOptions(model=model, controls=[EmptyReply(), DigestAnswers()], trace=trace)
    result = await run(new_run(QUESTION), Registry([Recorder(output="value 7")]), options)
    assert (result.status, result.answer, result.turns) == ("completed", "It is 7.", 3)
    assert seen[2].tools == [] and read(str(seen[2].messages[-1]["content"])) is not None
    assert [e["answer_turn"] for e in trace.events if e["type"] == "turn"] == [None, None, "empty reply"]


async def test_past_its_retries_an_empty_reply_is_the_answer() -> None:
    model, _ = answering("", "")
    result = await run(new_run(QUESTION), Registry([Recorder()]), RunOptions(model, controls=[EmptyReply(retries=1)]))
    assert (result.status, result.answer, result.turns) == ("completed", "", 2)


async def test_a_reply_that_recites_the_instructions_is_not_the_answer_but_one_that_quotes_a_few_words_is() -> None:
    """The system prompt says how to look; a small model unsure of the answer copies a sentence of it."""
    system = "You answer questions. To find which file says something, search the files for its words."
    recital = "To find which file says something, search the files for its words."
    model, seen = answering(reads(1), recital, "It is 7.")
    state = new_run(QUESTION, system=system)
    options = RunOptions(model=model, controls=[EmptyReply(), DigestAnswers()])
    result = await run(state, Registry([Recorder(output="value 7")]), options)
    assert (result.answer, result.turns) == ("It is 7.", 3) and read(str(seen[2].messages[-1]["content"])) is not None
    model, _ = answering(reads(1), "You answer questions.")  # three words: too few to call a recital
    result = await run(
        new_run(QUESTION, system=system), Registry([Recorder()]), RunOptions(model, controls=[EmptyReply()])
    )
    assert (result.answer, result.turns) == ("You answer questions.", 2)


@pytest.mark.parametrize(
    ("reply", "recited"),
    [
        ("To find which files say something, search the files for its words, then read what the search finds.", True),
        ("to find which file says something: search the files for its words", True),
        ("The files say nothing of it: no file holds its words.", False),
        ("Search the files for its words: server.log holds them, on line 7.", False),
    ],
)
def test_a_recital_may_change_a_word_and_an_answer_in_the_instructions_words_is_still_an_answer(
    reply: str, recited: bool
) -> None:
    """The 1.5B, unsure how to count, answered with the system prompt's sentence, "file says" made "files say"."""
    system = "You answer questions. To find which file says something, search the files for its words, then read "
    system += "what the search finds."
    messages: list[Message] = [{"role": "system", "content": system}, {"role": "user", "content": QUESTION}]
    assert said(messages, {"role": "assistant", "content": reply}) == ("" if recited else reply)


async def test_a_run_that_may_change_files_and_has_not_is_asked_the_answer_turn_again(workspace: Path) -> None:
    """The second empty reply of a run offered a write that changed nothing brings the answer turn (which offers
    the write beside what was read) again, not the ask in words; once something changed, the ask in words."""
    (workspace / "todo.md").write_text("- [x] a\n")
    space = Workspace(workspace)
    tools = Registry([ReadFile(space), AppendFile(space, needs_approval=False)])
    append = calls(("w", "append_file", {"path": "todo.md", "content": "- [ ] b"}))
    model, seen = answering(calls(("r", "read_file", {"path": "todo.md"})), "", "", append, "Added it.")
    trace = MemoryTrace()
    options = RunOptions(model=model, controls=[EmptyReply(), DigestAnswers()], trace=trace)
    result = await run(new_run("Add - [ ] b to todo.md."), tools, options)
    assert (result.answer, (workspace / "todo.md").read_text()) == ("Added it.", "- [x] a\n- [ ] b\n")
    assert [e["answer_turn"] for e in trace.events if e["type"] == "turn"] == [None, None, *["empty reply"] * 2, None]
    assert [d["function"]["name"] for d in seen[2].tools] == ["append_file"]  # the answer turn, with the change
    model, seen = answering(append, "", "", "Added it.")
    await run(
        new_run("Add - [ ] b to todo.md."), tools, RunOptions(model=model, controls=[EmptyReply(), DigestAnswers()])
    )
    assert seen[3].messages[-1]["role"] == "user" and "Add - [ ] b" in str(seen[3].messages[-1]["content"])

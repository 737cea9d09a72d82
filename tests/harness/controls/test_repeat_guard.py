"""repeat_guard: a read that already ran is not run again, and asking again is the end of looking."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from harness.app.store import FileStore
from harness.app.trace import MemoryTrace
from harness.controls.digest import PROSE_GRAMMAR, DigestAnswers
from harness.controls.look_first import LookFirst
from harness.controls.repeat_guard import RepeatGuard
from harness.core.limits import Limits
from harness.core.loop import run
from harness.core.options import RunOptions
from harness.core.policy import signature
from harness.core.registry import Registry
from harness.core.state import new_run
from harness.errors import StateError
from harness.fs.workspace import Workspace
from harness.prompts import repeated_change
from harness.tools.writes import EditFile, WriteFile
from tests.harness.controls.support import QUESTION, answering, reads
from tests.harness.helpers import Recorder, calls
from wire.digest import Finding, read


async def test_a_repeated_read_is_refused_and_the_next_turn_is_asked_as_a_digest() -> None:
    probe = Recorder(output="value 7")
    model, seen = answering(reads(1), reads(1, 2), calls(("late", "probe", {"x": 9})) | {"content": "It is 7."})
    trace = MemoryTrace()
    options = RunOptions(model=model, controls=[RepeatGuard(), DigestAnswers()], trace=trace)
    state = new_run(QUESTION, system="Answer from the files.")
    result = await run(state, Registry([probe]), options)
    assert (result.status, result.answer, result.turns) == ("completed", "It is 7.", 3)
    assert probe.runs == [{"x": 1}, {"x": 2}]  # the repeat was refused; the call in the digest reply never ran
    digest = seen[2]
    assert (digest.tools, digest.tool_choice, digest.extra) == ([], None, {"grammar": PROSE_GRAMMAR})
    system, ask = digest.messages
    assert system == {"role": "system", "content": "Answer from the files."}
    found = [Finding("probe", {"x": 1}, "value 7"), Finding("probe", {"x": 2}, "value 7")]
    assert read(str(ask["content"])) == (QUESTION, found)  # each distinct call once
    assert [e["answer_turn"] for e in trace.events if e["type"] == "turn"] == [None, None, "repeats"]


async def test_without_a_digest_an_answer_turn_offers_tools_but_no_calls() -> None:
    model, seen = answering(reads(1), reads(1), "It is 7.")
    result = await run(new_run(QUESTION), Registry([Recorder()]), RunOptions(model=model, controls=[RepeatGuard()]))
    assert result.answer == "It is 7." and seen[2].tool_choice == "none" and seen[2].tools


async def test_the_guard_remembers_across_a_stop_and_a_resume(tmp_path: Path) -> None:
    """Its memory is in the run state: a resumed run asks the answer turn it owed, and refuses a repeat."""
    store = FileStore(tmp_path)
    probe = Recorder(output="value 7")
    controls = [RepeatGuard(), DigestAnswers()]
    model, _ = answering(reads(1), reads(1))
    options = RunOptions(model=model, store=store, controls=controls)
    first = await run(new_run(QUESTION, limits=Limits(max_turns=2)), Registry([probe]), options)
    assert first.status == "max_turns_exceeded" and probe.runs == [{"x": 1}]
    saved = store.load(first.run_id)
    guard = saved.controls["repeat_guard"]
    remembered = guard["seen"]
    assert guard["repeats"] == 1 and isinstance(remembered, dict) and list(remembered) == [signature("probe", {"x": 1})]
    model, seen = answering("It is 7.")
    again = await run(
        replace(saved, limits=Limits(max_turns=4)), Registry([probe]), RunOptions(model, controls=controls)
    )
    assert (again.status, again.answer, again.turns) == ("completed", "It is 7.", 3)
    assert read(str(seen[0].messages[-1]["content"])) is not None  # the owed answer turn, asked as a digest
    assert again.controls["repeat_guard"]["repeats"] == 0


async def test_a_saved_memory_that_does_not_read_stops_the_resume_naming_the_control() -> None:
    """A control's memory is read back through its fields: a state whose memory was edited into another shape
    is not taken for an empty memory (the guard would run every read again) but refused, saying whose."""
    state = new_run(QUESTION)
    state.controls["repeat_guard"] = {"seen": ['probe:{"x":1}'], "repeats": "many"}
    model, seen = answering(reads(1), "It is 7.")
    with pytest.raises(StateError, match="repeat_guard control does not read"):
        await run(state, Registry([Recorder()]), RunOptions(model=model, controls=[RepeatGuard()]))
    assert not seen  # refused before anything was asked


async def test_the_same_read_twice_in_one_reply_runs_once_and_does_not_end_the_looking() -> None:
    probe = Recorder(output="value 7")
    model, seen = answering(reads(1, 1, 2), reads(3), "It is 7.")
    result = await run(new_run(QUESTION), Registry([probe]), RunOptions(model, controls=[RepeatGuard()]))
    assert probe.runs == [{"x": 1}, {"x": 2}, {"x": 3}] and result.turns == 3
    assert seen[1].tool_choice is None  # no answer turn was owed: nothing was asked again after being seen


async def test_a_tool_without_arguments_is_set_aside_once_it_has_run() -> None:
    """Its definition stays (a stable prompt), but a forced call goes to the tool left."""
    bare = Recorder(name="look", parameters={"type": "object", "properties": {}})
    model, seen = answering(calls(("a", "look", {})), reads(1), "It is 7.")
    controls = [RepeatGuard(), LookFirst(turns=2)]
    await run(new_run(QUESTION), Registry([bare, Recorder()]), RunOptions(model, controls=controls))
    assert [t["function"]["name"] for t in seen[1].tools] == ["look", "probe"]
    assert seen[1].tool_choice == {"type": "function", "function": {"name": "probe"}}


async def test_a_repeat_made_under_a_forced_call_does_not_end_the_looking() -> None:
    """A model that must call and asks again for what it has could not answer instead: not done looking."""
    probe = Recorder(output="value 7")
    model, seen = answering(reads(1), reads(1), reads(2), reads(2), "It is 7.")
    controls = [RepeatGuard(), LookFirst(turns=2)]
    result = await run(new_run(QUESTION), Registry([probe]), RunOptions(model, controls=controls))
    assert probe.runs == [{"x": 1}, {"x": 2}] and result.answer == "It is 7."
    forced = {"type": "function", "function": {"name": "probe"}}
    assert [r.tool_choice for r in seen] == [forced, "required", None, None, "none"]


async def test_the_same_change_made_again_is_not_run_and_says_it_succeeded(workspace: Path) -> None:
    """An edit that adds a line, called twice in one reply and again in the next: the line is added once."""
    (workspace / "todo.md").write_text("- [x] one\n")
    add = ("edit_file", {"path": "todo.md", "old_text": "- [x] one", "new_text": "- [x] one\n- [ ] two"})
    model, seen = answering(calls(("e1", *add), ("e2", *add)), calls(("e3", *add)), "Added the line.")
    tools = Registry([EditFile(Workspace(workspace), needs_approval=False)])
    result = await run(new_run("Add '- [ ] two' to todo.md."), tools, RunOptions(model, controls=[RepeatGuard()]))
    assert (workspace / "todo.md").read_text() == "- [x] one\n- [ ] two\n"
    refusals = [str(m["content"]) for m in result.messages if m["role"] == "tool"][1:]
    assert refusals == [repeated_change("edit_file", "e1")] * 2
    assert result.answer == "Added the line." and seen[2].tool_choice == "none"  # asked again after seeing: done


async def test_a_change_that_failed_may_be_made_again(workspace: Path) -> None:
    """An edit refused (its old text is not in the file) runs once a write has put that text there."""
    (workspace / "a.txt").write_text("old\n")
    edit = ("edit_file", {"path": "a.txt", "old_text": "port = 1", "new_text": "port = 2"})
    write = ("write_file", {"path": "a.txt", "content": "port = 1\n"})
    model, _ = answering(calls(("e1", *edit)), calls(("w", *write)), calls(("e2", *edit)), "Done.")
    space = Workspace(workspace)
    tools = Registry([EditFile(space, needs_approval=False), WriteFile(space, needs_approval=False)])
    result = await run(new_run("Set port to 2 in a.txt."), tools, RunOptions(model, controls=[RepeatGuard()]))
    assert (workspace / "a.txt").read_text() == "port = 2\n" and result.answer == "Done."

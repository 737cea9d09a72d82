"""digest_answers: an answer turn asked as a digest of the question and what the tools returned."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import ClassVar

import pytest

from harness.controls import Hooks
from harness.controls.digest import DigestAnswers, Found, digest_messages, file_names, findings, matching
from harness.controls.last_turn import LastTurn
from harness.controls.read_first import ReadFirst
from harness.core.limits import Limits
from harness.core.loop import run
from harness.core.options import RunOptions
from harness.core.registry import Registry
from harness.core.results import Shown
from harness.core.state import new_run
from harness.core.turn import RunContext, Turn
from harness.errors import ContextTooSmall
from harness.fs.workspace import Workspace
from harness.index.index import WorkspaceIndex
from harness.tools.files import ListFiles, ReadFile
from harness.tools.search import Search
from harness.tools.writes import EditFile, WriteFile
from tests.harness.controls.support import QUESTION, answering, reads
from tests.harness.helpers import calls
from wire.digest import Finding, read
from wire.types import Message


def test_under_a_context_budget_a_digest_keeps_the_newest_results() -> None:
    state = new_run(QUESTION, limits=Limits(context_tokens=40))
    for index in range(3):
        reply = reads(index)
        result = f"result {index} " + "word " * 10
        state.messages += [reply, {"role": "tool", "tool_call_id": reply["tool_calls"][0]["id"], "content": result}]
    kept = read(str(digest_messages(state, lambda m: len(str(m["content"]).split()))[-1]["content"]))
    assert kept is not None and [f.arguments for f in kept[1]] == [{"x": 2}]
    with pytest.raises(ContextTooSmall):
        digest_messages(replace(state, limits=Limits(context_tokens=5)), lambda m: 10)


def weigh(question: str) -> object:
    """A relevance as the index measures it, over a folder where every term is as rare as every other."""
    words = set(question.lower().replace("?", "").split())
    return lambda text: float(len(words & set(text.lower().replace(":", " ").split())))


def test_a_focused_digest_puts_the_results_that_bear_most_on_the_question_first_and_leaves_none_out() -> None:
    state = new_run("Which job timed out?")
    for index, text in enumerate(("disk at 40%", "job 7 timed out", "job finished")):
        reply = reads(index)
        state.messages += [reply, {"role": "tool", "tool_call_id": reply["tool_calls"][0]["id"], "content": text}]
    relevance = weigh(state.question)
    kept = read(str(digest_messages(state, lambda m: 1, focus=True, relevance=relevance)[-1]["content"]))  # type: ignore[arg-type]
    assert kept is not None and [f.arguments for f in kept[1]] == [{"x": 1}, {"x": 2}, {"x": 0}]
    fitted = replace(state, limits=Limits(context_tokens=30))
    count = lambda m: len(str(m["content"]).split())  # noqa: E731
    kept = read(str(digest_messages(fitted, count, focus=True, relevance=relevance)[-1]["content"]))  # type: ignore[arg-type]
    assert kept is not None and kept[1][0].arguments == {"x": 1} and len(kept[1]) < 3


def test_matching_lines_repeat_the_lines_that_bear_most_on_the_question_each_after_its_file() -> None:
    listing = Found(Finding("list_files", {}, "2 files, largest first:\nworker.log (90 bytes)"), Shown("names"))
    worker = Found(Finding("read_file", {"path": "worker.log"}, "INFO worker started\nWARN slow"),
                   Shown("lines", ("worker.log",)))  # fmt: skip
    api = Found(Finding("read_file", {"path": "api.log"}, "ERROR worker 7 timed out"), Shown("lines", ("api.log",)))
    question = "Which worker timed out?"
    found = [listing, worker, api]
    assert matching(found, 12, weigh(question)) == [  # type: ignore[arg-type]
        "api.log: ERROR worker 7 timed out",
        "worker.log: INFO worker started",
    ]  # the listing's names are not repeated
    assert matching(found, 1, weigh(question)) == ["api.log: ERROR worker 7 timed out"]  # type: ignore[arg-type]
    assert matching(found, 12, lambda text: 0.0) == []


async def test_a_digest_holds_each_listing_once_and_the_indexs_measure_orders_it(workspace: Path) -> None:
    """The same listing asked twice is shown once; with the workspace's index, the result that holds the
    question's rarest terms comes first and its line is repeated last."""
    space = Workspace(workspace)
    index = WorkspaceIndex(space)
    tools = Registry([ListFiles(space), ReadFile(space), Search(space, index=index)])
    looked = calls(
        ("l1", "list_files", {}),
        ("l2", "list_files", {"path": "."}),
        ("s1", "search", {"pattern": "kubernetes"}),
        ("r1", "read_file", {"path": "access.log"}),
        ("r2", "read_file", {"path": "errors.log"}),
    )
    model, seen = answering(looked, "errors.log says worker 7 timed out.")
    controls = [LastTurn(), DigestAnswers(focus=True, matching_lines=12)]
    question = "Which worker timed out?"
    options = RunOptions(model, controls=controls, index=index)
    result = await run(new_run(question, limits=Limits(max_turns=2)), tools, options)
    digest = str(seen[1].messages[-1]["content"])
    kept = read(digest)
    assert result.answer == "errors.log says worker 7 timed out." and kept is not None
    assert kept[1][0].call == 'read_file(path="errors.log")' and digest.count("list_files") == 1
    assert digest.split("Lines that bear on the question:")[1].startswith("\n    errors.log: ERROR worker 7 timed out")


async def test_an_answer_turn_keeps_the_tools_that_change_files_until_one_has_changed_something(
    workspace: Path,
) -> None:
    space = Workspace(workspace)
    tools = Registry([ListFiles(space), ReadFile(space), WriteFile(space, needs_approval=False)])
    model, seen = answering(
        calls(("a", "read_file", {"path": "notes.txt"})),
        calls(("w", "write_file", {"path": "summary.md", "content": "notes.txt: rotate the logs"})),
        "Wrote summary.md.",
    )

    controls = [AnswerSecond(), DigestAnswers()]
    state = new_run("Write summary.md saying what notes.txt holds.")
    result = await run(state, tools, RunOptions(model, controls=controls))
    assert [d["function"]["name"] for d in seen[1].tools] == ["write_file"]  # the answer turn, with the write
    assert seen[1].tool_choice == "auto" and (workspace / "summary.md").read_text() == "notes.txt: rotate the logs"
    assert result.status == "completed" and result.answer == "Wrote summary.md."


class AnswerSecond(Hooks):
    name: ClassVar[str] = "answer_second"

    def decide(self, run: RunContext, turn: Turn) -> str | None:
        return "a test's answer turn" if run.state.turns == 1 else None


@pytest.mark.parametrize(
    ("question", "made"), [("Write summary.md saying what notes.txt holds.", True), ("When is write_file used?", False)]
)
async def test_an_answer_that_describes_a_change_instead_of_making_it_is_asked_to_make_it(
    workspace: Path, question: str, made: bool
) -> None:
    """Once a run: the next turn must call a tool that changes files, the looking tools set aside. A question
    that names the tool itself is answered by words that name it."""
    space = Workspace(workspace)
    tools = Registry([ListFiles(space), ReadFile(space), WriteFile(space, needs_approval=False)])
    described = "Call write_file with path summary.md and the content: notes.txt: rotate the logs."
    model, seen = answering(
        calls(("a", "read_file", {"path": "notes.txt"})),
        described,
        calls(("w", "write_file", {"path": "summary.md", "content": "notes.txt: rotate the logs"})),
        "Wrote summary.md.",
    )
    result = await run(new_run(question), tools, RunOptions(model, controls=[AnswerSecond(), DigestAnswers()]))
    if not made:
        assert result.answer == described and len(seen) == 2
        return
    assert str(seen[2].messages[-1]["content"]).startswith("You described a call to write_file instead of making it.")
    assert seen[2].tool_choice == {"type": "function", "function": {"name": "write_file"}}
    assert (workspace / "summary.md").read_text() == "notes.txt: rotate the logs"
    assert result.answer == "Wrote summary.md." and len(seen) == 4  # asked once; the run then ends as ever


@pytest.mark.parametrize(
    ("question", "answer", "asked"),
    [
        ("Write docs/summary.md saying what notes.txt holds.", "Here is docs/summary.md:\n\n# Notes\nrotate", True),
        ("Write docs/summary.md saying what notes.txt holds.", "docs/summary.md: notes.txt says rotate.", False),
        ("Rewrite notes.txt in capitals.", "Here is notes.txt:\n\nROTATE\nTHE LOGS", False),
    ],
)
async def test_an_answer_that_gives_a_new_files_content_instead_of_writing_it_is_asked_to_write_it(
    workspace: Path, question: str, answer: str, asked: bool
) -> None:
    """Once a run, and only for a file the question names that does not exist yet, in an answer of three lines
    or more (a one-line answer says something of the file). The next turn need not call a tool: a question
    whether the file exists, with writes offered, may be answered again."""
    space = Workspace(workspace)
    (workspace / "docs").mkdir()
    tools = Registry([ListFiles(space), ReadFile(space), WriteFile(space, needs_approval=False)])
    model, seen = answering(
        calls(("a", "read_file", {"path": "notes.txt"})),
        answer,
        calls(("w", "write_file", {"path": "docs/summary.md", "content": "notes.txt: rotate the logs"})),
        "Wrote docs/summary.md.",
    )
    result = await run(new_run(question), tools, RunOptions(model, controls=[AnswerSecond(), DigestAnswers()]))
    if not asked:
        assert result.answer == answer and len(seen) == 2 and not (workspace / "docs/summary.md").exists()
        return
    assert seen[2].messages[-1]["content"] == (
        "Your answer gives what docs/summary.md should hold, but docs/summary.md was not written: it does not "
        "exist. If the question asks for that file, call write_file now to write it."
    )
    assert seen[2].tool_choice is None  # the model may answer again
    assert (workspace / "docs/summary.md").read_text() == "notes.txt: rotate the logs"
    assert result.answer == "Wrote docs/summary.md." and len(seen) == 4


async def test_asked_to_write_a_file_it_only_spoke_of_a_model_may_answer_again(workspace: Path) -> None:
    space = Workspace(workspace)
    tools = Registry([ListFiles(space), ReadFile(space), WriteFile(space, needs_approval=False)])
    answer = "No: docs/summary.md is not\nin the folder,\nwhich holds notes.txt."
    model, seen = answering(calls(("a", "read_file", {"path": "notes.txt"})), answer, "No, there is none.")
    result = await run(
        new_run("Is there a docs/summary.md?"), tools, RunOptions(model, controls=[AnswerSecond(), DigestAnswers()])
    )
    assert seen[2].tool_choice is None and result.answer == "No, there is none." and len(seen) == 3
    assert not (workspace / "docs").exists()


def test_the_files_a_question_names_are_words_with_an_extension() -> None:
    question = "Write `docs/guide/SUMMARY.md` (e.g. like notes.txt, for v3.11, i.e. x.y), see README.md."
    assert file_names(question) == ["docs/guide/SUMMARY.md", "notes.txt", "README.md"]


def test_a_call_whose_slot_the_harness_filled_first_is_digested_with_the_result_it_had_once_it_ran() -> None:
    write = calls(("w1", "write_file", {"path": "a.md", "content": "x"}))
    again = calls(("w2", "write_file", {"path": "a.md", "content": "x"}))
    read_it = calls(("r1", "read_file", {"path": "a.md"}))
    read_again = calls(("r2", "read_file", {"path": "a.md"}))
    messages: list[Message] = [
        {"role": "user", "content": "Write a.md."},
        write,
        {"role": "tool", "tool_call_id": "w1", "content": "Not run: a.md exists and you had not read it"},
        again,
        {"role": "tool", "tool_call_id": "w2", "content": "Wrote 1 bytes to a.md."},
        read_it,
        {"role": "tool", "tool_call_id": "r1", "content": "x"},
        read_again,
        {"role": "tool", "tool_call_id": "r2", "content": "Not run again: you already called read_file"},
    ]
    assert [f.finding.result for f in findings(messages, {})] == ["Wrote 1 bytes to a.md.", "x"]


async def test_a_change_refused_for_want_of_a_read_is_asked_again_as_a_digest_that_shows_the_file_as_read(
    workspace: Path,
) -> None:
    """The model's refused and failed calls are not in the digest (a small model makes them again): the file
    the refusal showed is, as a read of it, and the tools that change files are offered."""
    (workspace / "settings.ini").write_text("[server]\nport = 1869\n")
    space = Workspace(workspace)
    tools = Registry([ListFiles(space), ReadFile(space), EditFile(space, needs_approval=False)])
    guess = {"path": "settings.ini", "old_text": "17259", "new_text": "17259"}
    model, seen = answering(
        calls(("e1", "edit_file", guess)),
        calls(("e2", "edit_file", guess)),
        calls(("e3", "edit_file", {"path": "settings.ini", "old_text": "1869", "new_text": "17259"})),
        "Set port to 17259.",
    )
    controls = [ReadFirst(), AnswerThird(), DigestAnswers(after_refusal=True)]
    result = await run(new_run("Set port to 17259 in settings.ini."), tools, RunOptions(model, controls=controls))
    shown = seen[1]  # the turn after the refusal
    assert [m["role"] for m in shown.messages] == ["user"] and [d["function"]["name"] for d in shown.tools] == [
        "edit_file"
    ]
    digest = str(shown.messages[0]["content"])
    assert 'read_file(path="settings.ini") returned:\n    [server]\n    port = 1869' in digest
    assert "edit_file" not in digest and "Not run" not in digest
    failed = str(seen[2].messages[0]["content"])  # the failed edit made again is left out too
    assert "edit_file" not in failed and "Error" not in failed and "port = 1869" in failed
    assert (workspace / "settings.ini").read_text() == "[server]\nport = 17259\n"
    assert result.status == "completed"


class AnswerThird(Hooks):
    name: ClassVar[str] = "answer_third"

    def decide(self, run: RunContext, turn: Turn) -> str | None:
        return "a test's answer turn" if run.state.turns == 2 else None

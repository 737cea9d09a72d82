"""digest_answers: an answer turn asked as a digest of the question and what the tools returned."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import ClassVar

import pytest

from harness.controls import Hooks, RunContext, Turn
from harness.controls.budget import digit_tokens
from harness.controls.digest import (
    DigestAnswers,
    digest_messages,
    file_names,
    findings,
    focused,
    matching,
    named_reads,
    tallied,
)
from harness.controls.last_turn import LastTurn
from harness.controls.read_first import ReadFirst
from harness.core.limits import Limits
from harness.core.loop import run
from harness.core.options import RunOptions
from harness.core.state import new_run
from harness.errors import ContextTooSmall
from harness.fs.workspace import Workspace
from harness.tools.base import Registry
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


def test_a_focused_digest_puts_related_results_first_and_leaves_none_out_until_it_must() -> None:
    # "read" in the question meets "read timeout" in one file by chance: the others must stay, for a
    # question about every file needs every result.
    state = new_run("Read each file and summarise every one.")
    for index, text in enumerate(("disk at 40%", "request failed: read timeout", "job finished")):
        reply = reads(index)
        state.messages += [reply, {"role": "tool", "tool_call_id": reply["tool_calls"][0]["id"], "content": text}]
    kept = read(str(digest_messages(state, lambda m: 1, focus=True)[-1]["content"]))
    assert kept is not None and [f.arguments for f in kept[1]] == [{"x": 1}, {"x": 0}, {"x": 2}]
    fitted = replace(state, limits=Limits(context_tokens=30))
    kept = read(str(digest_messages(fitted, lambda m: len(str(m["content"]).split()), focus=True)[-1]["content"]))
    assert kept is not None and kept[1][0].arguments == {"x": 1} and len(kept[1]) < 3


async def test_a_digest_holds_each_result_once_and_no_miss_for_a_word_a_file_read_holds(workspace: Path) -> None:
    """The same listing asked twice is shown once; a search that found nothing for "timeouts" (nor for its
    word's start, "timeo"), where the file read says "timed out", is left out and its line never repeated, and
    so is one for "timeout" that found the line only by its word's start; a search that found nothing for a
    word no file read holds stays (a no rests on it), and is repeated last."""
    space = Workspace(workspace)
    tools = Registry([ListFiles(space), ReadFile(space), Search(space)])
    looked = calls(
        ("l1", "list_files", {}),
        ("l2", "list_files", {"path": "."}),
        ("s1", "search", {"pattern": "timeouts"}),
        ("s2", "search", {"pattern": "kubernetes"}),
        ("s3", "search", {"pattern": "timeout"}),
        ("r1", "read_file", {"path": "errors.log"}),
    )
    model, seen = answering(looked, "errors.log says worker 7 timed out.")
    controls = [LastTurn(), DigestAnswers(focus=True, matching_lines=12)]
    question = "Which file mentions a timeout or kubernetes?"
    result = await run(new_run(question, limits=Limits(max_turns=2)), tools, RunOptions(model, controls=controls))
    digest = str(seen[1].messages[-1]["content"])
    kept = read(digest)
    assert result.answer == "errors.log says worker 7 timed out." and kept is not None
    assert [f.call for f in kept[1]] == ['search(pattern="kubernetes")', 'read_file(path="errors.log")', "list_files()"]
    assert "No line matches 'timeout" not in digest and digest.count("No line matches") == 2
    # the miss a no rests on is repeated last, just before the question
    assert digest.endswith(f"No line matches 'kubernetes' (searched 3 files).\n\nAnswer the question: {question}")
    near = "'timeout' (searched 3 files). Lines with a word that begins like"
    assert any(near in str(m["content"]) for m in result.messages if m["role"] == "tool")  # the search found it
    assert "errors.log: ERROR worker 7 timed out" in digest.split("share words")[1]


def test_matching_lines_repeat_the_lines_that_share_most_words_with_the_question_each_after_its_file() -> None:
    listing = Finding("list_files", {}, "2 files, largest first:\nworker.log (90 bytes)\napi.log (40 bytes)")
    worker = Finding("read_file", {"path": "worker.log"}, "INFO worker started\nWARN worker slow\n" + "x " * 200)
    api = Finding("read_file", {"path": "api.log"}, "ERROR worker 7 timed out")
    found = [listing, worker, api]
    question = "Which log says a worker timed out?"
    assert matching(question, found, 12) == [
        "api.log: ERROR worker 7 timed out",  # worker and timed: two words shared
        "worker.log: INFO worker started",
        "worker.log: WARN worker slow",
    ]  # the listing's names are not repeated
    assert matching(question, found, 1) == ["api.log: ERROR worker 7 timed out"]
    assert matching("How many are there?", found, 12) == []
    state = new_run(question)
    for index, finding in enumerate(found[1:]):
        reply = reads(index)
        state.messages += [
            reply,
            {"role": "tool", "tool_call_id": reply["tool_calls"][0]["id"], "content": finding.result},
        ]
    text = str(digest_messages(state, lambda m: 1, focus=True, matching_lines=1)[-1]["content"])
    assert text.endswith("question:\n    1: ERROR worker 7 timed out\n\nAnswer the question: " + question)
    assert "Lines that share" not in str(digest_messages(state, lambda m: 1, focus=True)[-1]["content"])
    # a budget that holds the results but not the repeated lines: they go, and every result stays
    count = lambda m: len(str(m["content"]).split())  # noqa: E731
    bare = sum(count(m) + digit_tokens(m) for m in digest_messages(state, count, focus=True))
    fitted = replace(state, limits=Limits(context_tokens=bare))
    kept = read(str(digest_messages(fitted, count, focus=True, matching_lines=12)[-1]["content"]))
    assert kept is not None and len(kept[1]) == 2


def test_a_file_the_question_names_by_its_path_is_repeated_last_whole_on_one_line() -> None:
    todo = Finding("read_file", {"path": "docs/todo.md"}, "Ask Dana for the slides.\n\nBook the room.\n")
    other = Finding("read_file", {"path": "todo.md"}, "Buy milk.")  # same name, another folder: not named
    dotted = Finding("read_file", {"path": "./docs/todo.md"}, "Ask Dana for the slides.\n\nBook the room.\n")
    window = Finding("read_file", {"path": "docs/todo.md"}, "[docs/todo.md: lines 1-2 of 2]\nAsk Dana for the slides.")
    search = Finding("search", {"pattern": "docs/todo.md"}, "No line matches 'docs/todo.md' (searched 3 files).")
    found = [other, todo, window, search, dotted]  # the same read twice is shown once
    reader = ("read_file", "path")
    question = "Show me what docs/todo.md says."
    assert named_reads(question, found, reader) == [
        "docs/todo.md: Ask Dana for the slides. Book the room.",
        "docs/todo.md: Ask Dana for the slides.",  # a window, without its note
    ]
    assert named_reads("What do the notes say?", found, reader) == []  # no file named by its path
    assert named_reads(question, found, ("cat", "file")) == []  # only the run's reading tool reads a file
    long = Finding("read_file", {"path": "docs/todo.md"}, "word " * 500)
    assert len(named_reads(question, [long], reader)[0]) == len("docs/todo.md: ") + 400
    state = new_run(question)
    for index, finding in enumerate((other, todo)):
        reply = calls((f"call_{index}", "read_file", finding.arguments))
        state.messages += [reply, {"role": "tool", "tool_call_id": f"call_{index}", "content": finding.result}]
    ask = lambda **named: str(digest_messages(state, lambda m: 1, matching_lines=12, **named)[-1]["content"])  # noqa: E731
    assert ask(named_files=True, reader=reader).endswith(
        "question:\n    docs/todo.md: Ask Dana for the slides. Book the room.\n\nAnswer the question: " + question
    )
    assert "Lines that share" not in ask(reader=reader)  # off unless asked for
    assert "Lines that share" not in ask(named_files=True)  # nor without a reading tool to know a read by


LOG = "INFO up\nERROR disk full\nWARN slow\nERROR disk full\nerror: timeout\nINFO backup done\n"


def test_the_lines_of_a_file_read_that_hold_a_word_of_the_question_are_counted_as_written() -> None:
    read_log = Finding("read_file", {"path": "logs/backup.log"}, LOG)
    question = "Count the lines of logs/backup.log that report an ERROR."
    assert tallied(question, [read_log], lambda f: "lines") == ['logs/backup.log: 3 lines hold "ERROR"']
    # the file's own name is not counted ("backup" is in a line of it), nor a word only one line holds
    assert tallied("How many backup lines say disk or timeout?", [read_log], lambda f: "lines") == [
        'logs/backup.log: 2 lines hold "disk"'
    ]


def test_a_count_over_a_window_of_a_long_file_says_which_lines_it_counted() -> None:
    """A small model told "4 lines hold X" of the first 200 lines of a 650-line file answers 4 for the file."""
    window = f"[logs/backup.log: lines 1-6 of 1,650]\n{LOG}[1,644 more lines; call read_file with offset 7]"
    read_log = Finding("read_file", {"path": "logs/backup.log"}, window)
    assert tallied("How many lines report an ERROR?", [read_log], lambda f: "lines") == [
        'logs/backup.log: 3 of lines 1-6 hold "ERROR" (the file has 1,650 lines; the rest was not read)'
    ]


def test_a_searchs_lines_a_listing_and_a_windows_notes_are_not_counted() -> None:
    kinds = {"search": "found", "list_files": "names", "read_file": "lines"}
    found = [
        Finding("search", {"pattern": "ERROR"}, "9 matching lines in 2 files\na.log:1: ERROR x\nb.log:2: ERROR y"),
        Finding("list_files", {}, "2 files:\nERROR.log (3 bytes)\nERROR2.log (3 bytes)"),
        Finding("read_file", {"path": "big.log", "offset": 5}, "[big.log: lines 5-6 of 90 lines]\n5: ERROR a\n6: ok"),
    ]
    assert tallied("How many ERROR lines?", found, lambda f: kinds[f.name]) == []  # type: ignore[return-value]


def test_the_small_profiles_digest_ends_with_the_counts() -> None:
    state = new_run("How many lines of logs/app.log report an ERROR?")
    reply = calls(("count-1", "read_file", {"path": "logs/app.log"}))
    state.messages += [reply, {"role": "tool", "tool_call_id": "count-1", "content": LOG}]
    text = str(digest_messages(state, lambda m: 1, counts=True)[-1]["content"])
    assert text.endswith(
        "How many lines of each file read hold the question's words:\n"
        '    logs/app.log: 3 lines hold "ERROR"\n\nAnswer the question: How many lines of logs/app.log report an ERROR?'
    )
    assert "hold the question's words" not in str(digest_messages(state, lambda m: 1)[-1]["content"])


def test_of_a_listing_only_its_first_line_is_repeated_and_only_when_it_shares_a_word() -> None:
    head = "2 files in docs/guide, smallest first; the smallest is docs/guide/plan.md (15 bytes):"
    rest = "\ndocs/guide/plan.md (15 bytes)\ndocs/guide/little_notes.md (40 bytes)"
    listing = Finding("list_files", {"path": "docs/guide", "sort": "smallest"}, head + rest)
    read_notes = Finding("read_file", {"path": "docs/guide/little_notes.md"}, "keep it small")
    kinds = lambda f: "names" if f.name == "list_files" else "lines"  # noqa: E731
    question = "What is the smallest file?"
    assert matching(question, [listing, read_notes], 12, kinds) == [
        f"docs/guide, smallest: {head}",
        "docs/guide/little_notes.md: keep it small",
    ]  # its names are not lines a file says
    assert matching("Who wrote the notes?", [listing], 12, kinds) == []  # a word of a name listed is not enough
    assert matching("What does the docs/guide folder hold?", [listing], 12, kinds) == []  # nor the folder's
    missed = Finding("search", {"pattern": "smallest"}, "No line matches 'smallest' (searched 3 files).")
    assert matching(question, [missed], 12, lambda f: "nothing") == ["No line matches 'smallest' (searched 3 files)."]
    assert matching("Which file is the largest?", [missed], 12, lambda f: "nothing") == []  # a miss of another word


def test_a_searchs_lines_are_repeated_as_written_once_each_without_its_pattern_or_its_notes() -> None:
    hit = "docs/us/notes.txt:3: - set up weekly log rotation on the web hosts"
    first = Finding("search", {"pattern": "rotation"}, f"1 matching line in 1 file for 'rotation':\n{hit}")
    near = (
        "No line matches 'rotating' (searched 9 files). Lines with a word that begins like one of its words"
        f" ('rotat'), which may say it another way: 2 lines in 2 files:\nTODO.md:3: - [x] rotate the keys\n{hit}"
    )
    second = Finding("search", {"pattern": "rotating"}, near)
    kinds = lambda f: "found" if f.result.startswith("1 ") else "near"  # noqa: E731
    assert matching("Which file is about log rotation?", [first, second], 12, kinds) == [
        hit,  # "log" and "rotation": two words shared; the same line found twice is shown once
        "TODO.md:3: - [x] rotate the keys",
    ]  # never `rotation: docs/us/notes.txt...`, whose pattern reads as a file's name
    assert matching("Is there a file about rotating logs?", [second], 12, kinds)[0] == hit  # "logs" meets "log"
    assert matching("What do the docs say about hosts?", [first], 12, kinds) == [hit]  # by what it says, "hosts"
    assert matching("What do the docs say?", [first], 12, kinds) == []  # not by its file's name, "docs"


def test_a_focused_digest_puts_a_related_result_before_the_listing_and_the_listing_before_the_rest() -> None:
    listing = Finding("list_files", {}, "3 files, largest first:\nbig.log (900 bytes)\na.log\nplan.md")
    big = Finding("read_file", {"path": "big.log"}, "disk at 40%")
    hit = Finding("read_file", {"path": "a.log"}, "ERROR upstream call timed out")
    plan = Finding("read_file", {"path": "plan.md"}, "Ship on Friday.")
    found = [listing, big, hit, plan]
    assert focused("Which file reports a timeout?", found) == [hit, listing, big, plan]  # "time" is shared
    assert focused("What does plan.md say?", found) == [plan, listing, big, hit]  # by the call's path
    assert focused("How many files are there?", found) == found  # nothing shared: the listing leads


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


def test_a_result_that_shares_no_word_with_the_question_is_cut_in_the_digest() -> None:
    state = new_run("Which file mentions a timeout?")
    state.messages += [
        calls(("a", "read_file", {"path": "big.log"}), ("b", "read_file", {"path": "errors.log"})),
        {"role": "tool", "tool_call_id": "a", "name": "read_file", "content": "\n".join(f"ok {n}" for n in range(50))},
        {"role": "tool", "tool_call_id": "b", "name": "read_file", "content": "worker timed out\n" * 20},
    ]
    text = str(digest_messages(state, lambda m: 1, unrelated_lines=8)[-1]["content"])
    assert "ok 5" in text and "ok 40" not in text and "lines not shown" in text
    assert text.count("worker timed out") == 20  # a related result stays whole


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
    assert [f.result for f in findings(messages)] == ["Wrote 1 bytes to a.md.", "x"]


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

"""The controls, each at its hook points, through the real loop with stand-in models; profiles and `auto`."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, replace
from pathlib import Path
from typing import ClassVar

import httpx
import pytest

from harness.client import FunctionModel, OpenAIClient
from harness.config import ControlSpec, Profile
from harness.controls import SMALL, Hooks, NotYet, RunContext, Turn, build, choose
from harness.controls.base import ask_for_answer
from harness.controls.digest import (
    PROSE_GRAMMAR,
    DigestAnswers,
    digest_messages,
    digit_tokens,
    focused,
    matching,
)
from harness.controls.empty_reply import EmptyReply
from harness.controls.fit_context import FitContext
from harness.controls.last_turn import LastTurn
from harness.controls.look_first import LookFirst
from harness.controls.parallel_calls import ParallelCalls
from harness.controls.profiles import fitted_profile, needs_card
from harness.controls.repeat_guard import RepeatGuard
from harness.controls.unread_paths import UnreadPaths
from harness.errors import ConfigError, ContextTooSmall, StateError
from harness.limits import Limits
from harness.loop import run
from harness.options import RunOptions
from harness.protocols import ModelReply, ModelRequest
from harness.state import new_run
from harness.store import FileStore
from harness.tools.base import Registry
from harness.tools.files import ListFiles, ReadFile
from harness.tools.search import Search
from harness.tools.workspace import Workspace
from harness.tools.writes import WriteFile
from harness.trace import MemoryTrace
from serve.scripted.app import create_app
from tests.harness.helpers import Recorder, calls
from wire.digest import Finding, read
from wire.types import AssistantMessage, ModelCard, usage_of

QUESTION = "Which probe value is right?"


def answering(*replies: AssistantMessage | str, rate: float = 0.25) -> tuple[FunctionModel, list[ModelRequest]]:
    """A model that replies from a fixed list and keeps every request it was sent; it counts `rate` prompt
    tokens per character of content."""
    seen: list[ModelRequest] = []

    def reply(request: ModelRequest) -> ModelReply:
        seen.append(request)
        out = replies[len(seen) - 1]
        message: AssistantMessage = {"role": "assistant", "content": out} if isinstance(out, str) else out
        prompt = int(sum(len(str(m.get("content") or "")) for m in request.messages) * rate)
        return ModelReply(message, usage_of(prompt, 2), "tool_calls" if message.get("tool_calls") else "stop")

    return FunctionModel(reply), seen


BATCHES = iter(range(1_000_000))


def reads(*values: int) -> AssistantMessage:
    """One reply reading these probe values, its call ids new in the test session."""
    batch = next(BATCHES)
    return calls(*((f"b{batch}-{i}", "probe", {"x": v}) for i, v in enumerate(values)))


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
    assert guard["repeats"] == 1 and list(guard["seen"]) == ['probe:{"x":1}']
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


async def test_the_first_turns_must_call_and_the_first_call_is_the_bare_tool() -> None:
    bare = Recorder(name="look", parameters={"type": "object", "properties": {}})
    needs_x = Recorder(parameters={"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]})
    model, seen = answering(calls(("a", "look", {})), reads(1), "It is 7.")
    options = RunOptions(model=model, controls=[LookFirst(turns=2), ParallelCalls()])
    result = await run(new_run(QUESTION), Registry([bare, needs_x]), options)
    assert result.answer == "It is 7."
    assert seen[0].tool_choice == {"type": "function", "function": {"name": "look"}}
    assert (seen[1].tool_choice, seen[2].tool_choice) == ("required", None)
    assert all(request.parallel_tool_calls for request in seen)


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
    """The same listing asked twice is shown once; a search that found nothing for "timeout", where the file
    read says "timed out", is left out and its line never repeated; a search that found nothing for a word no
    file read holds stays (a no rests on it)."""
    space = Workspace(workspace)
    tools = Registry([ListFiles(space), ReadFile(space), Search(space)])
    looked = calls(
        ("l1", "list_files", {}),
        ("l2", "list_files", {"path": "."}),
        ("s1", "search", {"pattern": "timeout"}),
        ("s2", "search", {"pattern": "kubernetes"}),
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
    assert "No line matches 'timeout'" not in digest and digest.count("No line matches") == 1
    assert "errors.log: ERROR worker 7 timed out" in digest.split("share words")[1]
    assert "kubernetes" not in digest.split("share words")[1].split("Answer the question")[0]


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


def test_a_focused_digest_puts_a_related_result_before_the_listing_and_the_listing_before_the_rest() -> None:
    listing = Finding("list_files", {}, "3 files, largest first:\nbig.log (900 bytes)\na.log\nplan.md")
    big = Finding("read_file", {"path": "big.log"}, "disk at 40%")
    hit = Finding("read_file", {"path": "a.log"}, "ERROR upstream call timed out")
    plan = Finding("read_file", {"path": "plan.md"}, "Ship on Friday.")
    found = [listing, big, hit, plan]
    assert focused("Which file reports a timeout?", found) == [hit, listing, big, plan]  # "time" is shared
    assert focused("What does plan.md say?", found) == [plan, listing, big, hit]  # by the call's path
    assert focused("How many files are there?", found) == found  # nothing shared: the listing leads


def test_a_profile_builds_its_controls_and_refuses_unknown_ones() -> None:
    built = build(Profile("mine", (ControlSpec("look_first", {"turns": 1}), ControlSpec("digest_answers"))))
    assert [c.name for c in built] == ["look_first", "digest_answers"] and built[0] == LookFirst(turns=1)
    with pytest.raises(ConfigError, match="unknown control 'guess'"):
        build(Profile("mine", (ControlSpec("guess"),)))
    with pytest.raises(ConfigError, match="look_first"):
        build(Profile("mine", (ControlSpec("look_first", {"turn": 1}),)))


def qwen(**meta: object) -> ModelCard:
    """A card as a server sends it, read as the client reads one."""
    card = ModelCard.read({"id": "qwen", "meta": meta})
    assert card is not None
    return card


def test_auto_takes_tiny_or_small_for_a_model_the_server_says_is_small_and_none_otherwise() -> None:
    card = qwen(n_params=494_032_768)
    assert choose("qwen", [card]).name == "tiny" and "0.49B" in choose("qwen", [card]).why
    assert choose("other", [card]).name == "tiny"  # one card: a server of one model (llama-server's ids are paths)
    assert choose("qwen", [qwen(n_params=1_543_714_304)]).name == "small"
    assert choose("qwen", [qwen(n_params=70_000_000_000)]).name == "none"
    assert choose("solve", [ModelCard(id="solve"), ModelCard(id="plan")]).name == "none"
    assert choose("qwen", None).why == "auto: the server's model list could not be read"


def test_small_named_outright_is_told_the_window_as_auto_is() -> None:
    card = qwen(n_params=494_032_768, context=4096)
    told = fitted_profile(SMALL, "qwen", [card])
    windows = {s.name: s.params.get("context") for s in told.controls}
    assert windows["fit_context"] == windows["digest_answers"] == 4096 and windows["look_first"] is None
    assert needs_card(SMALL) and not needs_card(told) and not needs_card(choose("qwen", [card]))
    assert fitted_profile(SMALL, "qwen", [ModelCard(id="qwen")]) == SMALL  # a server that does not say


def read_enum(request: ModelRequest) -> list[str]:
    tool = next(t for t in request.tools if t["function"]["name"] == "read_file")
    return list(tool["function"]["parameters"]["properties"]["path"]["enum"])


def narrowed_to(request: ModelRequest) -> list[str]:
    return list(request.extra["tool_parameters"]["read_file"]["properties"]["path"]["enum"])


@pytest.mark.parametrize("by_field", [False, True], ids=["in the tools", "by tool_parameters"])
async def test_read_paths_are_narrowed_to_the_files_not_read_yet(workspace: Path, by_field: bool) -> None:
    """A read tool's path is an enum of the existing, unread files; calls are required while a file is
    unread; once every file is read the read tool is set aside. A server that takes `tool_parameters` gets
    the narrowing there, and the tools it is sent list every file at every turn."""
    space = Workspace(workspace)
    tools = Registry([ListFiles(space), ReadFile(space)])
    model, seen = answering(
        calls(("a", "read_file", {"path": "notes.txt"})),
        calls(("b", "read_file", {"path": "errors.log"}), ("c", "read_file", {"path": "access.log"})),
        "Read them all.",
    )
    control = UnreadPaths(look_while_unread=2, tool_parameters=by_field)
    result = await run(new_run(QUESTION), tools, RunOptions(model, controls=[control]))
    assert result.answer == "Read them all."
    every, unread = ["access.log", "errors.log", "notes.txt"], ["access.log", "errors.log"]
    if by_field:
        assert [read_enum(r) for r in seen] == [every] * 3
        assert [narrowed_to(r) for r in seen[:2]] == [every, unread]
        assert "read_file" not in seen[2].extra.get("tool_parameters", {})
    else:
        assert [read_enum(r) for r in seen] == [every, unread, every] and seen[2].extra == {}
    assert [r.tool_choice for r in seen] == ["required", "required", None]  # nothing unread: free to answer


async def test_a_question_that_names_a_file_is_free_to_answer_once_that_file_is_read(workspace: Path) -> None:
    (workspace / "sub").mkdir()
    (workspace / "sub" / "notes.txt").write_text("another note\n")
    space = Workspace(workspace)
    tools = Registry([ListFiles(space), ReadFile(space)])
    model, seen = answering(
        calls(("a", "read_file", {"path": "sub/notes.txt"})),
        calls(("b", "read_file", {"path": "notes.txt"})),
        "It says: Remember to rotate your logs.",
    )
    question = "What does notes.txt say?"  # names notes.txt, not sub/notes.txt
    await run(new_run(question), tools, RunOptions(model, controls=[UnreadPaths(look_while_unread=5)]))
    assert [r.tool_choice for r in seen] == ["required", "required", None]


async def test_the_files_a_question_names_are_the_only_reads_offered_until_they_are_read(workspace: Path) -> None:
    """A question that names a file (or a folder of it by a path of two names) is about that file: a small
    model that reads another first answers from the wrong one, so the read is kept to the named files
    while any is unread, then opens to the other unread files. A one-word folder (`sub`) names nothing."""
    (workspace / "sub" / "deep").mkdir(parents=True)
    (workspace / "sub" / "deep" / "a.txt").write_text("a\n")
    (workspace / "sub" / "deep" / "b.txt").write_text("b\n")
    space = Workspace(workspace)
    tools = Registry([ListFiles(space), ReadFile(space)])
    model, seen = answering(
        calls(("a", "read_file", {"path": "errors.log"})), calls(("b", "read_file", {"path": "notes.txt"})), "Done."
    )
    await run(new_run("What port does errors.log give?"), tools, RunOptions(model, controls=[UnreadPaths()]))
    assert read_enum(seen[0]) == ["errors.log"]
    assert "errors.log" not in read_enum(seen[1]) and len(read_enum(seen[1])) > 3
    model, seen = answering("Done.")
    await run(new_run("What is in sub/deep?"), tools, RunOptions(model, controls=[UnreadPaths()]))
    assert sorted(read_enum(seen[0])) == ["sub/deep/a.txt", "sub/deep/b.txt"]
    model, seen = answering("Done.")
    await run(new_run("What is in the sub folder?"), tools, RunOptions(model, controls=[UnreadPaths()]))
    assert len(read_enum(seen[0])) > 2


async def test_a_write_makes_every_file_unread_again_and_the_paths_follow_the_folder(workspace: Path) -> None:
    space = Workspace(workspace)
    tools = Registry([ReadFile(space), WriteFile(space, needs_approval=False)])
    every = [("r0", "read_file", {"path": "access.log"}), ("r1", "read_file", {"path": "errors.log"})]
    model, seen = answering(
        calls(*every, ("r2", "read_file", {"path": "notes.txt"})),
        calls(("w", "write_file", {"path": "new.txt", "content": "new"})),
        "Done.",
    )
    await run(new_run(QUESTION), tools, RunOptions(model, controls=[UnreadPaths(look_while_unread=5)]))
    assert [r.tool_choice for r in seen] == ["required", None, "required"]
    assert "new.txt" not in read_enum(seen[1]) and "new.txt" in read_enum(seen[2])


async def test_under_the_small_profile_the_tools_sent_stay_the_same_until_the_answer_turn(workspace: Path) -> None:
    """Chat templates write the tools at the top of the prompt: a list that changed at every turn would make
    the server read the whole conversation again each time. (On a server that takes `tool_parameters`.)"""
    space = Workspace(workspace)
    model, seen = answering(
        calls(("a", "list_files", {})),
        calls(("b", "read_file", {"path": "notes.txt"})),
        calls(("c", "read_file", {"path": "errors.log"})),
        calls(("d", "read_file", {"path": "access.log"})),
        "errors.log mentions it.",
    )
    card = qwen(n_params=494_032_768, extensions=["tool_parameters"])
    controls = build(choose("qwen", [card]))
    result = await run(
        new_run(QUESTION), Registry([ListFiles(space), ReadFile(space)]), RunOptions(model, controls=controls)
    )
    assert result.answer == "errors.log mentions it." and len(seen) == 5
    assert all(r.tools == seen[0].tools for r in seen[:4]) and seen[4].tools == []
    named = {"type": "function", "function": {"name": "read_file"}}
    assert seen[1].tool_choice == seen[2].tool_choice == named  # listed already: the forced call is a read


async def test_parallel_calls_asks_a_server_that_can_to_end_a_reply_at_a_repeated_read(workspace: Path) -> None:
    space = Workspace(workspace)
    tools = Registry([ListFiles(space), ReadFile(space), WriteFile(space, needs_approval=False)])
    model, seen = answering(calls(("a", "read_file", {"path": "notes.txt"})), "Done.")
    await run(new_run(QUESTION), tools, RunOptions(model, controls=[ParallelCalls(distinct_calls=True)]))
    assert seen[0].extra["distinct_calls"] == ["list_files", "read_file"]  # a write repeated may be meant
    card = qwen(n_params=494_032_768, extensions=["distinct_calls"])
    told = {s.name: s.params for s in fitted_profile(SMALL, "qwen", [card]).controls}
    assert told["parallel_calls"] == {"distinct_calls": True} and "distinct_calls" not in told["unread_paths"]


async def test_an_answer_turn_sends_no_field_that_names_a_tool(workspace: Path) -> None:
    """The last turn the cap allows offers no tools: a field that narrows or names one would be refused by a
    server that checks it (this project's says which tool is not among the tools)."""
    app = httpx.ASGITransport(app=create_app())
    client = OpenAIClient("http://test/v1", "solve", transport=app)
    space = Workspace(workspace)
    controls = [UnreadPaths(tool_parameters=True), ParallelCalls(distinct_calls=True), LastTurn()]
    state = new_run("Which file mentions a timeout?", limits=Limits(max_turns=2))
    result = await run(state, Registry([ListFiles(space), ReadFile(space)]), RunOptions(client, controls=controls))
    assert result.status == "completed" and result.turns == 2 and not client.refused


def test_a_folder_larger_than_the_bound_is_left_open(workspace: Path) -> None:
    state = new_run(QUESTION)
    tools = Registry([ReadFile(Workspace(workspace))])
    turn = Turn(ModelRequest(state.messages, tools.definitions()))
    UnreadPaths(most=2).before_request(RunContext(state, tools, lambda m: 0), turn)
    assert "enum" not in turn.request.tools[0]["function"]["parameters"]["properties"]["path"]


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


async def test_with_every_file_read_and_listed_the_next_turn_asks_for_the_answer(workspace: Path) -> None:
    """Nothing is left to call: the turn is an answer turn (here a digest), not a request with no tools."""
    space = Workspace(workspace)
    model, seen = answering(
        calls(("a", "list_files", {})),
        calls(*((f"r{i}", "read_file", {"path": p}) for i, p in enumerate(["access.log", "errors.log", "notes.txt"]))),
        "errors.log mentions it.",
    )
    controls = [RepeatGuard(), UnreadPaths(), DigestAnswers()]
    result = await run(
        new_run(QUESTION), Registry([ListFiles(space), ReadFile(space)]), RunOptions(model, controls=controls)
    )
    assert result.answer == "errors.log mentions it." and seen[2].tools == []
    assert read(str(seen[2].messages[-1]["content"])) is not None


async def test_a_request_over_the_window_is_sent_with_its_longest_results_cut_and_the_transcript_kept() -> None:
    long = "\n".join(f"line {n} of the log" for n in range(400))
    model, seen = answering(reads(1), reads(2), "done")
    control = FitContext(context=2000)
    options = RunOptions(model=model, controls=[control], count_tokens=lambda m: len(str(m.get("content") or "")) // 4)
    result = await run(new_run(QUESTION), Registry([Recorder(output=long)]), options)
    assert result.answer == "done"
    sent = [str(m["content"]) for m in seen[2].messages if m["role"] == "tool"]
    assert all("lines not shown" in text for text in sent) and sum(len(t) for t in sent) // 4 < 2000
    assert [str(m["content"]) for m in result.messages if m["role"] == "tool"] == [long, long]  # kept whole
    small, small_seen = answering(reads(1), "done")
    await run(new_run(QUESTION), Registry([Recorder(output="short")]), replace(options, model=small))
    assert small_seen[1].messages[-1]["content"] == "short"  # a request that fits is sent as it is


async def test_results_once_cut_stay_cut_the_same_way_until_more_room_is_needed() -> None:
    """A server's prompt cache reuses a conversation up to its first changed token. A cut leaves room for the
    turns after it, which send the earlier results exactly as before and add theirs; the old results change
    again only when the new ones have used that room up."""
    text = "\n".join(f"line {n} of the log" for n in range(30))  # about 140 tokens at a quarter per character
    model, seen = answering(*(reads(n) for n in range(12)), "done")
    options = RunOptions(
        model=model,
        controls=[FitContext(context=1200)],
        count_tokens=lambda m: len(str(m.get("content") or "")) // 4,
        max_tokens=64,
    )
    await run(new_run(QUESTION), Registry([Recorder(output=text)]), options)
    sent = [[str(m["content"]) for m in request.messages if m["role"] == "tool"] for request in seen]
    changed = [n for n, (a, b) in enumerate(itertools.pairwise(sent), 1) if b[: len(a)] != a]
    assert len(sent[-1]) == 12 and sum(len(t) for t in sent[-1]) // 4 < 1200
    assert 1 <= len(changed) <= 4 and all(b - a > 1 for a, b in itertools.pairwise(changed))


@pytest.mark.parametrize(("rate", "cut"), [(0.25, False), (0.6, True)])
async def test_the_count_is_scaled_to_what_the_server_counted(rate: float, cut: bool) -> None:
    """The harness counts a quarter token per character; a server that counts more is believed."""
    text = "\n".join(f"line {n} of the log" for n in range(120))  # about 570 tokens at the harness's count
    model, seen = answering(reads(1), reads(2), "done", rate=rate)
    options = RunOptions(
        model=model,
        controls=[FitContext(context=1600)],
        count_tokens=lambda m: len(str(m.get("content") or "")) // 4,
        max_tokens=64,
    )
    await run(new_run(QUESTION), Registry([Recorder(output=text)]), options)
    sent = [str(m["content"]) for m in seen[2].messages if m["role"] == "tool"]
    assert any("lines not shown" in t for t in sent) is cut


async def test_the_first_forced_listing_is_decoded_with_no_arguments_where_the_server_narrows_calls(
    workspace: Path,
) -> None:
    """A small model fills a listing's optional folder with a file's path it saw elsewhere; told
    `tool_parameters`, look_first asks the server for a call with no arguments at all."""
    space = Workspace(workspace)
    model, seen = answering(calls(("a", "list_files", {})), "done")
    controls = [LookFirst(turns=1, tool_parameters=True)]
    await run(new_run(QUESTION), Registry([ListFiles(space), ReadFile(space)]), RunOptions(model, controls=controls))
    assert seen[0].tool_choice == {"type": "function", "function": {"name": "list_files"}}
    assert seen[0].extra["tool_parameters"] == {"list_files": {"type": "object", "properties": {},
                                                               "additionalProperties": False}}  # fmt: skip
    assert "tool_parameters" not in seen[1].extra


@pytest.mark.parametrize(("size", "forced"), [(100, True), (40_000, False)])
async def test_calls_are_required_while_unread_files_could_be_read_whole(
    workspace: Path, size: int, forced: bool
) -> None:
    """Under an 8,192-token window a folder of a few hundred bytes is read whole; one holding a 40 KB log is
    left to the model and its search."""
    (workspace / "big.log").write_text("x" * size)
    space = Workspace(workspace)
    model, seen = answering(calls(("a", "read_file", {"path": "notes.txt"})), "done", "done")
    control = UnreadPaths(look_while_unread=3, context=8192)
    await run(new_run(QUESTION), Registry([ListFiles(space), ReadFile(space)]), RunOptions(model, controls=[control]))
    assert (seen[1].tool_choice == "required") is forced


async def test_a_window_of_a_long_file_leaves_it_unread(workspace: Path) -> None:
    (workspace / "long.log").write_text("".join(f"line {n}\n" for n in range(5000)))
    space = Workspace(workspace)
    model, seen = answering(calls(("a", "read_file", {"path": "long.log"})), "done")
    control = UnreadPaths(tool_parameters=False)
    await run(new_run(QUESTION), Registry([ReadFile(space, 2000)]), RunOptions(model, controls=[control]))
    assert "long.log" in read_enum(seen[1])  # the rest may be read on


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

    class AnswerSecond(Hooks):
        name: ClassVar[str] = "answer_second"

        def before_request(self, run: RunContext, turn: Turn) -> None:
            if run.state.turns == 1:
                ask_for_answer(turn, "a test's answer turn")

    controls = [AnswerSecond(), DigestAnswers()]
    state = new_run("Write summary.md saying what notes.txt holds.")
    result = await run(state, tools, RunOptions(model, controls=controls))
    assert [d["function"]["name"] for d in seen[1].tools] == ["write_file"]  # the answer turn, with the write
    assert seen[1].tool_choice == "auto" and (workspace / "summary.md").read_text() == "notes.txt: rotate the logs"
    assert result.status == "completed" and result.answer == "Wrote summary.md."


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

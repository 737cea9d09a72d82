"""digest_answers: an answer turn is asked as a digest, the question beside what the tools returned."""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

from harness.controls.base import Hooks
from harness.controls.budget import CONTEXT_MARGIN, digit_tokens, room, shorter, trimmed
from harness.controls.read_first import shown as shown_file
from harness.core.protocols import ModelReply, ModelRequest, Tool
from harness.core.results import ResultKind, Shown, ToolResult
from harness.core.state import RunState
from harness.core.turn import NotYet, RunContext, Turn
from harness.errors import ContextTooSmall, ToolError
from harness.fs.workspace import Workspace
from harness.prompts import ERROR, NOT_RUN, make_the_call, write_it
from harness.tools.roles import OverWorkspace, ReadsOneFile
from wire.digest import Finding, write
from wire.types import Message, ToolCall, ToolDefinition, decoded_arguments

# the reply has to open with a word (a letter, a digit or a quote), not JSON, a tag, a list or a fence (GBNF)
PROSE_GRAMMAR = 'root ::= [ \\t\\n]* [A-Za-z0-9"\u00c0-\uffff] [^\\x00]*'
Relevance = Callable[[str], float]  # how much a text bears on the question (the workspace index's weights)


@dataclass(frozen=True)
class DigestAnswers(Hooks):
    """An answer turn (one a control marked: the model is done looking) is asked as a fresh conversation:
    the run's system messages and one user message holding the question beside each distinct call and its
    result (`wire.digest`), no tools, and a grammar that makes the reply open with a word. A small model that
    has looked in the right place often answers by echoing the last result or by describing its tools; with
    no call syntax to imitate and none of its own replies to copy, it states what the results say. Calls in
    the reply are dropped: none were offered, and the model saw none of the run's call ids.

    The digest fits the model's context (`context` tokens, learned from the server, less the reply's
    max_tokens): the longest results lose their middle lines first. How much a result or a line bears on
    the question is the workspace index's measure (the question's terms it holds, each weighted by how rare
    it is in this folder, in any language; `relevance`). With `focus`, the results that bear most on the
    question come first, and when the digest must still shrink the least related go first. With
    `matching_lines`, up to that many lines of the results that bear on the question, most first, are
    written again last, just before the question: a small model answers from what it read last.

    A run whose tools can change files (the person offered them) and that has not changed anything yet is
    asked the digest with those tools still offered, the model free to call one or to answer: a task whose
    result is a change is finished by that change, not by words about it. An answer to that digest that
    names one of those tools instead of calling it is asked, once a run, to make the call, and the next turn
    must call one of them (unless the question itself names the tool). So is an answer of three lines or
    more that names a file the question names and the workspace does not hold yet, which most often gives
    the file's content instead of writing it: the model is asked to write it, and may answer again instead.
    With `after_refusal`, a change refused because its file had not been read, while nothing has changed
    yet, is asked again as a digest that shows the file as read, the changing tools offered.
    """

    name: ClassVar[str] = "digest_answers"
    context: int = 0  # the model's context window in tokens, when the server said (0: unknown)
    focus: bool = False
    matching_lines: int = 0
    after_refusal: bool = False

    def before_send(self, run: RunContext, turn: Turn) -> None:
        if turn.answer is None:
            return
        budget = room(self.context, turn.request.max_tokens) if self.context else None
        messages = digest_messages(
            run.state,
            run.count,
            budget,
            focus=self.focus,
            matching_lines=self.matching_lines,
            relevance=relevance_of(run),
            changes=frozenset(t.name for t in run.tools if not t.read_only),
            reader=reader_of(run),
        )
        if turn.finishing:
            changers = [d for d in turn.request.tools if d["function"]["name"] in turn.finishing]
            turn.request = ModelRequest(messages, changers, turn.request.max_tokens, "auto")
            return
        grammar = {"grammar": PROSE_GRAMMAR}
        turn.request = ModelRequest(messages, [], turn.request.max_tokens, None, None, grammar)

    def decide(self, run: RunContext, turn: Turn) -> str | None:
        """With `after_refusal`, after a change refused because its file had not been read (its slot shows the
        file), while nothing has changed yet, the turn is asked as a digest: the file shown as read, the
        changing tools offered."""
        last = run.state.messages[-1] if run.state.messages else None
        if not self.after_refusal or last is None or last["role"] != "tool" or not self.changers(run):
            return None
        shown = run.state.shown.get(str(last["tool_call_id"]))
        refused = shown is not None and shown.kind == "lines" and str(last["content"]).startswith(NOT_RUN)
        return "shown the file to change" if refused else None

    def on_answer(self, run: RunContext, turn: Turn, reply: ModelReply) -> NotYet | None:
        if turn.answer is None or reply.message.get("tool_calls") or not turn.request.tools:
            return None
        text, question = str(reply.message.get("content") or ""), run.state.question
        offered = sorted(d["function"]["name"] for d in turn.request.tools)
        described = [name for name in offered if named_in(name, text) and not named_in(name, question)]
        unwritten = [] if described else self.unwritten(run, question, text)
        if not described and not unwritten:
            return None
        with self.remember(run, Changed) as memory:
            if memory.asked_at:
                return None
            memory.asked_at = len(run.state.messages) + 1  # the ask, written after this reply
            memory.must_call = not unwritten
        if unwritten:
            return NotYet("gave a file's content", {"role": "user", "content": write_it(unwritten[0], offered)})
        return NotYet("described a change", {"role": "user", "content": make_the_call(described)})

    def before_request(self, run: RunContext, turn: Turn) -> None:
        memory = self.recall(run, Changed)
        if memory.tools or not memory.must_call or not memory.asked_at or len(run.state.messages) != memory.asked_at:
            return
        turn.set_aside({t.name for t in run.tools if t.read_only})
        turn.require()

    def after_call(
        self, run: RunContext, call: ToolCall, tool: Tool, args: dict[str, Any], result: ToolResult, ok: bool
    ) -> None:
        if ok and not tool.read_only:
            with self.remember(run, Changed) as memory:
                memory.tools.append(tool.name)

    @staticmethod
    def unwritten(run: RunContext, question: str, text: str) -> list[str]:
        """The files the question names that do not exist yet and that this answer gives lines for: a model
        asked to write a file often writes its content as the answer ("Here is docs/SUMMARY.md: …")."""
        if sum(1 for line in text.splitlines() if line.strip()) < CONTENT_LINES:
            return []
        spaces = [t.workspace for t in run.tools if not t.read_only and isinstance(t, OverWorkspace)]
        named = sorted((path for path in file_names(question) if named_in(path, text)), key=lambda p: -p.count("/"))
        return [path for path in named if spaces and not any(space.exists(path) for space in spaces)]

    def changers(self, run: RunContext) -> list[ToolDefinition]:
        """The tools that change files, when none of them has changed anything in this run yet."""
        if self.recall(run, Changed).tools:
            return []
        return [d for d in run.tools.definitions() if (t := run.tools.get(d["function"]["name"])) and not t.read_only]


def relevance_of(run: RunContext) -> Relevance:
    """How much a text bears on the run's question, by the workspace index when the run has one."""
    if run.index is None:
        return lambda text: 0.0
    weights = run.index.weights(run.state.question)
    return lambda text: run.index.relevance(text, weights) if run.index is not None else 0.0


@dataclass(frozen=True)
class Reader:
    """The tool that reads one file: its name, its path parameter and its workspace."""

    name: str
    path_parameter: str
    workspace: Workspace


def reader_of(run: RunContext) -> Reader | None:
    """The tool that reads one file, when the run has exactly one."""
    readers = [Reader(t.name, t.path_parameter, t.workspace) for t in run.tools if t.read_only
               and isinstance(t, ReadsOneFile)]  # fmt: skip
    return readers[0] if len(readers) == 1 else None


CONTENT_LINES = 3  # an answer of fewer non-empty lines says something of a file; it does not give its content


def file_names(text: str) -> list[str]:
    """The words of the text that name a file by a name with an extension (`SUMMARY.md`, `docs/a.txt`; not
    `e.g.` or `3.11`), in order, without the quotes or punctuation around them."""
    words = (word.lstrip("`'\"([{<").rstrip("`'\")]}>,;:!?.") for word in text.split())
    return list(dict.fromkeys(word for word in words if has_extension(word)))


def has_extension(word: str) -> bool:
    stem, dot, extension = word.rpartition("/")[2].rpartition(".")
    return bool(dot) and len(stem.lstrip(".")) > 1 and extension.isalnum() and not extension.isdigit()


@dataclass
class Changed:
    tools: list[str] = field(default_factory=list)  # the changing tools that ran without an error
    asked_at: int = 0  # how many messages the run held once it was asked to make a call it described
    must_call: bool = True  # the turn after the ask must call (it may answer instead after an ask to write)


def named_in(name: str, text: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text) is not None


@dataclass(frozen=True)
class Found:
    """A distinct call of the run with its result, and what the harness knows its result shows."""

    finding: Finding
    shown: Shown

    @property
    def kind(self) -> ResultKind:
        return self.shown.kind


def findings(messages: Sequence[Message], shown: dict[str, Shown]) -> list[Found]:
    """Each distinct call the run made, with its result, in the order the results came: its first result, or
    the first that ran when the harness filled its slot first ("Not run: …", a change refused until the
    file was read, then made; made again and failed, the slot that showed the file stays)."""
    calls = {c["id"]: c["function"] for m in messages if m["role"] == "assistant" for c in m.get("tool_calls", [])}
    found: dict[str, Found] = {}
    for message in messages:
        if message["role"] != "tool" or (call := calls.get(message["tool_call_id"])) is None:
            continue
        args = decoded_arguments(call["arguments"])
        finding = Finding(call["name"], args if isinstance(args, dict) else call["arguments"], str(message["content"]))
        earlier = found.get(finding.call)
        fresh = Found(finding, shown.get(message["tool_call_id"], Shown()))
        if earlier is None or (
            earlier.finding.result.startswith(NOT_RUN) and not finding.result.startswith((NOT_RUN, ERROR))
        ):
            found[finding.call] = fresh
    return list(found.values())


MAX_RESULT_LINES = 60
LISTED: frozenset[ResultKind] = frozenset(("names", "nothing"))  # results that say the same when made again


def digest_messages(
    state: RunState,
    count: Callable[[Message], int],
    context: int | None = None,
    *,
    focus: bool = False,
    matching_lines: int = 0,
    relevance: Relevance = lambda text: 0.0,
    changes: Collection[str] = (),
    reader: Reader | None = None,
) -> list[Message]:
    """The run's system messages, then the question beside the results: each listing and miss once (one
    whose result repeats an earlier one's of the same tool adds nothing). Results are cut to
    MAX_RESULT_LINES; under a context budget (the run's, or the model's window) the longest lose their middle
    lines first, and only when none can shrink further do the matching lines go, then the oldest results
    (with `focus`, the least related). Calls to the tools `changes` names that changed nothing are left out
    (`made_or_shown`)."""
    head = [m for m in state.messages if m["role"] == "system"]
    made = made_or_shown(findings(state.messages, state.shown), changes, reader)
    every = distinct_results(made)
    matches = matching(every, matching_lines, relevance) if matching_lines else []
    found = [trimmed_finding(f.finding, MAX_RESULT_LINES) for f in every]
    if focus:
        found = sorted(found, key=lambda f: -relevance(f"{f.call}\n{f.result}"))  # stable: ties keep their order
    budgets = [b for b in (state.limits.context_tokens, int(context * CONTEXT_MARGIN) if context else None) if b]
    budget = min(budgets) if budgets else None
    while True:
        ask: Message = {"role": "user", "content": write(state.question, found, matches)}
        used = sum(count(m) + digit_tokens(m) for m in [*head, ask])
        if budget is None or used <= budget:
            return [*head, ask]
        longest = max(range(len(found)), key=lambda i: len(found[i].result.splitlines()), default=None)
        step = shorter(len(found[longest].result.splitlines())) if longest is not None else None
        if longest is not None and step is not None:
            found[longest] = trimmed_finding(found[longest], step)
            continue
        if matches:  # repeated lines go before any result does
            matches = []
            continue
        if not found:
            raise ContextTooSmall(f"the question and system prompt need {used} tokens; the context budget is {budget}")
        found = found[:-1] if focus else found[1:]  # focused: the least related go first; else the oldest


def made_or_shown(found: Sequence[Found], changes: Collection[str], reader: Reader | None) -> list[Found]:
    """The findings less the calls to tools that change files (`changes`) that changed nothing: a failed edit, a
    slot the harness filled instead. They tell what the model tried, not what the files hold, and a small model
    shown its own failed call makes it again. A change refused because its file had not been read showed the
    file (its result shows lines of one file): it stays as a read of that file by `reader`, the file as it
    holds now (nothing has changed it since), unless the run read it so itself."""
    calls = {f.finding.call for f in found}
    kept = []
    for item in found:
        finding = item.finding
        if finding.name not in changes or not finding.result.startswith((NOT_RUN, ERROR)):
            kept.append(item)
        elif reader is not None and item.kind == "lines" and item.shown.paths:
            path = item.shown.paths[0]
            read = Finding(reader.name, {reader.path_parameter: path}, "")
            if read.call in calls:
                continue
            try:
                holds = shown_file(reader.workspace, path)
            except ToolError:
                continue
            calls.add(read.call)
            kept.append(Found(replace(read, result=holds), item.shown))
    return kept


def distinct_results(found: Sequence[Found]) -> list[Found]:
    """The findings less the listings and misses whose result is the same as an earlier one's of the same
    tool (a listing asked again with the default folder named, a miss asked again as a regex). Reads with
    the same result stay: two files may say the same, and a read's result does not name its file."""
    seen: set[tuple[str, str]] = set()
    kept = []
    for item in found:
        key = (item.finding.name, item.finding.result)
        if key not in seen or item.kind not in LISTED:
            seen.add(key)
            kept.append(item)
    return kept


def trimmed_finding(finding: Finding, lines: int) -> Finding:
    """A result cut to about `lines` lines (see `trimmed`)."""
    return replace(finding, result=trimmed(finding.result, lines))


MATCH_CHARACTERS = 200  # a longer line is shown cut to its start
SAYS: frozenset[ResultKind] = frozenset(("lines", "found", "symbols", "facts", "count"))  # results about content


def matching(found: Sequence[Found], most: int, relevance: Relevance) -> list[str]:
    """Up to `most` lines of the results that say what files hold (reads, searches, symbols, facts, counts) that
    bear on the question, most first (ties in the results' order), each once. A line of a read is shown after
    the file's path (`docs/a.md: text`); a line of a search already begins with its file."""
    scored: dict[str, float] = {}
    for item in found:
        if item.kind not in SAYS:
            continue
        label = f"{item.shown.paths[0]}: " if item.kind == "lines" and len(item.shown.paths) == 1 else ""
        for line in item.finding.result.split("\n"):
            text = line.strip()
            if text and (weight := relevance(text)) > 0:
                shown = f"{label}{text[:MATCH_CHARACTERS]}"
                scored[shown] = max(weight, scored.get(shown, 0.0))
    return [line for line, _ in sorted(scored.items(), key=lambda s: -s[1])][:most]

"""digest_answers: an answer turn is asked as a digest, the question beside what the tools returned."""

from __future__ import annotations

import json
import posixpath
import re
from collections import Counter
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, Protocol, runtime_checkable

from harness.controls.base import Hooks, NotYet, RunContext, Turn
from harness.controls.budget import CONTEXT_MARGIN, digit_tokens, room, shorter, trimmed
from harness.controls.read_first import ReadsOneFile
from harness.core.policy import ERROR
from harness.core.protocols import ModelReply, ModelRequest, ResultKind, TellsWhatItFound, Tool
from harness.core.state import RunState
from harness.errors import ContextTooSmall
from harness.fs.workspace import Workspace
from harness.prompts import NOT_RUN, make_the_call, shown_unread, write_it
from wire.digest import Finding, write
from wire.types import AssistantMessage, Message, ToolCall, ToolDefinition, decoded_arguments

# the reply has to open with a word (a letter, a digit or a quote), not JSON, a tag, a list or a fence (GBNF)
PROSE_GRAMMAR = 'root ::= [ \\t\\n]* [A-Za-z0-9"\u00c0-\uffff] [^\\x00]*'


@dataclass(frozen=True)
class DigestAnswers(Hooks):
    """An answer turn (one a control marked: the model is done looking) is asked as a fresh conversation:
    the run's system messages and one user message holding the question beside each distinct call and its
    result (`wire.digest`), no tools, and a grammar that makes the reply open with a word. A small model that
    has looked in the right place often answers by echoing the last result or by describing its tools; with
    no call syntax to imitate and none of its own replies to copy, it states what the results say. Calls in
    the reply are dropped: none were offered, and the model saw none of the run's call ids.


    The digest fits the model's context (`context` tokens, learned from the server, less the reply's
    max_tokens): the longest results lose their middle lines first. With `focus`, the results that share
    the most words with the question come first, then the results of calls without arguments (a listing),
    and when the digest must still shrink the least related go first: a small model names the first result
    it sees. With `matching_lines`, up to that many lines of the results that share words with the question
    (most shared first, each after its call's arguments, from the whole results) are written again last,
    just before the question: a model under a billion parameters answers from what it read last, and one of
    a billion or two names the file of a listing it made of a folder the question's words name, beside the
    search that found the line in another file, unless that line comes again last. With `named_files` too,
    each read of a file the question names by its path leads those lines, whole on one line (`named_reads`).
    With `unrelated_lines`, a result that shares no word with the question (a window of a long log read on
    the way) is cut to that many lines, so what the answer needs is not lost in what it does not. With `counts`,
    how many lines of each file read hold each word of the question that two or more of them hold is
    written last (`logs/app.log: 7 lines hold "ERROR"`): a small model asked how many lines say something
    counts the lines it was shown wrong, and copies a number it is given.

    A run whose tools can change files (the person offered them: a write, a delete) and that has not changed
    anything yet is asked the digest with those tools still offered, the model free to call one or to answer:
    a task whose result is a change is finished by that change, not by words about it. An answer to that
    digest that names one of those tools instead of calling it (a small model writes "call edit_file with
    the old text `port = 1869`…") is not the answer, once a run: the model is asked to make the call, and the
    next turn must call one of the tools that change files (unless the question itself names the tool). So
    is an answer of three lines or more that names a file the question names and the workspace does not
    hold yet ("Here is docs/SUMMARY.md: …"), which most often gives the file's content instead of writing
    it: the model is asked to write it, and may answer again instead (a question whether that file exists is
    answered by such words too).
    """

    name: ClassVar[str] = "digest_answers"
    context: int = 0  # the model's context window in tokens, when the server said (0: unknown)
    focus: bool = False
    matching_lines: int = 0
    unrelated_lines: int = 0
    counts: bool = False
    named_files: bool = False
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
            named_files=self.named_files,
            unrelated_lines=self.unrelated_lines,
            counts=self.counts,
            kind=self.kinds_in(run),
            changes=frozenset(t.name for t in run.tools if not t.read_only),
            reader=reader_of(run),
        )
        changers = self.changers(run)
        if changers:
            turn.request = ModelRequest(messages, changers, turn.request.max_tokens, "auto")
            return
        grammar = {"grammar": PROSE_GRAMMAR}
        turn.request = ModelRequest(messages, [], turn.request.max_tokens, None, None, grammar)

    def decide(self, run: RunContext, turn: Turn) -> str | None:
        """With `after_refusal`, after a change refused because its file had not been read, while nothing has
        changed yet, the turn is asked as a digest: the file shown as read, the changing tools offered. A model
        under a billion parameters shown the file beside its refused call makes the same call again; asked
        afresh, it makes the change from the file. (A larger one makes it from the file where it is.)"""
        last = run.state.messages[-1] if run.state.messages else None
        if not self.after_refusal or last is None or last["role"] != "tool" or not self.changers(run):
            return None
        return "shown the file to change" if shown_unread(str(last["content"])) else None

    def on_reply(self, run: RunContext, turn: Turn, reply: ModelReply) -> ModelReply:
        if turn.answer is None:
            return reply
        offered = {d["function"]["name"] for d in turn.request.tools}
        return words_only(reply, keep=offered)

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
        turn.request = replace(turn.request, tool_choice="required")

    def after_call(
        self, run: RunContext, call: ToolCall, tool: Tool, args: dict[str, Any], result: str, ok: bool
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
        spaces = [t.workspace for t in run.tools if not t.read_only and isinstance(t, ChangesWorkspace)]
        named = sorted((path for path in file_names(question) if named_in(path, text)), key=lambda p: -p.count("/"))
        return [path for path in named if spaces and not any(space.exists(path) for space in spaces)]

    @staticmethod
    def kinds_in(run: RunContext) -> Callable[[Finding], ResultKind]:
        """What each finding's result holds, as its tool says (lines of files, when it says nothing)."""

        def kind(finding: Finding) -> ResultKind:
            tool = run.tools.get(finding.name)
            return tool.result_kind(finding.result) if isinstance(tool, TellsWhatItFound) else "lines"

        return kind

    def changers(self, run: RunContext) -> list[ToolDefinition]:
        """The tools that change files, when none of them has changed anything in this run yet."""
        if self.recall(run, Changed).tools:
            return []
        return [d for d in run.tools.definitions() if (t := run.tools.get(d["function"]["name"])) and not t.read_only]


def reader_of(run: RunContext) -> tuple[str, str] | None:
    """The tool that reads one file and the name of its path parameter, when the run has exactly one."""
    readers = [(t.name, t.path_parameter) for t in run.tools if t.read_only and isinstance(t, ReadsOneFile)]
    return readers[0] if len(readers) == 1 else None


@runtime_checkable
class ChangesWorkspace(Protocol):
    """A tool that changes the files of a workspace."""

    workspace: Workspace


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


def words_only(reply: ModelReply, keep: frozenset[str] | set[str] = frozenset()) -> ModelReply:
    """The reply without calls to tools not offered (`keep`: the ones that were)."""
    calls = reply.message.get("tool_calls") or []
    kept = [c for c in calls if c["function"]["name"] in keep]
    if len(kept) == len(calls):
        return reply
    message: AssistantMessage = {"role": "assistant", "content": reply.message.get("content") or ""}
    if kept:
        message["tool_calls"] = kept
    return replace(reply, message=message, finish_reason="tool_calls" if kept else "stop")


def findings(messages: Sequence[Message]) -> list[Finding]:
    """Each distinct call the run made, with its result, in the order the results came: its first result, or
    the first that ran when the harness filled its slot first ("Not run: …", a change refused until the
    file was read, then made; made again and failed, the slot that showed the file stays)."""
    calls = {c["id"]: c["function"] for m in messages if m["role"] == "assistant" for c in m.get("tool_calls", [])}
    found: dict[str, Finding] = {}
    for message in messages:
        if message["role"] != "tool" or (call := calls.get(message["tool_call_id"])) is None:
            continue
        args = decoded_arguments(call["arguments"])
        finding = Finding(call["name"], args if isinstance(args, dict) else call["arguments"], str(message["content"]))
        earlier = found.get(finding.call)
        if earlier is None or (earlier.result.startswith(NOT_RUN) and not finding.result.startswith((NOT_RUN, ERROR))):
            found[finding.call] = finding
    return list(found.values())


SAYS: frozenset[ResultKind] = frozenset(("lines", "found"))  # results that hold what files say
MISSES: frozenset[ResultKind] = frozenset(("nothing", "near"))  # searches that found no line of their pattern
MAX_RESULT_LINES = 60
STOP_WORDS = frozenset((  # function words, and the nouns every question to a file assistant uses
    "a", "an", "the", "any", "some", "of", "about", "to", "on", "for", "in", "into", "it", "its", "is", "are",
    "was", "were", "be", "been", "there", "that", "which", "what", "who", "whom", "how", "many", "much", "does",
    "do", "did", "has", "have", "had", "this", "these", "those", "file", "files", "folder", "folders",
    "directory", "here", "anywhere", "me", "my", "tell", "show", "give", "find", "name", "and", "or", "with",
    "by", "from", "at", "as", "all", "each", "every", "one", "not", "no", "yes", "please",
))  # fmt: skip


def digest_messages(
    state: RunState,
    count: Callable[[Message], int],
    context: int | None = None,
    *,
    focus: bool = False,
    matching_lines: int = 0,
    named_files: bool = False,
    unrelated_lines: int = 0,
    counts: bool = False,
    kind: Callable[[Finding], ResultKind] = lambda finding: "lines",
    changes: Collection[str] = (),
    reader: tuple[str, str] | None = None,
) -> list[Message]:
    """The run's system messages, then the question beside the results: each listing and miss once (one
    whose result repeats an earlier one's of the same tool adds nothing), and without the searches that found
    nothing for words another result holds (`superseded`). Results are cut to MAX_RESULT_LINES (a result of
    a call with arguments that shares no word with the question to `unrelated_lines`, when set); under a
    context budget (the run's, or the model's window) the longest lose their middle lines first, and only
    when none can shrink further do the matching lines go, then the oldest results. Calls to the tools
    `changes` names that changed nothing are left out (`made_or_shown`)."""
    head = [m for m in state.messages if m["role"] == "system"]
    made = made_or_shown(findings(state.messages), changes, reader)
    every = superseded_left_out(distinct_results(made, kind), kind)
    matches = matching(state.question, every, matching_lines, kind) if matching_lines else []
    if named_files and matching_lines and reader is not None:
        named = named_reads(state.question, every, reader)
        matches = [*named, *[line for line in matches if line not in named]][: max(matching_lines, len(named))]
    tallies = tallied(state.question, every, kind) if counts else []
    asked = words(state.question)
    found = [
        shortened(f, unrelated_lines if unrelated_lines and f.arguments and not shares(asked, f) else MAX_RESULT_LINES)
        for f in every
    ]
    if focus:
        found = focused(state.question, found)
    budgets = [b for b in (state.limits.context_tokens, int(context * CONTEXT_MARGIN) if context else None) if b]
    budget = min(budgets) if budgets else None
    while True:
        ask: Message = {"role": "user", "content": write(state.question, found, matches, tallies)}
        used = sum(count(m) + digit_tokens(m) for m in [*head, ask])
        if budget is None or used <= budget:
            return [*head, ask]
        longest = max(range(len(found)), key=lambda i: len(found[i].result.splitlines()), default=None)
        step = shorter(len(found[longest].result.splitlines())) if longest is not None else None
        if longest is not None and step is not None:
            found[longest] = shortened(found[longest], step)
            continue
        if matches or tallies:  # repeated lines and counts go before any result does
            matches = tallies = []
            continue
        if not found:
            raise ContextTooSmall(f"the question and system prompt need {used} tokens; the context budget is {budget}")
        found = found[:-1] if focus else found[1:]  # focused: the least related go first; else the oldest


def made_or_shown(found: Sequence[Finding], changes: Collection[str], reader: tuple[str, str] | None) -> list[Finding]:
    """The findings less the calls to tools that change files (`changes`) that changed nothing: a failed edit, a
    slot the harness filled instead. They tell what the model tried, not what the files hold, and a small model
    shown its own failed call makes it again. A change refused because its file had not been read showed the
    file: it stays as a read of that file by `reader` (the reading tool's name and path parameter), unless the
    run read it so itself."""
    calls = {f.call for f in found}
    kept = []
    for finding in found:
        if finding.name not in changes or not finding.result.startswith((NOT_RUN, ERROR)):
            kept.append(finding)
        elif reader is not None and (shown := shown_unread(finding.result)) is not None:
            read = Finding(reader[0], {reader[1]: shown[0]}, shown[1])
            if read.call not in calls:
                calls.add(read.call)
                kept.append(read)
    return kept


def distinct_results(found: Sequence[Finding], kind: Callable[[Finding], ResultKind]) -> list[Finding]:
    """The findings less the listings and misses whose result is the same as an earlier one's of the same
    tool (a listing asked again with the default folder named, a miss asked again as a regex). Reads with
    the same result stay: two files may say the same, and a read's result does not name its file."""
    seen: set[tuple[str, str]] = set()
    kept = []
    for finding in found:
        if (finding.name, finding.result) not in seen or kind(finding) in SAYS:
            seen.add((finding.name, finding.result))
            kept.append(finding)
    return kept


def superseded_left_out(found: list[Finding], kind: Callable[[Finding], ResultKind]) -> list[Finding]:
    """The findings less each result that found nothing for words the lines read elsewhere hold: a search
    for "timeout" that found no line, where a file read says "timed out"; a search for a file's name, where
    that file was read. Such a result says only that a word was written another way, and a small model
    reads "no line matches" beside the answer as a no. A search that found nothing for words no file read
    holds stays: it is what a no rests on. A search that found its words only written another way (`near`)
    is left out the same way: the file read holds its lines. (A listing's names do not count: a file named
    for a word need not say it.)"""
    read = [f for f in found if kind(f) in SAYS]
    held: set[str] = set().union(*(words(f.result) | string_words(f) for f in read))
    return [f for f in found if not (kind(f) in MISSES and (wanted := string_words(f)) and wanted <= held)]


def string_words(finding: Finding) -> set[str]:
    """The content words of a call's text arguments (a pattern, a path), not of its flags or numbers."""
    arguments = finding.arguments
    values = [arguments] if isinstance(arguments, str) else [v for v in arguments.values() if isinstance(v, str)]
    return words(" ".join(values))


def shortened(finding: Finding, lines: int) -> Finding:
    """A result cut to about `lines` lines (see `trimmed`)."""
    return replace(finding, result=trimmed(finding.result, lines))


def words(text: str) -> set[str]:
    """The content words of a text by their stems (`stem`)."""
    return {stem(w) for w in re.findall(r"[a-z0-9]+", text.lower()) if len(w) > 2 and w not in STOP_WORDS}


def stem(word: str) -> str:
    """A word by its first four letters, a plural's `s` first dropped: "rotating" meets "rotation", "logs"
    meets "log"."""
    word = word.lower()
    return (word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word)[:4]


def shares(asked: set[str], finding: Finding) -> int:
    """How many content words of the question a finding holds (in what it says or in the call's arguments)."""
    return len(asked & (words(finding.result) | words(arguments_text(finding))))


def focused(question: str, found: list[Finding]) -> list[Finding]:
    """The results that share words with the question (in what they say or in the call's arguments) first,
    most first; then the results of calls without arguments (a listing); then the rest; ties keep their
    order. Nothing is left out: a question about every file needs every result, and a word shared by chance
    must not hide the rest."""
    asked = words(question)
    related = sorted(
        (f for f in found if f.arguments and shares(asked, f)), key=lambda f: shares(asked, f), reverse=True
    )
    bare = [f for f in found if not f.arguments]
    return related + bare + [f for f in found if f.arguments and not shares(asked, f)]


MATCH_CHARACTERS = 200  # a longer line is shown cut to its start


def matching(
    question: str,
    found: Sequence[Finding],
    most: int,
    kind: Callable[[Finding], ResultKind] = lambda finding: "lines",
) -> list[str]:
    """Up to `most` lines of the results of calls with arguments that share content words with the question,
    most shared first (ties in the results' order), each once. A file's line is shown as `arguments: line`
    (the call's path first). A search's lines already begin with their file (`path:line: text`) and are
    shown as written, without its pattern (a small model takes a label before a path for a file's name);
    they share words by what they say, as a file's lines do, not by their file's name; the search's own
    notes (how many lines it found, what it skipped) are not candidates. Of a listing only its first line
    is a candidate (what it counts, in what order, and the file first in an order asked for), and
    only for a word it shares with the question beyond the names it lists: the order asked for ("smallest"),
    not the folder (a question about a folder needs every name, not the first). A listing's other lines are
    names, not what a file says. A search for a word of the question that found nothing is repeated last, as
    its result says it (`No line matches 'kubernetes' (searched 118 files)`): a model under a billion
    parameters answers from what it read last, and with no line to repeat says yes of the first file it saw."""
    asked = words(question)
    scored: dict[str, int] = {}
    misses: list[str] = []
    for finding in found:
        holds = kind(finding)
        if holds == "nothing" and asked & string_words(finding):
            misses.append(finding.result.split("\n", 1)[0].strip()[:MATCH_CHARACTERS])
        if not finding.arguments or holds == "nothing":
            continue
        searched = holds in SEARCHED
        label = "" if searched else f"{arguments_text(finding)}: "
        lines = finding.result.split("\n")
        listing = holds == "names"
        wanted = asked - words("\n".join(lines[1:])) if listing else asked
        if listing:
            lines = lines[:1]
        elif searched:
            lines = [line for line in lines if HIT.match(line)]
        for line in lines:
            said = HIT.sub("", line, count=1) if searched else line  # what the line says, not its file's name
            if (shared := len(wanted & words(said))) and (text := line.strip()):
                shown = f"{label}{text[:MATCH_CHARACTERS]}"
                scored[shown] = max(shared, scored.get(shown, 0))
    ranked = [line for line, _ in sorted(scored.items(), key=lambda s: -s[1])]  # stable: ties keep their order
    last = misses[:most]
    return [*ranked[: most - len(last)], *last]


NAMED_CHARACTERS = 400  # a named file's lines, joined, are shown cut to their start


def named_reads(question: str, found: Sequence[Finding], reader: tuple[str, str]) -> list[str]:
    """Each file the question names by its path and `reader` (the reading tool, its path parameter) read, as
    one line: `docs/todo.md: Ask Dana for the slides. Book the room.` (its lines joined, without a window's
    notes). A model under a billion parameters asked what a file says, shown it among other results, writes
    what such a file usually says; with its lines again last, just before the question, it quotes them."""
    tool, parameter = reader
    named = {posixpath.normpath(path) for path in file_names(question)}
    shown: list[str] = []
    for finding in found:
        path = finding.arguments.get(parameter) if isinstance(finding.arguments, Mapping) else None
        path = posixpath.normpath(path) if finding.name == tool and isinstance(path, str) else None
        if path not in named:
            continue
        said = " ".join(
            text for line in finding.result.split("\n") if (text := line.strip()) and not NOTE.fullmatch(line)
        )
        if said and (repeated := f"{path}: {said[:NAMED_CHARACTERS]}") not in shown:
            shown.append(repeated)
    return shown


SEARCHED: frozenset[ResultKind] = frozenset(("found", "near"))  # results whose lines each begin with their file
HIT = re.compile(r"[^\s:][^:\n]*:\d+: ")  # a search's line: `path:line: text`


MOST_TALLIES = 4
NOTE = re.compile(r"\[.* lines.*\]")  # a window's notes (`[a.log: lines 1-80 of 900]`), not what the file says
WINDOW = re.compile(r"\[.*: lines ([\d,]+-[\d,]+) of ([\d,]+)\]")  # the note a window of a long file opens with


def tallied(question: str, found: Sequence[Finding], kind: Callable[[Finding], ResultKind]) -> list[str]:
    """For each file read (a result that holds lines of one file, not a search's lines from several), how many
    of its lines hold each content word of the question that at least two of them hold, most first, at most
    MOST_TALLIES: `logs/app.log: 7 lines hold "ERROR"`. The words of the call's own arguments (the file's
    name) are not counted: they name the file, not what it says. A word is shown as the lines write it most.
    Of a window of a long file, the count says which lines it is of: the rest of the file was not read."""
    asked = words(question)
    tallies: list[tuple[int, str]] = []
    for finding in found:
        if not finding.arguments or kind(finding) != "lines":
            continue
        wanted = asked - string_words(finding)
        lines = [re.findall(r"[A-Za-z0-9]+", line) for line in finding.result.split("\n") if not NOTE.fullmatch(line)]
        part = WINDOW.match(finding.result)
        of, rest = (
            (f" of lines {part[1]}", f" (the file has {part[2]} lines; the rest was not read)") if part else ("", "")
        )
        for word in sorted(wanted):
            forms = [[w for w in tokens if stem(w) == word] for tokens in lines]
            holding = sum(1 for f in forms if f)
            if holding >= 2:
                written = Counter(w for f in forms for w in f).most_common(1)[0][0]
                tallies.append(
                    (holding, f"{arguments_text(finding)}: {holding}{of or ' lines'} hold {json.dumps(written)}{rest}")
                )
    return [line for _, line in sorted(tallies, key=lambda t: -t[0])[:MOST_TALLIES]]


def arguments_text(finding: Finding) -> str:
    """A call's argument values as text (`errors.log`; `a, 3`), or its arguments as sent when not an object."""
    arguments = finding.arguments
    return arguments if isinstance(arguments, str) else ", ".join(map(str, arguments.values()))

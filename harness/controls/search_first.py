"""search_first: in a folder too large to read whole, the first look after the listing is a search."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import ClassVar, Protocol, runtime_checkable

from harness.controls.base import Hooks, RunContext, Turn
from harness.controls.digest import STOP_WORDS
from harness.controls.unread_paths import DEFAULT_CONTEXT, MAX_WALK, ListsWorkspace, named_by
from harness.core.protocols import Tool
from harness.fs.workspace import Workspace
from wire.types import Message, ToolCall, ToolChoice, decoded_arguments


@runtime_checkable
class SearchesWorkspace(Protocol):
    """A tool over a workspace whose `scope_parameter` names a folder or a file to look in (a search)."""

    workspace: Workspace
    scope_parameter: str


@dataclass(frozen=True)
class SearchFirst(Hooks):
    """Once the folder has been listed, a folder whose files hold more than twice the model's window (as
    characters; the same bound under which unread_paths has every file read) is searched for the code the
    question names before the model reads on: the turn after the listing calls the search tool
    (tool_choice names it), its pattern one of the question's terms (`terms`: what it quotes, then its
    words shaped as code), once per run. A small model given a long listing reads files in the order
    they are listed (a changelog, the license, dotfiles) and fills its window before it reaches the one
    that matters, and left to write a pattern right after a listing it copies a piece of the listing; a
    search for the name the question asks about finds the lines to read around, the lines that define
    it first. Only on a server that takes `tool_parameters` (the pattern is narrowed there, the prompt
    unchanged). Inert when the question names a file of the folder (it is read, not searched for), when
    it names no code, when the run has searched or read a file already (manifest_first read what the
    question asks the project for), when another control has chosen the call, and when the folder could
    be read whole. With `plain_words`, a question that names no code is searched
    for a name it writes with a capital inside a sentence (`Specifier`, `Kubernetes`), else for one of its
    plain words, function words and the nouns every question to a file assistant uses left out
    (`serialisation`, `instances` of "Which document explains serialisation of instances?"). A model under
    a billion parameters never searches on its own, and offered a name beside plain words it picks a
    common word (`class` over `Specifier`); a search widened to word starts finds the lines that say it
    another way. Not after a listing called with arguments (a folder, a kind of file or an order, as
    look_first narrows it to what the question names): that listing is what the question asks about, and
    a search of the whole folder gives counts of lines that such a model takes for a count of files."""

    name: ClassVar[str] = "search_first"
    context: int = 0  # the model's context window in tokens, when the server said
    tool_parameters: bool = False  # the server narrows calls by the `tool_parameters` field
    plain_words: bool = False  # a question that names no code is searched for its longest plain words

    def before_request(self, run: RunContext, turn: Turn) -> None:
        request = turn.request
        if not self.tool_parameters or not request.tools or request.tool_choice is not None:
            return
        offered = set(turn.left())
        searches = [t for t in run.tools if t.name in offered and t.read_only and isinstance(t, SearchesWorkspace)]
        made = [c["function"] for m in run.state.messages for c in calls_of(m)]
        listings = [call for call in made if lists(run.tools.get(call["name"]))]
        if len(searches) != 1 or not listings or len(listings) < len(made):
            return  # the turn after the listing only: not once the run has searched, or read a file
        search, question = searches[0], run.state.question
        narrowed = any(given(call["arguments"]) for call in listings)
        words = plain(question) if self.plain_words and not narrowed else []
        asked = terms(question) or (names(question)[:1] if words else []) or words
        if not asked or not self.too_large(search.workspace, question):
            return
        pattern = {"type": "object", "properties": {"pattern": {"enum": asked}}, "required": ["pattern"],
                   "additionalProperties": False}  # fmt: skip
        narrowing = {**dict(request.extra.get("tool_parameters") or {}), search.name: pattern}
        choice: ToolChoice = {"type": "function", "function": {"name": search.name}}
        turn.request = replace(request, tool_choice=choice, extra={**request.extra, "tool_parameters": narrowing})

    def too_large(self, workspace: Workspace, question: str) -> bool:
        """Whether the folder holds more than it could be read whole in, and the question names none of its files."""
        entries, _ = workspace.entries(limit=MAX_WALK)
        if any(named_by(question, e.path) for e in entries):
            return False
        return sum(e.size for e in entries) > 2 * (self.context or DEFAULT_CONTEXT)


QUOTED = re.compile(r"`([^`\n]{1,80})`|\"([^\"\n]{1,80})\"|(?<!\w)'([^'\n]{3,80})'(?!\w)")
WORD = re.compile(r"[A-Za-z0-9][\w.-]*[A-Za-z0-9]|[A-Za-z]")
MOST_TERMS = 8


def terms(question: str) -> list[str]:
    """What the question names as code, as written: what it quotes (in backticks or quotes), then its words
    shaped as code (`send_batch`, `UserClient`, `db-96.internal`), each once, at most MOST_TERMS. Its plain
    words are not among them: a small model offered its question's words searches for the commonest (the
    project's name, `function`), and finds lines of everything."""
    quoted = [next(g for g in match.groups() if g) for match in QUOTED.finditer(question)]
    code = [w for w in WORD.findall(QUOTED.sub(" ", question)) if code_shaped(w)]
    unique = dict.fromkeys(t.strip() for t in [*quoted, *code] if t.strip())
    return list(unique)[:MOST_TERMS]


PLAIN_WORD = re.compile(r"[A-Za-z]{4,}")
GENERIC = frozenset((
    "document", "documents", "explain", "explains", "describe", "describes", "mention", "mentions", "contain",
    "contains", "where", "when", "list", "lines", "line", "text", "says", "project", "repository", "code",
    "there", "their", "than", "then", "them", "they", "same",
))  # fmt: skip


SENTENCE_START = re.compile(r"(?:^|[.!?:]\s+)[\"'(`]*([A-Za-z]+)")


def plain(question: str) -> list[str]:
    """The question's plain words of four letters or more, longest first, each once, at most MOST_TERMS,
    without function words and the words any question about files uses (`file`, `document`, `mentioned`)."""
    words = dict.fromkeys(w.lower() for w in PLAIN_WORD.findall(QUOTED.sub(" ", question)))
    kept = [w for w in words if not generic(w)]
    return sorted(kept, key=lambda w: -len(w))[:MOST_TERMS]


def generic(word: str) -> bool:
    """A function word or a word any question about files uses, in any of its forms (`mentioned`, `listed`,
    `describing`: the word with its ending `s`, `d`, `ed` or `ing` taken off, or that and an `e`, is one)."""
    bases = [word.removesuffix(end) for end in ("s", "d", "ed", "ing") if word.endswith(end)]
    forms = {word, *bases, *(f"{base}e" for base in bases)}
    return any(form in STOP_WORDS or form in GENERIC for form in forms)


def names(question: str) -> list[str]:
    """Of the question's plain words, those written with a capital where no sentence starts (`Specifier`,
    `Kubernetes`), in lower case, each once."""
    text = QUOTED.sub(" ", question)
    starts = {m.start(1) for m in SENTENCE_START.finditer(text)}
    capitals = [
        m.group(0).lower() for m in PLAIN_WORD.finditer(text) if m.group(0)[0].isupper() and m.start() not in starts
    ]
    kept = set(plain(question))
    return [w for w in dict.fromkeys(capitals) if w in kept]


def code_shaped(word: str) -> bool:
    """A word written as code is: with an underscore, a dot or a hyphen inside, or a capital after its first letter."""
    return any(mark in word for mark in "_.-") or any(c.isupper() for c in word[1:])


def given(arguments: str) -> bool:
    """Whether a call's arguments give a value (`{"path": "src"}`), not only empty ones (`{}`, `{"path": ""}`)."""
    parsed = decoded_arguments(arguments)
    return isinstance(parsed, dict) and any(value not in (None, "", [], {}) for value in parsed.values())


def lists(tool: Tool | None) -> bool:
    """Whether the tool looks over a workspace with no argument required (a listing)."""
    return tool is not None and isinstance(tool, ListsWorkspace) and not tool.parameters.get("required")


def calls_of(message: Message) -> list[ToolCall]:
    return message.get("tool_calls", []) if message["role"] == "assistant" else []

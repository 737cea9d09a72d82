"""grounded: an answer is checked against what the tools returned before the run ends with it."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import ClassVar

from harness.controls.base import Hooks, has_results
from harness.core.protocols import ModelReply
from harness.core.turn import NotYet, RunContext, Turn
from harness.prompts import ungrounded

NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)*(?![\w])")
LIST_MARK = re.compile(r"(?m)^\s*\d+[.)]\s")  # `1. ` opening a line numbers a list; it is no claim
QUOTED = re.compile(r"`([^`\n]{8,200})`|\"([^\"\n]{8,200})\"|“([^”\n]{8,200})”|«([^»\n]{8,200})»|「([^」\n]{8,200})」")
CALL = re.compile(r"\b[a-z]+_[a-z_]+\s*\(|\{\s*\"(?:name|arguments)\"\s*:")
MOST_EVIDENCE = 6
PATHLIKE = re.compile(r"[\w.-]+(?:/[\w.-]+)*")  # a word that may be a file's path or name


@dataclass(frozen=True)
class Checked:
    """What an answer rests on nothing for: each kind of claim, and what of it no result showed."""

    files: tuple[str, ...] = ()
    numbers: tuple[str, ...] = ()
    quotes: tuple[str, ...] = ()
    tools: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.files or self.numbers or self.quotes or self.tools)

    def __str__(self) -> str:
        parts = [
            f"files {', '.join(self.files)} (in no result)" if self.files else "",
            f"numbers {', '.join(self.numbers)} (in no result, and not counted by a tool)" if self.numbers else "",
            f"quoted text {', '.join(repr(q) for q in self.quotes)} (in no result)" if self.quotes else "",
            f"tools {', '.join(self.tools)} (how to call them, not the answer)" if self.tools else "",
        ]
        return "; ".join(p for p in parts if p)


@dataclass(frozen=True)
class Grounded(Hooks):
    """Before a run ends with an answer, what it claims is compared with the results of the run's tools: the
    files it names (a file of the workspace no result showed), the numbers it gives (a number no result holds
    and no tool counted), what it quotes (a quoted text no result holds), and whether it answers at all
    (a call written out, or the run's tools named, instead of what they found). Each check looks at the
    answer's paths, digits, quotation marks and tool names, so it works the same in every language. An
    answer that rests on nothing is asked again once a run, with the lines of the results that bear most on
    the question (the workspace index's measure); the trace records what was checked (`not_an_answer`)."""

    name: ClassVar[str] = "grounded"

    def on_answer(self, run: RunContext, turn: Turn, reply: ModelReply) -> NotYet | None:
        text = str(reply.message.get("content") or "")
        if not text.strip() or reply.message.get("tool_calls") or not has_results(run.state):
            return None
        if run.state.controls.get(self.name):
            return None  # asked once already: this answer stands
        found = check(text, run)
        if not found:
            return None
        self.keep(run, Asked(len(run.state.messages)))
        ask = ungrounded(str(found), evidence(run))
        return NotYet(f"ungrounded: {found}", {"role": "user", "content": ask})


@dataclass
class Asked:
    at: int = 0  # how many messages the run held when it asked again


def results(run: RunContext) -> list[str]:
    return [str(m["content"]) for m in run.state.messages if m["role"] == "tool"]


def check(answer: str, run: RunContext) -> Checked:
    said = [*results(run), run.state.question]
    joined = "\n".join(said)
    lowered = " ".join(joined.lower().split())
    return Checked(
        files=tuple(unshown_files(answer, run, joined)),
        numbers=tuple(n for n in numbers(answer) if not holds_number(joined, n)),
        quotes=tuple(q for q in quotes(answer) if " ".join(q.lower().split()) not in lowered),
        tools=tuple(tools_named(answer, run)),
    )


def unshown_files(answer: str, run: RunContext, shown: str) -> Iterable[str]:
    """The files of the workspace the answer names (by path, or by a name no other file has) that no result
    shows (as the tool says, or in its text) and the question does not name."""
    if run.index is None:
        return []
    told = {path for facts in run.state.shown.values() for path in facts.paths}
    paths = {r.path for r in run.index.files()}
    names: dict[str, list[str]] = {}
    for each in paths:
        names.setdefault(each.rsplit("/", 1)[-1], []).append(each)
    out = []
    for written_word in dict.fromkeys(PATHLIKE.findall(answer)):
        word = written_word.rstrip(".")
        alone = names.get(word, [])
        named = word if word in paths else alone[0] if len(alone) == 1 and "." in word else None
        if named is None or named in told:
            continue
        if not written(shown, named) and not written(shown, named.rsplit("/", 1)[-1]):
            out.append(named)
    return out


def written(text: str, name: str) -> bool:
    return re.search(rf"(?<![\w/.-]){re.escape(name)}(?![\w/-]|\.\w)", text) is not None


def numbers(answer: str) -> list[str]:
    """The numbers an answer gives (not those that number the lines of a list)."""
    return list(dict.fromkeys(m.group(0).rstrip(".,") for m in NUMBER.finditer(LIST_MARK.sub(" ", answer))))


def holds_number(text: str, number: str) -> bool:
    """Whether the text holds the number, as written or without thousands separators (`1,024` is 1024)."""
    bare = number.replace(",", "")
    return any(re.search(rf"(?<![\d.]){re.escape(n)}(?![\d])", text) for n in {number, bare})


def quotes(answer: str) -> list[str]:
    return [next(g for g in match.groups() if g) for match in QUOTED.finditer(answer)]


def tools_named(answer: str, run: RunContext) -> list[str]:
    """The run's tools the answer names (or a call it writes out), when the question does not name them."""
    named = [t.name for t in run.tools if written(answer, t.name) and not written(run.state.question, t.name)]
    return named or (["a call written out"] if CALL.search(answer) else [])


def evidence(run: RunContext) -> list[str]:
    """The lines of the run's results that bear most on the question, by the workspace index's weights."""
    if run.index is None:
        return []
    weights = run.index.weights(run.state.question)
    scored: dict[str, float] = {}
    for result in results(run):
        for line in result.split("\n"):
            text = line.strip()[:200]
            if text and (weight := run.index.relevance(text, weights)) > 0:
                scored[text] = max(weight, scored.get(text, 0.0))
    return [line for line, _ in sorted(scored.items(), key=lambda s: -s[1])[:MOST_EVIDENCE]]

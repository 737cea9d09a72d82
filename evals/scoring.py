"""Scoring: is the answer right (against truth from the files), was the trajectory sound, and if not, why.

Names are matched as whole file names; a file named in a negated clause ("access.log does not mention
it") is not counted as named. An answer that names a wrong file as *the* answer is wrong, hedging
included ("errors.log or access.log").
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from evals.languages import WORD_CHAR, Language, either, number_words, vocabularies
from evals.manifests import FAMILIES
from evals.suite import Check
from evals.truth import CHANGES, Truth, config_values, digests, read_text
from harness.core.registry import Invalid, Registry
from harness.core.state import RunState
from wire.types import canonical

Failure = Literal[
    "wrong_answer", "no_answer", "bad_tool_args", "unknown_tool", "max_turns", "budget", "timeout", "provider_error"
]
HARNESS_FAILURES: frozenset[Failure] = frozenset({"provider_error"})
W = WORD_CHAR  # a letter of a Latin or Cyrillic word, a digit or `_`: what a name or number may not touch
SENTENCE_END = r"[.;!?](?=\s|$)|\n|[。；！？]"


@dataclass(frozen=True)
class Verdict:
    correct: bool
    why: str


@dataclass(frozen=True)
class Trajectory:
    tools_called: list[str]
    needed_called: bool
    invalid_args: int
    unknown_tools: list[str]
    repeated_calls: int

    @property
    def sound(self) -> bool:
        return self.needed_called and not self.invalid_args and not self.unknown_tools and not self.repeated_calls


@functools.cache
def reading(language: Language) -> Reading:
    """The patterns an answer to a question in `language` is read with (that language's and English's)."""
    return Reading(language)


class Reading:
    """How an answer is read in one language (and in English): its clauses, negations, a no, counts."""

    def __init__(self, language: Language) -> None:
        self.clause_end = re.compile(f"{SENTENCE_END}|{either(language, 'clause_end').pattern}", re.IGNORECASE)
        self.negation = either(language, "negation")
        self.says_none = either(language, "says_none")
        self.opens_no = either(language, "opens_no")
        numbers = number_words(language)
        spelled = "|".join(map(re.escape, numbers))
        self.numbers = {word.lower(): value for word, value in numbers.items()}
        phrases = []
        for vocabulary in vocabularies(language):
            if vocabulary.measure:  # written without spaces: a number, then its noun
                phrases.append(rf"(\d[\d,]*|{spelled})\s*(?:{vocabulary.counted})")
            else:
                phrases.append(
                    rf"(?<![{W}])(\d[\d,]*|{spelled})\s+(?:[^\W\d_][\w-]*\s+){{0,2}}(?:{vocabulary.counted})(?![{W}])"
                )
        self.count_phrase = re.compile("|".join(f"(?:{p})" for p in phrases), re.IGNORECASE)

    def clauses(self, answer: str) -> list[str]:
        return [c for c in self.clause_end.split(answer) if c and c.strip()]

    def number(self, token: str) -> int:
        token = token.replace(",", "")
        return int(token) if token.isdigit() else self.numbers[token.lower()]

    def counts(self, answer: str) -> set[int]:
        """The numbers an answer gives as counts (`15 files`, `fünfzehn Dateien`, `15个文件`), else every number
        it writes on its own (not part of a version, a path, a time or a file's name)."""
        stated = {self.number(next(g for g in m.groups() if g)) for m in self.count_phrase.finditer(answer)}
        return stated or {int(m.group(1).replace(",", "")) for m in BARE_NUMBER.finditer(answer)}


def named(name: str) -> str:
    """A pattern for a file's name standing whole: not inside a longer name or word, so not the tail of a longer
    path (`dist/app.js` in `src/dist/app.js`, `app.js` in `lib.app.js`) nor the head of a longer name
    (`app.js` in `app.js.map`); a sentence's full stop after it, or `./` before it, still leave it whole."""
    return rf"(?<![{W}-])(?<![{W}-][./]){re.escape(name)}(?![{W}-])(?!\.[{W}])"


def names_in(answer: str, files: set[str], language: Language = "en") -> tuple[set[str], set[str]]:
    """The files an answer affirms (named outside any negated clause) and those it names only negatively."""
    read = reading(language)
    affirmed: set[str] = set()
    negated: set[str] = set()
    for clause in read.clauses(answer):
        for name in files:
            if re.search(named(name), clause, re.IGNORECASE):
                (negated if read.negation.search(clause) else affirmed).add(name)
    return affirmed, negated - affirmed


def words(text: str) -> list[str]:
    """The words of a text, lower case, in any script (letters and digits)."""
    return re.findall(r"[^\W_]+", text.lower())


def judge_names(answer: str, truth: Truth, files: set[str], language: Language = "en") -> Verdict:
    affirmed, _ = names_in(answer, files, language)
    wrong = affirmed - truth.names - truth.allowed
    if wrong:
        return Verdict(False, f"names {', '.join(sorted(wrong))}, which is not the answer")
    if not affirmed & truth.names:
        return Verdict(False, f"does not name {' or '.join(sorted(truth.names))}")
    return Verdict(True, "names the right file")


INSTRUCTIONS = re.compile(r"\b\w+_\w+\s*\(|\byou can (?:use|call|run)\b|\bcall the\b", re.IGNORECASE)
GENERIC = frozenset((
    "file", "files", "contains", "contain", "says", "shows", "holds", "text", "content", "contents", "line", "lines",
    "data", "information", "details", "about", "with", "which", "this", "that", "there", "their", "the", "and",
    "also", "it", "is", "are", "has", "have", "of", "a", "an", "in", "on", "for", "to",
))  # fmt: skip
# a number on its own: not part of a version, path, time or file name, though it may end a sentence
BARE_NUMBER = re.compile(rf"(?<![{W}.:/-])(\d[\d,]*)(?![{W}:/-]|[.,][{W}])")


def judge_yes(answer: str, truth: Truth, files: set[str], language: Language = "en") -> Verdict:
    read = reading(language)
    affirmed, _ = names_in(answer, files, language)
    says_no = bool(read.says_none.search(answer) or read.opens_no.search(answer))
    opens_no = bool(read.opens_no.search(answer))
    if not truth.expect_yes:
        if affirmed and not opens_no:
            return Verdict(False, f"claims {', '.join(sorted(affirmed))}, but no file says it")
        return Verdict(says_no, "says there is none" if says_no else "does not say there is none")
    if opens_no or (says_no and not affirmed):
        return Verdict(False, "says no, but there is one")
    return judge_names(answer, truth, files, language)


def judge_count(answer: str, truth: Truth, language: Language = "en") -> Verdict:
    stated = reading(language).counts(answer)
    right = stated == {truth.count}
    return Verdict(right, f"says {sorted(stated) or 'no number'}; there are {truth.count}")


def recall(wanted: str, answer: str) -> float:
    need = words(wanted)
    have = Counter(words(answer))
    return sum(1 for w in need if have[w] > 0) / max(1, len(need))


def judge_quote(answer: str, truth: Truth) -> Verdict:
    share = recall(truth.quote or "", answer)
    if share >= 0.8:
        wrong = [o for o in truth.others if recall(o, answer) >= 0.8 and recall(o, truth.quote or "") < 0.8]
        if wrong:
            return Verdict(False, f"also gives {wrong[0]!r}")
    return Verdict(share >= 0.8, f"{share:.0%} of the words wanted are in the answer")


def value_core(value: str) -> str:
    """A value as an answer would write it: without a constraint's operator or quotes (`>=3.8` is `3.8`)."""
    return value.strip().lstrip("<>=~^!v ").strip("\"'")


def mentions_value(value: str, answer: str) -> bool:
    core = value_core(value)
    if not core:
        return False
    return re.search(rf"(?<![{W}.]){re.escape(core)}(?![{W}]|\.\d)", answer, re.IGNORECASE) is not None


def judge_value(answer: str, truth: Truth, first: bool = False) -> Verdict:
    value = truth.value or ""
    accepted = [value, *sorted(truth.also)]
    said = next((v for v in accepted if mentions_value(v, answer)), None)
    if said is None:
        return Verdict(False, f"does not give {value}")
    wrong = sorted(
        o for o in truth.others if mentions_value(o, answer) and not any(mentions_value(o, v) for v in accepted)
    )
    if first and wrong:
        positions = {o: answer.lower().find(value_core(o).lower()) for o in wrong}
        if min(positions.values()) < answer.lower().find(value_core(said).lower()):
            return Verdict(False, f"gives {min(positions, key=lambda o: positions[o])} first")
        return Verdict(True, f"gives {said} first")
    if wrong:
        return Verdict(False, f"also gives {', '.join(wrong)}")
    return Verdict(True, f"gives {said}")


def judge_license(answer: str, truth: Truth) -> Verdict:
    """Every license family the manifest declares is named (`MIT`, `Apache-2.0`, `BSD 3-Clause`), and no other."""
    missing = [f for f in truth.items if not re.search(FAMILIES[f], answer, re.IGNORECASE)]
    if missing:
        return Verdict(False, f"does not name {' and '.join(missing)}")
    other = [f for f in truth.not_items if re.search(FAMILIES[f], answer, re.IGNORECASE)]
    if other:
        return Verdict(False, f"also names {other[0]}, which the manifest does not declare")
    return Verdict(True, f"names {' and '.join(truth.items)}")


def judge_items(answer: str, truth: Truth) -> Verdict:
    missing = [item for item in truth.items if recall(item, answer) < 0.6]
    extra = [item for item in truth.not_items if recall(item, answer) >= 0.6]
    if extra:
        return Verdict(False, f"lists {extra[0]!r}, which is done")
    if missing:
        return Verdict(False, f"leaves out {missing[0]!r}")
    return Verdict(True, "lists every open item and no done one")


MENTIONED = rf"(?<![{W}/.-]){{}}(?![{W}-]|\.[{W}])"


def mentioned(answer: str, name: str, files: set[str], within: set[str]) -> bool:
    """The file is named by its path, or by its base name where no other file of `within` has that name."""
    if re.search(MENTIONED.format(re.escape(name)), answer, re.IGNORECASE):
        return True
    base = name.rsplit("/", 1)[-1]
    alike = [f for f in within if f.rsplit("/", 1)[-1] == base]
    return len(alike) == 1 and re.search(MENTIONED.format(re.escape(base)), answer, re.IGNORECASE) is not None


def judge_all(answer: str, truth: Truth, files: set[str]) -> Verdict:
    missing = sorted(n for n in truth.names if not mentioned(answer, n, files, set(truth.names)))
    if missing:
        return Verdict(False, f"leaves out {', '.join(missing[:3])}")
    outside = sorted(n for n in files - truth.names - truth.allowed if mentioned(answer, n, files, files))
    if outside:
        return Verdict(False, f"also names {', '.join(outside[:3])}")
    return Verdict(True, "names every one and no other")


def judge_word(answer: str, truth: Truth) -> Verdict:
    found = [t for t in truth.names if re.search(rf"(?<![{W}.-]){re.escape(t)}(?![{W}-])", answer, re.IGNORECASE)]
    return Verdict(bool(found), f"names {found[0]}" if found else "names nothing only those files share")


def said_of_each(answer: str, names: set[str], files: set[str]) -> list[str]:
    """The files the answer names without saying anything of them: what follows a file's name, up to the next
    file's, must hold a word that is not a file name or a filler word."""
    spans = []
    for name in names:
        for candidate in (name, name.rsplit("/", 1)[-1]):
            found = re.search(MENTIONED.format(re.escape(candidate)), answer, re.IGNORECASE)
            if found:
                spans.append((found.start(), found.end(), name))
                break
    spans.sort()
    silent = []
    name_words = {w for n in files for w in words(n)}
    for index, (_, end, name) in enumerate(spans):
        stop = spans[index + 1][0] if index + 1 < len(spans) else len(answer)
        said = [w for w in words(answer[end:stop]) if len(w) > 2 and w not in GENERIC and w not in name_words]
        if not said:
            silent.append(name)
    return silent


def judge_every(answer: str, truth: Truth, read: set[str]) -> Verdict:
    unread = truth.names - read
    if unread:
        return Verdict(False, f"never read {', '.join(sorted(unread))}")
    if INSTRUCTIONS.search(answer):
        return Verdict(False, "explains how to call tools instead of answering")
    missing = sorted(n for n in truth.names if not mentioned(answer, n, set(truth.names), set(truth.names)))
    if missing:
        return Verdict(False, f"does not mention {', '.join(missing)}")
    silent = said_of_each(answer, set(truth.names), set(truth.names))
    if silent:
        return Verdict(False, f"says nothing of {', '.join(sorted(silent))}")
    return Verdict(True, "read and reported every file")


@dataclass(frozen=True)
class Answer:
    """What a judge is given: the answer, the truth, the workspace's files, the files the run read, and the
    language the question was asked in."""

    text: str
    truth: Truth
    files: set[str]
    read: set[str]
    language: Language


Judge = Callable[[Answer], Verdict]
JUDGES: dict[str, Judge] = {
    **dict.fromkeys(
        ("names_file", "largest_file", "smallest_file", "newest_file", "defines"),
        lambda a: judge_names(a.text, a.truth, a.files, a.language),
    ),
    "yes_names_file": lambda a: judge_yes(a.text, a.truth, a.files, a.language),
    **dict.fromkeys(("file_count", "line_count", "row_count"), lambda a: judge_count(a.text, a.truth, a.language)),
    **dict.fromkeys(("quotes_file", "quotes_line", "recipe", "first_heading"), lambda a: judge_quote(a.text, a.truth)),
    **dict.fromkeys(("config_value", "joined", "raises", "manifest_value"), lambda a: judge_value(a.text, a.truth)),
    "latest_version": lambda a: judge_value(a.text, a.truth, first=True),
    "open_items": lambda a: judge_items(a.text, a.truth),
    "license": lambda a: judge_license(a.text, a.truth),
    **dict.fromkeys(("names_all", "folder_files", "uses"), lambda a: judge_all(a.text, a.truth, a.files)),
    "shared_word": lambda a: judge_word(a.text, a.truth),
    "reads_every_file": lambda a: judge_every(a.text, a.truth, a.read),
}


def judge(
    check: Check,
    truth: Truth,
    answer: str | None,
    files: set[str],
    read: set[str],
    workspace: Path | None = None,
    language: Language = "en",
) -> Verdict:
    """The verdict on a run: its answer for a question (asked in `language`; answered in it or in English),
    the folder's end state (`workspace`) for a change."""
    if check.kind in CHANGES:
        if workspace is None:
            raise ValueError(f"a {check.kind} check is judged on the workspace after the run")
        return judge_change(check, truth, workspace)
    if not answer or not answer.strip():
        return Verdict(False, "no answer")
    return JUDGES[check.kind](Answer(answer, truth, files, read, language))


def judge_change(check: Check, truth: Truth, workspace: Path) -> Verdict:
    """The end state: the file the task names changed as asked, and nothing else changed."""
    after = digests(workspace)
    changed = {n for n in set(after) | set(truth.before) if after.get(n) != truth.before.get(n)}
    path = check.path or ""
    if changed - {path}:
        return Verdict(False, f"changed {', '.join(sorted(changed - {path})[:3])}, which the task did not ask for")
    if path not in changed:
        return Verdict(False, f"left {path} as it was")
    if check.kind == "deletes_file":
        return Verdict(path not in after, "deleted it" if path not in after else "did not delete it")
    if path not in after:
        return Verdict(False, f"{path} is gone")
    text = read_text(workspace, path)
    return CHANGED[check.kind](check, truth, text)


def appended(check: Check, truth: Truth, text: str) -> Verdict:
    ok = text.splitlines() == [*(truth.quote or "").splitlines(), check.value or ""]
    return Verdict(ok, "appended the line" if ok else "the file is not the old one and the line")


def set_value(check: Check, truth: Truth, text: str) -> Verdict:
    values = config_values(text, check.path or "", check.key or "")
    old = (truth.quote or "").splitlines()
    kept = [line for line in old if line not in text.splitlines()]
    key = (check.key or "").rsplit(".", 1)[-1]
    if values[:1] != [check.value]:
        return Verdict(False, f"{check.key} is {values[:1] or 'gone'}, not {check.value}")
    if any(key not in line for line in kept) or len(text.splitlines()) != len(old):
        return Verdict(False, "changed other lines too")
    return Verdict(True, f"set {check.key} to {check.value}")


def summarised(check: Check, truth: Truth, text: str) -> Verdict:
    folder = (check.target or "").rstrip("/")
    scope = {n for n in truth.before if n != check.path and (not folder or n.startswith(folder + "/"))}
    missing = sorted(n for n in scope if not mentioned(text, n, scope, scope))
    if missing:
        return Verdict(False, f"the summary does not name {', '.join(missing[:3])}")
    silent = said_of_each(text, scope, scope)
    if silent:
        return Verdict(False, f"the summary says nothing of {', '.join(sorted(silent)[:3])}")
    return Verdict(True, "wrote a summary of every file")


CHANGED: dict[str, Callable[[Check, Truth, str], Verdict]] = {
    "appends_line": appended,
    "sets_value": set_value,
    "writes_summary": summarised,
}


def trajectory(state: RunState, tools: Registry, needs: list[str]) -> Trajectory:
    called, invalid, unknown, seen = [], 0, [], Counter[str]()
    for message in state.messages:
        if message["role"] != "assistant":
            continue
        for call in message.get("tool_calls", []):
            name, raw = call["function"]["name"], call["function"]["arguments"]
            called.append(name)
            tool = tools.get(name)
            if tool is None:
                unknown.append(name)
                continue
            args = tools.arguments(tool, raw)
            invalid += isinstance(args, Invalid)
            seen[f"{name}:{canonical(args if isinstance(args, dict) else raw)}"] += 1
    return Trajectory(called, set(needs) <= set(called), invalid, unknown, sum(n - 1 for n in seen.values()))


def classify(state: RunState, verdict: Verdict, path: Trajectory) -> Failure | None:
    """One failure class per run; harness or provider errors are kept apart from wrong answers."""
    if state.status == "failed":
        return "provider_error" if state.error_source == "provider" else "no_answer"
    if state.status == "interrupted" and (state.reason or "").startswith("deadline"):
        return "timeout"
    if state.status == "max_turns_exceeded":
        return "max_turns"
    if state.status == "budget_exceeded":
        return "budget"
    return answer_failure(verdict, path)


def answer_failure(verdict: Verdict, path: Trajectory) -> Failure | None:
    """The failure class of a run that ended with an answer: none when it is right, else how it went wrong."""
    if verdict.correct:
        return None
    if verdict.why == "no answer":
        return "no_answer"
    return "unknown_tool" if path.unknown_tools else "bad_tool_args" if path.invalid_args else "wrong_answer"


def read_paths(tool_runs: Sequence[str]) -> set[str]:
    """The files a run read, from its tool runs (`read_file:PATH`)."""
    return {run.split(":", 1)[1] for run in tool_runs if run.startswith("read_file:")}

"""Scoring: is the answer right (against truth from the files), was the trajectory sound, and if not, why.

Names are matched as whole file names; a file named in a negated clause ("access.log does not mention
it") is not counted as named. An answer that names a wrong file as *the* answer is wrong, hedging
included ("errors.log or access.log").
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Literal

from evals.suite import Check
from evals.truth import Truth
from harness.state import RunState
from harness.tools.base import Invalid, Registry
from wire.types import canonical

Failure = Literal[
    "wrong_answer", "no_answer", "bad_tool_args", "unknown_tool", "max_turns", "budget", "timeout", "provider_error"
]
HARNESS_FAILURES: frozenset[Failure] = frozenset({"provider_error"})
NUMBERS = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
]
NEGATION = re.compile(r"\b(?:not|no|none|never|neither|nor|without|cannot)\b|n't\b", re.IGNORECASE)
CLAUSE_END = re.compile(r"[.;!?](?=\s|$)|\n|\bbut\b|,\s*(?:while|whereas)\b", re.IGNORECASE)
COUNT = re.compile(r"\b(\d+|" + "|".join(NUMBERS) + r")\s+(?:\w+\s+)?files?\b", re.IGNORECASE)


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


def clauses(answer: str) -> list[str]:
    return [c for c in CLAUSE_END.split(answer) if c.strip()]


def names_in(answer: str, files: set[str]) -> tuple[set[str], set[str]]:
    """The files an answer affirms (named outside any negated clause) and those it names only negatively."""
    affirmed: set[str] = set()
    negated: set[str] = set()
    for clause in clauses(answer):
        for name in files:
            if re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", clause, re.IGNORECASE):
                (negated if NEGATION.search(clause) else affirmed).add(name)
    return affirmed, negated - affirmed


def words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def as_number(token: str) -> int:
    return int(token) if token.isdigit() else NUMBERS.index(token.lower())


def judge_names(answer: str, truth: Truth, files: set[str]) -> Verdict:
    affirmed, _ = names_in(answer, files)
    wrong = affirmed - truth.names
    if wrong:
        return Verdict(False, f"names {', '.join(sorted(wrong))}, which is not the answer")
    if not affirmed & truth.names:
        return Verdict(False, f"does not name {' or '.join(sorted(truth.names))}")
    return Verdict(True, "names the right file")


def judge_yes(answer: str, truth: Truth, files: set[str]) -> Verdict:
    says_no = bool(re.match(r"\s*no\b", answer, re.IGNORECASE)) or bool(
        re.search(r"\b(?:there is|there's) no\b|\bno file\b", answer, re.IGNORECASE)
    )
    if not truth.expect_yes:
        return Verdict(says_no, "says there is none" if says_no else "claims a file that does not exist")
    if says_no:
        return Verdict(False, "says no, but there is one")
    return judge_names(answer, truth, files)


def judge_count(answer: str, truth: Truth) -> Verdict:
    stated = {as_number(m.group(1)) for m in COUNT.finditer(answer)}
    if not stated:
        stated = {as_number(t) for t in words(answer) if t.isdigit() or t in NUMBERS} & {truth.count or 0}
    right = stated == {truth.count}
    return Verdict(right, f"says {sorted(stated) or 'no number'}; there are {truth.count}")


def judge_quote(answer: str, truth: Truth) -> Verdict:
    wanted = words(truth.quote or "")
    have = Counter(words(answer))
    recall = sum(1 for w in wanted if have[w] > 0) / max(1, len(wanted))
    return Verdict(recall >= 0.8, f"{recall:.0%} of the file's words are in the answer")


def judge_every(answer: str, truth: Truth, read: set[str]) -> Verdict:
    unread = truth.names - read
    if unread:
        return Verdict(False, f"never read {', '.join(sorted(unread))}")
    affirmed, negated = names_in(answer, set(truth.names))
    missing = truth.names - affirmed - negated
    return Verdict(
        not missing, f"does not mention {', '.join(sorted(missing))}" if missing else "read and reported every file"
    )


def judge(check: Check, truth: Truth, answer: str | None, files: set[str], read: set[str]) -> Verdict:
    if not answer or not answer.strip():
        return Verdict(False, "no answer")
    if check.kind in ("names_file", "largest_file"):
        return judge_names(answer, truth, files)
    if check.kind == "yes_names_file":
        return judge_yes(answer, truth, files)
    if check.kind == "file_count":
        return judge_count(answer, truth)
    if check.kind == "quotes_file":
        return judge_quote(answer, truth)
    return judge_every(answer, truth, read)


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
    if verdict.correct:
        return None
    if verdict.why == "no answer":
        return "no_answer"
    return "unknown_tool" if path.unknown_tools else "bad_tool_args" if path.invalid_args else "wrong_answer"


def read_paths(state: RunState) -> set[str]:
    return {run.split(":", 1)[1] for run in state.tool_runs if run.startswith("read_file:")}

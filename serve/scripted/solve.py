"""`solve`: a rule-based agent for plain file questions, the best trajectory a model could take.

It knows nothing about any workspace: every answer is derived from the tool results already in the
transcript (the listing from `list_files`, the contents from `read_file`), so pointed at another folder
it still answers correctly. It reads all the files it needs in one batch of calls. Questions are read
by what they ask (which file mentions something, how many files, the largest or smallest, what a named
file says, every file read, whether a file is about something), in whatever words they are asked.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass

from serve.scripted.script import Reply, Transcript, asks, call, text

LISTING_LINE = re.compile(r"^(?P<name>\S.*?)\s+\((?P<size>[\d,]+) bytes?\)\s*$")
PHRASAL_FORMS = ((re.compile(r"\btim(?:e|ed|es|ing)[\s-]+outs?\b"), "timeout"),)
STOP_WORDS = {
    "a", "an", "the", "any", "some", "of", "about", "to", "on", "for", "file", "files", "in", "it", "its", "thing",
    "anything", "something", "that", "which", "there", "is", "are", "with", "mention", "mentions", "word", "words",
    "line", "lines", "entry", "entries", "anywhere", "here", "folder", "directory", "record", "records",
}  # fmt: skip
FILE_NAME = r"(?P<s>[\w./-]+\.[A-Za-z0-9]{1,8})\b"
SUBJECT_VERBS = (
    r"(?:mentions?|mentioning|reports?|reporting|records?|recording|says?|saying|talks? about|talking about|"
    r"refers? to|referring to|"
    r"contains?|containing|discuss(?:es)?|discussing|(?:is|are) about|about|deals? with|covers?|has|have|notes?)"
)
PASSIVE = r"(?:mentioned|discussed|described|reported|written about|noted)\b"
EVERY_FILE = (
    r"\b(?:every|each|all)\b(?: of)?(?: the)? (?:files?|logs?|documents?)\b"
    r"|\bone by one\b|\bin each\b|\bgo through\b|\beach one\b|\bevery one\b|\beach of them\b"
)
YES_NO = r"^(?:is|are|do|does|has|have)\b[^?]*?\b(?:any|a|there)\b[^?]*?\b"
KINDS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(EVERY_FILE + r"|\bread (?:them|each|every|all)"), "read_all"),
    (re.compile(r"\b(?:read|open|show|print|display|cat|contents? of|tell me)\b[^?]*?\b" + FILE_NAME), "read"),
    (re.compile(r"\b(?:what|whats|what's)\b[^?]*?\b(?:in|does|is)\b[^?]*?\b" + FILE_NAME), "read"),
    (re.compile(r"\b" + FILE_NAME + r"\s+(?:says?|contains?|holds?)\b"), "read"),
    (re.compile(r"\bhow many\b|\bcount\b|\bnumber of\b"), "count"),
    (re.compile(r"\b(?P<s>largest|biggest|heaviest|smallest|tiniest|lightest)\b"), "size"),
    (re.compile(r"\bmost (?:space|bytes|room)\b"), "size"),
    (re.compile(YES_NO + SUBJECT_VERBS + r"\s+(?P<s>.+?)\??$"), "about"),
    (re.compile(r"^(?:is|are|was|were)\s+(?P<s>.+?)\s+" + PASSIVE), "about"),
    (re.compile(r"\b(?:where|in which files?)\b[^?]*?\b(?:is|are|was|were)\s+(?P<s>.+?)\s+" + PASSIVE), "mentions"),
    (re.compile(r"\b" + SUBJECT_VERBS + r"\s+(?P<s>.+?)\??$"), "mentions"),
)  # fmt: skip
SMALL = {"smallest", "tiniest", "lightest"}


@dataclass(frozen=True)
class Question:
    kind: str
    subject: str = ""


TRAILING_ASK = re.compile(r",?\s+and\s+(?:tell|give|name|say|show|let)\b.*$")


def parse_question(question: str) -> Question | None:
    lowered = " ".join(question.strip().lower().split())
    lowered = TRAILING_ASK.sub("", lowered.rstrip("?.!"))
    for pattern, kind in KINDS:
        found = pattern.search(lowered)
        if found:
            subject = (found.groupdict().get("s") or ("largest" if kind == "size" else "")).strip().rstrip("?.!")
            return Question(kind, re.sub(r"^(?:a|an|the)\s+", "", subject))
    return None


def size_of(value: object) -> int | None:
    """A listing's size as a whole number of bytes; anything else (1e999, "x", -1) is not a size."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    try:
        number = float(str(value).replace(",", ""))
    except ValueError:
        return None
    return int(number) if math.isfinite(number) and number >= 0 else None


def parse_listing(listing: str) -> dict[str, int]:
    """`name (N bytes)` lines, or a JSON list of {name, size}; anything else is ignored."""
    files: dict[str, int] = {}
    try:
        entries = json.loads(listing)
    except ValueError:
        entries = None
    if isinstance(entries, list):
        for entry in entries:
            size = size_of(entry.get("size")) if isinstance(entry, dict) else None
            if size is not None and isinstance(entry.get("name"), str):
                files[entry["name"]] = size
        return files
    for line in listing.splitlines():
        found = LISTING_LINE.match(line.strip())
        if found and (size := size_of(found["size"])) is not None:
            files[found["name"]] = size
    return files


def normalise(words: str) -> str:
    lowered = words.lower()
    for pattern, replacement in PHRASAL_FORMS:
        lowered = pattern.sub(replacement, lowered)
    return lowered


def stem(word: str) -> str:
    for suffix in ("ions", "ion", "ing", "ed", "es", "s", "e"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def stems(words: str) -> set[str]:
    return {stem(w) for w in re.findall(r"[a-z0-9]+", normalise(words)) if w not in STOP_WORDS}


def matching_line(content: str, subject: str) -> str | None:
    """The first line of `content` that mentions every content word of `subject`, if any."""
    wanted = stems(subject)
    if not wanted:
        return None
    if wanted <= stems(content):
        for line in content.splitlines():
            if wanted <= stems(line):
                return line.strip()
        return content.strip().splitlines()[0] if content.strip() else None
    return None


@dataclass(frozen=True)
class Evidence:
    listing: dict[str, int] | None
    contents: dict[str, str]
    attempted: set[str]

    @classmethod
    def gather(cls, t: Transcript) -> Evidence:
        listing: dict[str, int] | None = None
        contents: dict[str, str] = {}
        attempted: set[str] = set()
        for result in t.results():
            if result.name == "list_files" and not result.content.startswith("Error"):
                listing = parse_listing(result.content)
            elif result.name == "read_file":
                path = str(result.arguments.get("path", ""))
                attempted.add(path)
                if not result.content.startswith("Error"):
                    contents[path] = result.content
        return cls(listing, contents, attempted)

    def unread(self) -> list[str]:
        return [name for name in self.listing or {} if name not in self.attempted]


def read_batch(t: Transcript, paths: list[str]) -> Reply:
    return asks(*(call(f"s{t.turn}_{i}", "read_file", path=path) for i, path in enumerate(paths)))


def hits(q: Question, e: Evidence) -> list[tuple[str, str]]:
    return [(name, line) for name in e.contents if (line := matching_line(e.contents[name], q.subject))]


def answer_mentions(q: Question, e: Evidence) -> str:
    found = hits(q, e)
    if not found:
        return f"No file mentions {q.subject}."
    if len(found) == 1:
        name, line = found[0]
        return f'{name} mentions {q.subject}: "{line}"'
    return f"{' and '.join(name for name, _ in found)} mention {q.subject}."


def answer_about(q: Question, e: Evidence) -> str:
    found = hits(q, e)
    if not found:
        return f"No, no file is about {q.subject}."
    name, line = found[0]
    return f'Yes: {name} is about {q.subject}. It says: "{line}"'


def answer_count(_: Question, e: Evidence) -> str:
    names = list(e.listing or {})
    return f"There are {len(names)} files: {', '.join(names)}."


def answer_size(q: Question, e: Evidence) -> str:
    listing = e.listing or {}
    if not listing:
        return "The directory is empty."
    pick = min if q.subject in SMALL else max
    name = pick(listing, key=lambda n: (listing[n], n))
    return f"The {q.subject} file is {name} ({listing[name]:,} bytes)."


def answer_read(q: Question, e: Evidence) -> str:
    content = e.contents.get(q.subject)
    if content is None:
        return f"I could not read {q.subject}."
    return f"{q.subject} says: {content.strip()}"


def answer_read_all(_: Question, e: Evidence) -> str:
    lines = [f"- {name}: {(e.contents[name].strip().splitlines() or [''])[0]}" for name in e.contents]
    return f"I listed {len(e.listing or {})} files and read each one:\n" + "\n".join(lines)


ANSWERS: dict[str, Callable[[Question, Evidence], str]] = {
    "mentions": answer_mentions,
    "about": answer_about,
    "count": answer_count,
    "size": answer_size,
    "read": answer_read,
    "read_all": answer_read_all,
}
NEEDS_CONTENTS = {"mentions", "about", "read_all"}


def solve(t: Transcript) -> Reply:
    question = parse_question(t.question)
    if question is None:
        return text("I can only answer plain questions about the files in the workspace.")
    evidence = Evidence.gather(t)
    if question.kind == "read":
        if question.subject not in evidence.attempted:
            return read_batch(t, [question.subject])
    elif evidence.listing is None:
        if t.turn > 0 and any(r.name == "list_files" for r in t.results()):
            return text("I could not list the files.")
        return asks(call(f"s{t.turn}_0", "list_files"))
    elif question.kind in NEEDS_CONTENTS and evidence.unread():
        return read_batch(t, evidence.unread())
    return text(ANSWERS[question.kind](question, evidence))


def answer_now(t: Transcript) -> str:
    """The best answer from what has been looked at so far, when no more tools may be called."""
    question = parse_question(t.question)
    evidence = Evidence.gather(t)
    if question is None:
        return "I can only answer plain questions about the files in the workspace."
    needs_listing = question.kind in ("count", "size") and evidence.listing is None
    if needs_listing or (question.kind != "read" and question.kind in NEEDS_CONTENTS and not evidence.contents):
        return "I cannot tell yet: I have not looked at the files."
    return ANSWERS[question.kind](question, evidence)


def forced_call(t: Transcript, name: str | None) -> Reply:
    """What `solve` does when a call is required that it would not make: look at something it has not seen;
    made to read when it has seen everything, it reads again what it read."""
    evidence = Evidence.gather(t)
    question = parse_question(t.question)
    wanted = [question.subject] if question and question.kind == "read" else []
    fresh = [p for p in [*wanted, *evidence.unread()] if p not in evidence.attempted][:1]
    if name != "list_files" and fresh:
        return read_batch(t, fresh)
    if name in (None, "list_files") or not (seen := [*wanted, *sorted(evidence.attempted)]):
        return asks(call(f"s{t.turn}_0", "list_files"))
    return read_batch(t, seen[:1])

"""`solve`: a rule-based agent for plain file questions, the best trajectory a model could take.

It knows nothing about any workspace: every answer is derived from the tool results already in the
transcript (the listing from `list_files`, the contents from `read_file`), so pointed at another folder
it still answers correctly. It reads all the files it needs in one batch of calls.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass

from serve.scripted.script import Reply, Transcript, asks, call, text

LISTING_LINE = re.compile(r"^(?P<name>\S.*?)\s+\((?P<size>[\d,]+) bytes?\)\s*$")
PHRASAL_FORMS = ((re.compile(r"\btim(?:e|ed|es|ing)[\s-]+outs?\b"), "timeout"),)
STOP_WORDS = {"a", "an", "the", "any", "some", "of", "about", "to", "on", "for", "file", "files"}


@dataclass(frozen=True)
class Question:
    kind: str
    subject: str = ""


QUESTION_FORMS: tuple[tuple[re.Pattern[str], str], ...] = (
    (
        re.compile(r"\bwhich files? (?:mentions?|contains?|refers? to|talks? about|says?) (?P<s>.+?)\??$"),
        "mentions",
    ),
    (re.compile(r"\bhow many files\b"), "count"),
    (re.compile(r"\bread (?P<s>[\w./-]+\.\w+)\b"), "read"),
    (re.compile(r"\bwhat does (?P<s>[\w./-]+\.\w+) say\b"), "read"),
    (re.compile(r"\blist the files and (?:then )?read (?:each|every|all)"), "read_all"),
    (re.compile(r"\bwhich file is the (?P<s>largest|biggest|smallest)\b"), "size"),
    (re.compile(r"\bis there (?:a|any) file (?:about|on|for|that mentions) (?P<s>.+?)\??$"), "about"),
)


def parse_question(question: str) -> Question | None:
    lowered = question.strip().lower()
    for pattern, kind in QUESTION_FORMS:
        found = pattern.search(lowered)
        if found:
            return Question(kind, found.groupdict().get("s") or "")
    return None


def parse_listing(listing: str) -> dict[str, int]:
    """`name (N bytes)` lines, or a JSON list of {name, size}; anything else is ignored."""
    try:
        entries = json.loads(listing)
        return {str(e["name"]): int(e["size"]) for e in entries}
    except (ValueError, TypeError, KeyError):
        pass
    files = {}
    for line in listing.splitlines():
        found = LISTING_LINE.match(line.strip())
        if found:
            files[found["name"]] = int(found["size"].replace(",", ""))
    return files


def normalise(words: str) -> str:
    lowered = words.lower()
    for pattern, replacement in PHRASAL_FORMS:
        lowered = pattern.sub(replacement, lowered)
    return lowered


def stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s", "e"):
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


def answer_mentions(q: Question, e: Evidence) -> str:
    subject = re.sub(r"^(?:a|an|the) ", "", q.subject)
    hits = [(name, line) for name in e.contents if (line := matching_line(e.contents[name], subject))]
    if not hits:
        return f"No file mentions {subject}."
    if len(hits) == 1:
        name, line = hits[0]
        return f'{name} mentions {subject}: "{line}"'
    return f"{' and '.join(name for name, _ in hits)} mention {subject}."


def answer_about(q: Question, e: Evidence) -> str:
    hits = [(name, line) for name in e.contents if (line := matching_line(e.contents[name], q.subject))]
    if not hits:
        return f"No, no file is about {q.subject}."
    name, line = hits[0]
    return f'Yes: {name} is about {q.subject}. It says: "{line}"'


def answer_count(_: Question, e: Evidence) -> str:
    names = list(e.listing or {})
    return f"There are {len(names)} files: {', '.join(names)}."


def answer_size(q: Question, e: Evidence) -> str:
    listing = e.listing or {}
    if not listing:
        return "The directory is empty."
    pick = min if q.subject == "smallest" else max
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
